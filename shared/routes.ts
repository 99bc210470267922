/**
 * The one route table. The local server (shared/local/server.ts) and the CDK stack (lib/)
 * both read it, so they cannot disagree about which endpoints exist.
 * `handler` is a module under functions/ (without extension) exporting `handler`.
 */
export type CoreScope = 'service-api/read' | 'service-api/write';
export type PlatformScope = 'admin' | 'events' | 'items' | 'recommendations';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'OPTIONS';

export const CORE_SCOPES: readonly CoreScope[] = ['service-api/read', 'service-api/write'];
export const PLATFORM_SCOPES: readonly PlatformScope[] = ['admin', 'events', 'items', 'recommendations'];

interface RouteBase {
  method: HttpMethod;
  path: string;
  handler: string;
}
export interface CoreRoute extends RouteBase {
  api: 'core';
  /** undefined only for the CORS preflight route. */
  scope: CoreScope | undefined;
}
export interface PlatformRoute extends RouteBase {
  api: 'platform';
  /** Key scopes allowed in addition to `admin`, which may call every route. */
  scopes: readonly PlatformScope[];
}
/** The token endpoint: served by Cognito on AWS, by this handler locally. */
export interface AuthRoute extends RouteBase {
  api: 'auth';
}
export type Route = CoreRoute | PlatformRoute | AuthRoute;

const core = (method: HttpMethod, path: string, handler: string, scope: CoreScope): CoreRoute => ({
  api: 'core', method, path, handler, scope,
});
const platform = (method: HttpMethod, path: string, handler: string, scopes: PlatformScope[] = []): PlatformRoute => ({
  api: 'platform', method, path, handler, scopes: ['admin', ...scopes],
});

const R = 'service-api/read';
const W = 'service-api/write';

const coreRoutes: CoreRoute[] = [
  core('POST', '/v1/items', 'items/create', W),
  core('GET', '/v1/items', 'items/list', R),
  core('GET', '/v1/items/{item_id}', 'items/get', R),
  core('POST', '/v1/items/{item_id}', 'items/update', W),
  core('PATCH', '/v1/items/{item_id}', 'items/update', W),
  core('DELETE', '/v1/items/{item_id}', 'items/delete', W),
  core('POST', '/v1/events', 'events/ingest', W),
  core('GET', '/v1/events', 'events/list', R),
  core('GET', '/v1/events/{event_id}', 'events/get', R),
];

/** Every Core path answers OPTIONS preflight without a token. */
const preflightRoutes: CoreRoute[] = [...new Set(coreRoutes.map((r) => r.path))].map((path) => ({
  api: 'core', method: 'OPTIONS', path, handler: 'cors/preflight', scope: undefined,
}));

const platformRoutes: PlatformRoute[] = [
  platform('POST', '/api/clients', 'platform/clients-create'),
  platform('GET', '/api/clients', 'platform/clients-list'),
  platform('DELETE', '/api/clients/{client_id}', 'platform/clients-delete'),
  platform('POST', '/api/api-keys', 'platform/api-keys-create'),
  platform('GET', '/api/api-keys', 'platform/api-keys-list'),
  platform('DELETE', '/api/api-keys/{id}', 'platform/api-keys-delete'),
];

const authRoutes: AuthRoute[] = [{ api: 'auth', method: 'POST', path: '/oauth2/token', handler: 'auth/token' }];

export const routes: readonly Route[] = [...coreRoutes, ...preflightRoutes, ...platformRoutes, ...authRoutes];

/** Handler modules answering paths that match no route, per API. */
export const notFoundHandlers = { core: 'errors/not-found-core', platform: 'errors/not-found-platform' } as const;

export function routeFor(handler: string, method?: HttpMethod): Route {
  const r = routes.find((x) => x.handler === handler && (method === undefined || x.method === method));
  if (!r) throw new Error(`No route uses handler ${handler}`);
  return r;
}

/** API Gateway style route key, e.g. `GET /v1/items/{item_id}`. */
export const routeKey = (r: Route): string => `${r.method} ${r.path}`;
