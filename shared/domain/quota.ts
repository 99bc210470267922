/* The request quota's port: shared/http/quota.ts charges it, shared/data/quota.ts implements it on the table. */

/**
 * A tenant's request quota as one row: `tat`, the tenant's token bucket as a "theoretical
 * arrival time" (GCRA, in microseconds since the epoch): the bucket is full when `tat` is not
 * after now, and holds `burst - (tat - now) / interval` tokens otherwise. Taking n tokens moves
 * it to `max(tat, now) + n * interval`. Every container of every function charges the same row,
 * so the tenant's bucket holds across all of them (see shared/http/quota.ts for how a container
 * uses it without a round trip per request).
 */
export interface QuotaLedger {
  /**
   * Moves the tenant's `tat` by `incMicros` from `max(tat, nowMicros)` and answers the new
   * `tat`. `ahead` is the caller's guess whether `tat` is after now (it picks which of the two
   * conditional writes to try first; a wrong guess costs one more). Never refuses: whether the
   * tokens fit is the caller's to judge from the answer, giving back what did not with `refund`.
   */
  charge(tenant: string, incMicros: number, nowMicros: number, ahead: boolean, signal?: AbortSignal): Promise<number>;
  /** Takes `micros` back off the tenant's `tat` (tokens charged but not used): an ADD, so concurrent charges and refunds commute. */
  refund(tenant: string, micros: number, signal?: AbortSignal): Promise<void>;
}
