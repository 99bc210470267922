/**
 * The one retry loop: attempts, a base delay doubling per attempt up to a cap, jitter, and which
 * failures are worth another attempt. Its users: the signed DynamoDB calls (shared/data/signed.ts), the
 * signed S3 calls (shared/aws/signed-fetch.ts), the BatchWriteItem loops of the data layer
 * (shared/data/ops.ts `batchWrite`), SendMessageBatch (shared/queue/messages.ts), the
 * revision-checked changes of control records (shared/control/records.ts) and the local
 * stack's data-directory lock (local/lock.ts, `withRetrySync`). Not a user: the local queue's
 * redelivery delay (local/queue.ts), which plays SQS's visibility timeout, not a retry of a call.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** The delay before attempt n + 1 is `baseMs * 2 ** n` (n from 1), at most `maxMs`. */
  baseMs: number;
  maxMs?: number;
  /**
   * `full`: a random delay between 0 and the computed one (AWS's "full jitter", for calls that
   * many clients repeat at once); `none`: the computed delay itself.
   */
  jitter: 'full' | 'none';
}

/** The delay after failed attempt `attempt` (1 for the first). */
function retryDelay(p: RetryPolicy, attempt: number): number {
  const d = Math.min(p.maxMs ?? Infinity, p.baseMs * 2 ** attempt);
  return p.jitter === 'full' ? Math.random() * d : d;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * What an attempt answers: its value, or the failure and whether another attempt may succeed.
 * An attempt that throws ends the loop with that error (each caller catches what it retries,
 * such as network errors).
 */
export type Attempt<T> = { value: T } | { failure: unknown; retryable: boolean };

/**
 * Runs `attempt` (given its number, from 1) until it answers a value, waiting `retryDelay`
 * between attempts (none when it is 0). A failure that is not retryable, or the last attempt's, is thrown;
 * so is one whose wait would end at or past `until` (performance.now() time), for a caller with a
 * time budget: no wait runs past it, and no attempt starts after it. A function `until` is asked
 * at each wait (a caller whose attempt got half way, such as a decision whose first write landed,
 * lifts its budget until it is done).
 */
export async function withRetry<T>(p: RetryPolicy, attempt: (n: number) => Promise<Attempt<T>>, until: number | (() => number) = Number.POSITIVE_INFINITY): Promise<T> {
  for (let n = 1; ; n++) {
    const out = await attempt(n);
    if ('value' in out) return out.value;
    if (!out.retryable || n >= p.attempts) throw out.failure;
    const delay = retryDelay(p, n);
    if (performance.now() + delay >= (typeof until === 'function' ? until() : until)) throw out.failure;
    if (delay > 0) await sleep(delay);
  }
}

/**
 * The same loop for a synchronous attempt retried at once, without a delay (one would block the
 * thread), such as taking a lock file (local/lock.ts).
 */
export function withRetrySync<T>(attempts: number, attempt: (n: number) => Attempt<T>): T {
  for (let n = 1; ; n++) {
    const out = attempt(n);
    if ('value' in out) return out.value;
    if (!out.retryable || n >= attempts) throw out.failure;
  }
}
