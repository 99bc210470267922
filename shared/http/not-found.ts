import { ApiError } from '../errors.ts';
import { routes } from '../routes.ts';
import { baseChain } from './base.ts';
import { compile, matchPath } from './route-match.ts';
import type { ApiContext, HttpEvent, HttpResult } from './types.ts';

const compiled = routes.map(compile);

/** RFC 9110 §15.5.6: a 405 lists the methods the resource takes in `Allow`. */
const methodNotAllowed = (code: string, method: string, path: string, allowed: string[]) =>
  new ApiError('invalid_request_error', code, `${method} is not allowed on ${path}; use ${allowed.join(', ')}.`, { status: 405, headers: { allow: allowed.join(', ') } });

/** Another method on the token endpoint: a 405 in its own (RFC 6749) envelope. */
const tokenMethodNotAllowed = baseChain('oauth').handler(async (event: HttpEvent): Promise<HttpResult> => {
  const { method, path } = event.requestContext.http;
  throw methodNotAllowed('invalid_request', method, path, ['POST']);
});

/** Whether `path` is the token endpoint's (it shares the Core API's host). */
const isTokenPath = (path: string) => compiled.some((c) => c.route.api === 'auth' && matchPath(c, path));

/** The `$default` route of an API: 405 for a known path with another method, else 404. */
export function notFoundHandler(api: 'core' | 'platform') {
  const handler = baseChain(api).handler(async (event: HttpEvent): Promise<HttpResult> => {
    const { method, path } = event.requestContext.http;
    // Public routes are on both APIs.
    // Each method once: a path two routes match (`/api/models/compare` is also a `{version}`) takes GET once.
    const allowed = [...new Set(compiled.filter((c) => (c.route.api === api || c.route.api === 'public') && matchPath(c, path)).map((c) => c.route.method))];
    if (allowed.length > 0) throw methodNotAllowed('method_not_allowed', method, path, allowed);
    throw new ApiError('not_found_error', 'route_not_found', `No route ${method} ${path}.`);
  });
  if (api === 'platform') return handler;
  // The token path answers in its own chain, not one nested in the Core API's.
  return (event: HttpEvent, context: ApiContext): Promise<HttpResult> => (isTokenPath(event.requestContext.http.path) ? tokenMethodNotAllowed : handler)(event, context);
}
