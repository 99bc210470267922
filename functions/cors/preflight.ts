import { baseChain } from '#shared/http/base';
import { CORS_ALLOW_HEADERS, NO_CONTENT, baseHeaders } from '#shared/http/respond';
import type { ApiContext, HttpEvent, HttpResult } from '#shared/http/types';
import { routes } from '#shared/routes';

/** OPTIONS preflight for every Core API path: no token needed, methods from the route table. */
export const handler = baseChain('core').handler(async (event: HttpEvent, context: ApiContext): Promise<HttpResult> => {
  const path = event.routeKey.replace(/^OPTIONS /, '');
  const methods = [...new Set(routes.filter((r) => r.api === 'core' && r.method !== 'OPTIONS' && r.path === path).map((r) => r.method))];
  // No body: no content type either.
  const { 'content-type': _none, ...base } = baseHeaders('core', context.state.requestId);
  return {
    statusCode: NO_CONTENT,
    headers: {
      ...base,
      'access-control-allow-methods': methods.join(', '),
      'access-control-allow-headers': CORS_ALLOW_HEADERS,
      'access-control-max-age': '600',
    },
    body: '',
  };
});
