/**
 * `@recsearch/client`: typed clients for the recsearch Core API (`CoreClient`, OAuth 2.0 client
 * credentials) and Platform API (`PlatformClient`, API key), on openapi-fetch with types
 * generated from docs/openapi.json (`src/schema.ts`, `npm run client:types`).
 */
export { CoreClient, type CoreClientOptions } from './core.ts';
export { PlatformClient, type PlatformClientOptions } from './platform.ts';
export { ApiError, typeForStatus, type CoreErrorType, type ErrorSource } from './errors.ts';
export { Paginator, type Page } from './paginate.ts';
export { TokenManager, type TokenOptions } from './token.ts';
export { Transport, retryAfterMs, type FetchLike, type RetryOptions, type RetryMode, type Authorizer } from './transport.ts';
export type { Answered, CallOptions, CreateOptions, ResponseInfo } from './call.ts';
export type * from './types.ts';
export type { paths, components, operations } from './schema.ts';
