import { ApiError } from '../errors.ts';
import { routes } from '../routes.ts';
import { baseChain } from './base.ts';
import { compile, matchPath } from './route-match.ts';
import type { HttpEvent, HttpResult } from './types.ts';

const compiled = routes.map(compile);

/** The `$default` route of an API: 405 for a known path with another method, else 404. */
export function notFoundHandler(api: 'core' | 'platform') {
  return baseChain(api).handler(async (event: HttpEvent): Promise<HttpResult> => {
    const { method, path } = event.requestContext.http;
    // The token endpoint shares the Core API's host: another method on it is a 405 there too;
    // public routes are on both APIs.
    const allowed = compiled.filter((c) => (c.route.api === api || c.route.api === 'public' || (api === 'core' && c.route.api === 'auth')) && matchPath(c, path)).map((c) => c.route.method);
    if (allowed.length > 0) {
      // RFC 9110 §15.5.6: a 405 lists the methods the resource takes in `Allow`.
      throw new ApiError('invalid_request_error', 'method_not_allowed', `${method} is not allowed on ${path}; use ${allowed.join(', ')}.`, { status: 405, headers: { allow: allowed.join(', ') } });
    }
    throw new ApiError('not_found_error', 'route_not_found', `No route ${method} ${path}.`);
  });
}
