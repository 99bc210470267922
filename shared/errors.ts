/**
 * Errors of the HTTP surface (a malformed request, authentication, scopes, rate limits) as
 * `ApiError`s with their type and status; the domain's own errors (not found, conflict, a state
 * that forbids the change, unusable input) are in shared/domain/errors.ts, re-exported here under
 * the names code throws them by. The one error mapping (shared/http/error-mapping.ts) gives both
 * the response envelope of the API in question.
 */
import type { FieldErrors } from './domain/errors.ts';
export { EventNotFound, ItemNotFound } from './domain/errors.ts';
export type { FieldErrors };
export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'conflict_error' | 'rate_limit_error' | 'api_error';

export const STATUS_OF: Record<ErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  rate_limit_error: 429,
  api_error: 500,
};

export class ApiError extends Error {
  readonly type: ErrorType;
  readonly code: string;
  readonly details: { fieldErrors: FieldErrors } | undefined;
  /** Overrides the status implied by `type` (413 for an oversized body, 405, ...). */
  readonly statusOverride: number | undefined;
  /** Response headers the error's status calls for (a 405's `Allow`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(type: ErrorType, code: string, message: string, opts: { fieldErrors?: FieldErrors; status?: number; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = new.target.name;
    this.type = type;
    this.code = code;
    this.details = opts.fieldErrors ? { fieldErrors: opts.fieldErrors } : undefined;
    this.statusOverride = opts.status;
    this.headers = opts.headers ?? {};
  }

  get status(): number {
    return this.statusOverride ?? STATUS_OF[this.type];
  }
}

export class ValidationError extends ApiError {
  constructor(message: string, fieldErrors: FieldErrors) {
    super('invalid_request_error', 'validation_error', message, { fieldErrors });
  }
}

export class ParameterMissing extends ApiError {
  constructor(message: string, fieldErrors?: FieldErrors) {
    super('invalid_request_error', 'parameter_missing', message, fieldErrors ? { fieldErrors } : {});
  }
}

export class InvalidJson extends ApiError {
  constructor(message = 'The request body is not valid JSON.') {
    super('invalid_request_error', 'invalid_json', message);
  }
}

export class PayloadTooLarge extends ApiError {
  constructor(limitBytes: number) {
    super('invalid_request_error', 'body_too_large', `The request body exceeds ${limitBytes} bytes.`, { status: 413 });
  }
}

export class AuthenticationError extends ApiError {
  /** `headers`: sent with the 401 (a console session ended by its check clears its cookie). */
  constructor(message = 'Missing or invalid Bearer token.', headers?: Record<string, string>) {
    // The spec's sample code for every missing or invalid Core API token.
    super('authentication_error', 'unauthorized_no_client_id_in_jwt', message, headers ? { headers } : {});
  }
}

/**
 * The challenge of a 401 for a Bearer token or API key that was sent and refused (malformed,
 * forged, expired, of a deleted client, a revoked key): RFC 6750 §3.1's `invalid_token`, which
 * tells an OAuth client to get a new token. A request that sent none (or another scheme) gets a
 * bare `Bearer` (RFC 6750 §3: no error code), as every other 401 of the APIs.
 */
export const INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token"';

/** A 401 for a Bearer credential that was sent and is not valid (see INVALID_TOKEN_CHALLENGE). */
export const invalidToken = (message: string): AuthenticationError => new AuthenticationError(message, { 'www-authenticate': INVALID_TOKEN_CHALLENGE });

/**
 * A 401 for an Authorization header of the Bearer scheme whose syntax is not `Bearer <one value>`
 * (RFC 6750 §2.1): `invalid_token` with an `error_description` that names the problem.
 */
export const malformedBearer = (message: string): AuthenticationError =>
  new AuthenticationError(message, { 'www-authenticate': `${INVALID_TOKEN_CHALLENGE}, error_description="The Authorization header is malformed: expected Bearer and one token"` });

export class PermissionError extends ApiError {
  /**
   * `scopes`: a Bearer token's or API key's refusal for want of a scope, which carries the challenge
   * RFC 6750 §3.1 describes, `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`
   * (the scopes that would do). A console session's refusals have none: they are no Bearer request.
   */
  constructor(message: string, scopes?: readonly string[]) {
    super('permission_error', 'insufficient_scope', message, scopes ? { headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"` } } : {});
  }
}

export class RateLimitError extends ApiError {
  constructor(message = 'Too many requests.', headers: Record<string, string> = {}) {
    super('rate_limit_error', 'rate_limited', message, { headers });
  }
}
