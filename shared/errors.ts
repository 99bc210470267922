/**
 * Typed errors. Domain code throws these; the one error middleware
 * (shared/http/middleware.ts) turns them into the response envelope of the API in question.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'api_error';

export const STATUS_OF: Record<ErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  rate_limit_error: 429,
  api_error: 500,
};

export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  readonly type: ErrorType;
  readonly code: string;
  readonly details: { fieldErrors: FieldErrors } | undefined;
  /** Overrides the status implied by `type` (413 for an oversized body, 405, ...). */
  readonly statusOverride: number | undefined;

  constructor(
    type: ErrorType,
    code: string,
    message: string,
    opts: { fieldErrors?: FieldErrors; status?: number } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.type = type;
    this.code = code;
    this.details = opts.fieldErrors ? { fieldErrors: opts.fieldErrors } : undefined;
    this.statusOverride = opts.status;
  }

  get status(): number {
    return this.statusOverride ?? STATUS_OF[this.type];
  }
}

export class ValidationError extends ApiError {
  constructor(message: string, fieldErrors: FieldErrors) {
    super('invalid_request_error', 'validation_error', message, { fieldErrors });
    this.name = 'ValidationError';
  }
}

export class ParameterMissing extends ApiError {
  constructor(message: string, fieldErrors?: FieldErrors) {
    super('invalid_request_error', 'parameter_missing', message, fieldErrors ? { fieldErrors } : {});
    this.name = 'ParameterMissing';
  }
}

export class InvalidJson extends ApiError {
  constructor(message = 'The request body is not valid JSON.') {
    super('invalid_request_error', 'invalid_json', message);
    this.name = 'InvalidJson';
  }
}

export class PayloadTooLarge extends ApiError {
  constructor(limitBytes: number) {
    super('invalid_request_error', 'body_too_large', `The request body exceeds ${limitBytes} bytes.`, { status: 413 });
    this.name = 'PayloadTooLarge';
  }
}

export class AuthenticationError extends ApiError {
  constructor(message = 'Missing or invalid Bearer token.') {
    // The spec's sample code for every missing or invalid Core API token.
    super('authentication_error', 'unauthorized_no_client_id_in_jwt', message);
    this.name = 'AuthenticationError';
  }
}

export class PermissionError extends ApiError {
  constructor(message: string) {
    super('permission_error', 'insufficient_scope', message);
    this.name = 'PermissionError';
  }
}

export class NotFoundError extends ApiError {
  constructor(code: string, message: string) {
    super('not_found_error', code, message);
    this.name = 'NotFoundError';
  }
}

/** The spec names `item_not_found` for a missing item and shows it for a missing event too. */
export class ItemNotFound extends NotFoundError {
  constructor(id: string | number) {
    super('item_not_found', `No item with id ${id}.`);
    this.name = 'ItemNotFound';
  }
}

export class EventNotFound extends NotFoundError {
  constructor(id: string | number) {
    super('item_not_found', `No event with id ${id}.`);
    this.name = 'EventNotFound';
  }
}

export class ConflictError extends ApiError {
  constructor(code: string, message: string) {
    super('conflict_error', code, message);
    this.name = 'ConflictError';
  }
}

export class RateLimitError extends ApiError {
  constructor(message = 'Too many requests.') {
    super('rate_limit_error', 'rate_limited', message);
    this.name = 'RateLimitError';
  }
}
