import { ApiError } from '../errors.ts';
import { routes } from '../routes.ts';
import { baseChain } from './base.ts';
import { compile, matchPath } from './route-match.ts';
import type { HttpEvent, HttpResult } from './types.ts';

const compiled = routes.map(compile);

/** RFC 9110 §15.5.6: a 405 lists the methods the resource takes in `Allow`. */
const methodNotAllowed = (code: string, method: string, path: string, allowed: string[]) =>
  new ApiError('invalid_request_error', code, `${method} is not allowed on ${path}; use ${allowed.join(', ')}.`, { status: 405, headers: { allow: allowed.join(', ') } });

/** Another method on the token endpoint: a 405 in its own (RFC 6749) envelope. */
const tokenMethodNotAllowed = baseChain('oauth').handler(async (event: HttpEvent): Promise<HttpResult> => {
  const { method, path } = event.requestContext.http;
  throw methodNotAllowed('invalid_request', method, path, ['POST']);
});

/** The `$default` route of an API: 405 for a known path with another method, else 404. */
export function notFoundHandler(api: 'core' | 'platform') {
  return baseChain(api).handler(async (event: HttpEvent, context): Promise<HttpResult> => {
    const { method, path } = event.requestContext.http;
    // The token endpoint shares the Core API's host; public routes are on both APIs.
    const matching = compiled.filter((c) => (c.route.api === api || c.route.api === 'public' || (api === 'core' && c.route.api === 'auth')) && matchPath(c, path));
    if (matching.length > 0 && matching.every((c) => c.route.api === 'auth')) return tokenMethodNotAllowed(event, context);
    if (matching.length > 0)
      throw methodNotAllowed(
        'method_not_allowed',
        method,
        path,
        matching.map((c) => c.route.method),
      );
    throw new ApiError('not_found_error', 'route_not_found', `No route ${method} ${path}.`);
  });
}
