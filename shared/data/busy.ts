import type { CancellationReason } from '@aws-sdk/client-dynamodb';

/**
 * Cancellation reasons that say only "not now": the transaction wrote nothing, and sent again it
 * may land (a throttled row, another transaction holding a row; `None` is a write that was fine).
 */
const FOR_NOW = new Set(['None', 'ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded', 'TransactionConflict']);

/** Whether a TransactWriteItems cancelled with `reasons` was cancelled only for now. */
export const onlyForNow = (reasons: readonly CancellationReason[]): boolean => reasons.every((r) => FOR_NOW.has(r.Code ?? 'None'));

/**
 * A BatchWriteItem or BatchGetItem that DynamoDB still left items of unprocessed after every
 * attempt (shared/data/ops.ts): it does so for load (a partition over its throughput), as it
 * throws a throttling error when it processes none.
 */
export class LeftUnprocessed extends Error {
  override name = 'LeftUnprocessed';
}

/**
 * Refusals for load by name, whatever the client: DynamoDB's throttling errors, and a single
 * write of an item another's transaction holds (TransactionConflictException: it wrote nothing,
 * and the transaction ends within milliseconds), as a transaction cancelled for that is
 * (`FOR_NOW`); the other services a request calls, through the SDK or the signed calls
 * (shared/aws/signed-fetch.ts `AwsHttpError`, by its code): S3's SlowDown, SQS's RequestThrottled,
 * Bedrock's and Cognito's throttling, a service answering that it is unavailable for now (S3's
 * ServiceUnavailable, Bedrock's ServiceUnavailableException).
 */
const THROTTLED = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'SlowDown',
  'RequestThrottled',
  'TooManyRequestsException',
  'ServiceUnavailableException',
  'ServiceUnavailable',
]);

/**
 * Whether `e` is the table or another service a request needs refusing for load after the
 * client's retries ran out (a throttling error, a batch call's items left unprocessed, or a
 * transaction cancelled only for now): the request may succeed in a moment, so the API answers
 * 503 with Retry-After (shared/http/error-mapping.ts), not an unexpected 500.
 */
export function serviceBusy(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (THROTTLED.has(e.name) || e instanceof LeftUnprocessed) return true;
  if (e.name === 'AwsHttpError') return THROTTLED.has((e as { code?: unknown }).code as string);
  const reasons = e.name === 'TransactionCanceledException' ? (e as { CancellationReasons?: CancellationReason[] }).CancellationReasons : undefined;
  return reasons !== undefined && onlyForNow(reasons);
}
