import { ConditionalCheckFailedException, ProvisionedThroughputExceededException, ThrottlingException, TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { Conflict, DomainError, errorMessage, InvalidInput, ItemNotFound, MissingInput, PreconditionFailed, Unauthenticated } from '../../shared/domain/errors.ts';
import { AwsHttpError } from '../../shared/aws/signed-fetch.ts';
import { ApiError } from '../../shared/errors.ts';
import { apiErrorOf, statusOf } from '../../shared/http/error-mapping.ts';

// The one error mapping: each domain error's type and status as docs/api.md's error table has them.

describe('the error mapping', () => {
  it.each([
    ['a missing thing', new ItemNotFound(7), 'not_found_error', 404, 'item_not_found'],
    ['a clash', new Conflict('item_exists', 'taken'), 'conflict_error', 409, 'item_exists'],
    ['a state that forbids it', new PreconditionFailed('Published'), 'invalid_request_error', 400, 'invalid_state'],
    ['unusable input', new InvalidInput('bad'), 'invalid_request_error', 400, 'validation_error'],
    ['missing input', new MissingInput('need it'), 'invalid_request_error', 400, 'parameter_missing'],
    ['a credential not issued here', new Unauthenticated('who?'), 'authentication_error', 401, 'unauthorized_no_client_id_in_jwt'],
    ['a domain error of no known kind', new DomainError('odd', 'odd'), 'api_error', 500, 'odd'],
  ])('answers %s with its type, status and code, and its message', (_what, e, type, status, code) => {
    expect(apiErrorOf(e)).toMatchObject({ type, status, code, message: e.message });
    expect(statusOf(e)).toBe(status);
  });

  it('keeps the field errors of unusable input, and an ApiError as it is', () => {
    expect(apiErrorOf(new InvalidInput('bad', { name: ['is required'] }))?.details).toEqual({ fieldErrors: { name: ['is required'] } });
    expect(apiErrorOf(new InvalidInput('bad'))?.details).toBeUndefined();
    const api = new ApiError('invalid_request_error', 'body_too_large', 'big', { status: 413 });
    expect(apiErrorOf(api)).toBe(api);
    expect(statusOf(api)).toBe(413);
  });

  it('leaves an error nobody anticipated to the 500 that leaks nothing', () => {
    expect(apiErrorOf(new Error('boom'))).toBeUndefined();
    expect(apiErrorOf('boom')).toBeUndefined();
    expect(statusOf(new TypeError('x'))).toBe(500);
  });

  it("answers the table's refusals for load, once the retries ran out, with a 503 to retry after a second", () => {
    // Until 2026-12-07 a 500, as if unexpected.
    const $metadata = {};
    const cancelled = (...codes: string[]) => new TransactionCanceledException({ message: 'Transaction cancelled', $metadata, CancellationReasons: codes.map((Code) => ({ Code })) });
    for (const e of [
      new ThrottlingException({ message: 'Rate exceeded', $metadata }),
      new ProvisionedThroughputExceededException({ message: 'exceeded', $metadata }),
      cancelled('None', 'ThrottlingError'),
      cancelled('TransactionConflict', 'None'),
      // A single write meeting another's transaction on its item, after the retries (shared/data/signed.ts; the
      // SDK's put and delete retry none): refused as the transaction cancelled for it is, not a 500.
      new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata }),
    ]) {
      expect(apiErrorOf(e), e.message).toMatchObject({ type: 'api_error', status: 503, code: 'unavailable', headers: { 'retry-after': '1' } });
    }
    // The other services a request calls, refusing for load after their retries: S3's and Cognito's by
    // the signed calls' code, SQS's and Bedrock's by the SDK's name (until 2026-12-07 each a 500).
    for (const e of [
      new AwsHttpError(503, 'SlowDown', 'Please reduce your request rate.'),
      new AwsHttpError(503, 'ServiceUnavailable', 'Please reduce your request rate.'),
      new AwsHttpError(400, 'TooManyRequestsException', 'Too many requests'),
      Object.assign(new Error('throttled'), { name: 'RequestThrottled' }),
      Object.assign(new Error('unavailable'), { name: 'ServiceUnavailableException' }),
    ])
      expect(apiErrorOf(e), e.message).toMatchObject({ status: 503, code: 'unavailable', message: 'The service is busy right now; retry in a second.' });
    expect(statusOf(new AwsHttpError(403, 'AccessDenied', 'denied'))).toBe(500);
    // A transaction cancelled for a condition or an invalid item is no load: the 500 as before.
    expect(statusOf(cancelled('ThrottlingError', 'ConditionalCheckFailed'))).toBe(500);
    expect(statusOf(cancelled('ValidationError'))).toBe(500);
    expect(statusOf(new ConditionalCheckFailedException({ message: 'failed', $metadata }))).toBe(500);
  });
});

describe('errorMessage', () => {
  it("is an Error's message (a subclass's too), and any other thrown value as text", () => {
    expect(errorMessage(new Error('disk full'))).toBe('disk full');
    expect(errorMessage(new ItemNotFound(7))).toBe(new ItemNotFound(7).message);
    expect(errorMessage(new TypeError(''))).toBe('');
    expect(['thrown text', 42, undefined, null, { code: 'x' }].map(errorMessage)).toEqual(['thrown text', '42', 'undefined', 'null', '[object Object]']);
  });
});
