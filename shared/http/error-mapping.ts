import { Conflict, DomainError, InvalidInput, NotFound, PreconditionFailed, Unauthenticated } from '../domain/errors.ts';
import { serviceBusy } from '../data/busy.ts';
import { ApiError, type ErrorType } from '../errors.ts';

/** The API's error type of each kind of domain error (its status follows: 404, 409, 400, 401). */
function typeOf(e: DomainError): ErrorType {
  if (e instanceof NotFound) return 'not_found_error';
  if (e instanceof Conflict) return 'conflict_error';
  if (e instanceof PreconditionFailed || e instanceof InvalidInput) return 'invalid_request_error';
  if (e instanceof Unauthenticated) return 'authentication_error';
  return 'api_error';
}

/**
 * The one error mapping: an error as the API answers it (type, status, code, message, field
 * details), or undefined for an error nobody anticipated (the envelope answers a 500 that leaks
 * nothing). Domain errors keep their code and message. The table refusing for load, after the
 * client's retries, is a 503 to retry (until 2026-12-07 a 500, as if unexpected).
 */
export function apiErrorOf(e: unknown): ApiError | undefined {
  if (e instanceof ApiError) return e;
  if (serviceBusy(e)) return new ApiError('api_error', 'unavailable', 'The service is busy right now; retry in a second.', { status: 503, headers: { 'retry-after': '1' } });
  if (!(e instanceof DomainError)) return undefined;
  const fieldErrors = e instanceof InvalidInput ? e.fieldErrors : undefined;
  return new ApiError(typeOf(e), e.code, e.message, fieldErrors ? { fieldErrors } : {});
}

/** The HTTP status an error answers with (500 for the unanticipated). */
export const statusOf = (e: unknown): number => apiErrorOf(e)?.status ?? 500;
