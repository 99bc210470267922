import type { components } from './schema.ts';

/** The Core API's error types (`error.type` of the envelope), from the OpenAPI document. */
export type CoreErrorType = components['schemas']['CoreError']['error']['type'];
/** Which interface answered: the Core envelope, the Platform `{ error }` or the token endpoint's RFC 6749 error. */
export type ErrorSource = 'core' | 'platform' | 'oauth';

type CoreEnvelope = components['schemas']['CoreError'];
type PlatformEnvelope = components['schemas']['PlatformError'];
type OAuthEnvelope = components['schemas']['OAuthError'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCoreEnvelope = (v: unknown): v is CoreEnvelope =>
  isObject(v) && isObject(v.error) && typeof v.error.type === 'string' && typeof v.error.code === 'string' && typeof v.error.message === 'string';
const isPlatformEnvelope = (v: unknown): v is PlatformEnvelope => isObject(v) && typeof v.error === 'string' && !('error_description' in v);
const isOAuthEnvelope = (v: unknown): v is OAuthEnvelope => isObject(v) && typeof v.error === 'string';
/** API Gateway's own answer (its throttle's 429, a failed function's 500): `{ "message": "..." }`. */
const isGatewayMessage = (v: unknown): v is { message: string } => isObject(v) && typeof v.message === 'string' && !('error' in v);

/** The spec's status mapping, for answers that carry no `error.type` (Platform, token endpoint, proxies). */
export function typeForStatus(status: number): CoreErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}

/**
 * A non-2xx answer. For the Core API every field comes from its error envelope
 * (`{ error: { type, code, message, details?, request_id } }`); `param` is the first field named in
 * `details.fieldErrors`. Platform answers (`{ error: "message" }`) and the token endpoint
 * (`{ error, error_description }`) carry no type: it is derived from the status as the spec maps it,
 * and `request_id` is the `X-Request-Id` header.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: CoreErrorType;
  /** Machine code: the Core `error.code`, the token endpoint's `error`, or `http_<status>` for Platform answers. */
  readonly code: string;
  /** The first invalid field of a validation error (`details.fieldErrors`), e.g. `name` or `3.user_id`. */
  readonly param: string | undefined;
  readonly request_id: string | undefined;
  /** `details.fieldErrors` of a Core validation error. */
  readonly fieldErrors: Record<string, string[]> | undefined;
  readonly source: ErrorSource;
  /** The parsed body as received. */
  readonly body: unknown;
  readonly headers: Headers;

  constructor(init: {
    status: number;
    type: CoreErrorType;
    code: string;
    message: string;
    param?: string | undefined;
    request_id?: string | undefined;
    fieldErrors?: Record<string, string[]> | undefined;
    source: ErrorSource;
    body?: unknown;
    headers?: Headers;
  }) {
    super(init.message);
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param;
    this.request_id = init.request_id;
    this.fieldErrors = init.fieldErrors;
    this.source = init.source;
    this.body = init.body;
    this.headers = init.headers ?? new Headers();
  }

  /** Builds the error of a response whose body was parsed (JSON when it could be, else its text). */
  static from(response: Response, body: unknown, source: ErrorSource): ApiError {
    const headerId = response.headers.get('x-request-id') ?? undefined;
    const base = { status: response.status, body, headers: response.headers };
    if (isCoreEnvelope(body)) {
      const e = body.error;
      const fieldErrors = e.details?.fieldErrors;
      return new ApiError({
        ...base,
        source: 'core',
        type: e.type,
        code: e.code,
        message: e.message,
        param: fieldErrors ? Object.keys(fieldErrors)[0] : undefined,
        fieldErrors,
        request_id: e.request_id ?? headerId,
      });
    }
    if (source !== 'oauth' && isPlatformEnvelope(body)) {
      return new ApiError({ ...base, source, type: typeForStatus(response.status), code: `http_${response.status}`, message: body.error, request_id: headerId });
    }
    if (isOAuthEnvelope(body)) {
      return new ApiError({
        ...base,
        source,
        type: typeForStatus(response.status),
        code: body.error,
        message: body.error_description ?? body.error,
        request_id: headerId,
      });
    }
    // API Gateway's own words (over HTTP/2 there is no status text to fall back on).
    if (isGatewayMessage(body)) return new ApiError({ ...base, source, type: typeForStatus(response.status), code: `http_${response.status}`, message: body.message, request_id: headerId });
    const text = typeof body === 'string' && body ? body.slice(0, 200) : response.statusText || `HTTP ${response.status}`;
    return new ApiError({ ...base, source, type: typeForStatus(response.status), code: `http_${response.status}`, message: text, request_id: headerId });
  }
}
