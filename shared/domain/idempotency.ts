import { Conflict } from './errors.ts';

/*
 * The Idempotency-Key port: what the HTTP layer's idempotency middleware (shared/http/idempotency.ts)
 * needs of storage; shared/data/idempotency.ts implements it on the table.
 */

export type IdempotencyClaim =
  | { state: 'new' }
  /**
   * The same request ran before and failed (or its process vanished) after it may have written:
   * this one takes over, and writes under the ids that one reserved, if it got that far.
   */
  | { state: 'resume'; firstId: number | undefined }
  | { state: 'replay'; status: number; body: string }
  | { state: 'mismatch' }
  | { state: 'in_progress' }
  /**
   * The key's request wrote events of a user erased since (`forget`): its answer is gone, and
   * the key answers nothing else until it expires.
   */
  | { state: 'erased' };

/** The attempt no longer holds the key (a retry took it over): it must not write. */
export class IdempotencyClaimLost extends Conflict {
  constructor() {
    super('idempotency_key_in_use', 'Another attempt of this request holds its Idempotency-Key now; retry shortly for its answer.');
  }
}

/**
 * Every call after `claim` names the attempt (`owner`, random per attempt) and acts only while
 * that attempt holds the key: an attempt that outlived its timeout, or whose process was thought
 * gone, can neither write under the key's ids nor store or drop its answer once a retry took over.
 */
export interface IdempotencyStore {
  /** Claims the key for a request whose fingerprint is `hash`, or reports what holds it. */
  claim(tenant: string, key: string, hash: string, owner: string, now: number, ttlSeconds: number): Promise<IdempotencyClaim>;
  /** Records the first id the attempt is about to write under; IdempotencyClaimLost if it no longer holds the key, or ids were reserved already. */
  reserve(tenant: string, key: string, owner: string, firstId: number): Promise<void>;
  /** The attempt failed after it may have written: a retry resumes it (see `claim`). */
  fail(tenant: string, key: string, owner: string): Promise<void>;
  /** Stores the response; `ttlSeconds` as given to `claim` (parts of a large response expire with it). */
  complete(tenant: string, key: string, owner: string, status: number, body: string, ttlSeconds: number): Promise<void>;
  /**
   * The attempt was refused before it wrote: the key is free again, unless ids were reserved
   * under it (an earlier attempt may have written under them): then it stays for a retry, as `fail`.
   */
  release(tenant: string, key: string, owner: string): Promise<void>;
  /**
   * An erasure found events of its user written under the key, the last at `writtenAt` (unix
   * seconds): the key's record keeps nothing of its request (neither its answer nor its
   * fingerprint) and claims of it answer `erased` until it expires; no attempt holds it any
   * more, so one still running can neither store its answer nor write under its ids. A record
   * claimed after `writtenAt` (the key used again once the first expired; a minute allowed for
   * clocks) is another request's, and is left alone. A record of a request that had not finished
   * (ids reserved, no answer stored) keeps its ids and fingerprint instead, so that its retry
   * resumes and writes what it had not (without the erased user's events).
   */
  forget(tenant: string, key: string, writtenAt: number): Promise<void>;
}
