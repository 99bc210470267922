import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';

/*
 * A request's deadline for its writes. At its time limit middy answers 503 and the handler's own
 * work goes on: locally for real, on Lambda at the container's next thaw (an SDK retry's backoff,
 * a chunk not sent yet). A client then retries (an Idempotency-Key's retry takes the attempt
 * over at once) and changes what it created; a write of the first attempt landing after that
 * would undo the change. So once the deadline passes, the table refuses the rest of the
 * handler's calls (shared/data/signed.ts and the SDK client, shared/data/client.ts), and the
 * artifact store its writes (shared/blob.ts: an erasure's rewrite of a model landing after its
 * 503 would put back a user another erasure took out meanwhile, its check after the write
 * refused): what was not sent by the answer is never sent. The middlewares around the handler (an Idempotency-Key
 * marked failed, so a retry takes over) run outside it.
 */

/** The reason a call past its request's deadline is refused. */
export class DeadlinePassed extends Error {
  override readonly name = 'DeadlinePassed';
  constructor() {
    super("The request's time ran out and it was answered: nothing more of it is written.");
  }
}

const scope = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `fn` with a deadline `ms` from now (none when undefined): every table call `fn` makes,
 * or anything it started makes, after it is refused (`deadlineSignal`).
 */
export function withinDeadline<T>(ms: number | undefined, fn: () => Promise<T>): Promise<T> {
  if (ms === undefined) return fn();
  const ctl = new AbortController();
  // Every table call in flight listens to it (an erasure's or a batch's many at once): no
  // "possible memory leak" warning past 10; each call removes its listener when it ends.
  setMaxListeners(0, ctl.signal);
  const timer = setTimeout(() => ctl.abort(new DeadlinePassed()), Math.max(0, ms));
  timer.unref();
  return scope.run(ctl.signal, fn).finally(() => clearTimeout(timer));
}

/** The signal of the deadline the current call runs under, if any: aborted once it passed. */
export const deadlineSignal = (): AbortSignal | undefined => scope.getStore();

/**
 * Runs `fn` outside any request's deadline: for a write that only takes back what its own request
 * wrote (a failed search's analytics row), which must land after
 * the deadline too, and for work shared by many requests (`GroupCommit`'s writes), which no one
 * request's deadline may refuse.
 */
export const outsideDeadline = <T>(fn: () => Promise<T>): Promise<T> => scope.exit(fn);
