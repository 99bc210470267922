/* What segment size estimates (shared/control/segment-size.ts) read of the event log; shared/data/segment-events.ts implements it. */

/** Per user, how many events of one type a tenant's log holds since some time (segment size estimates). */
export interface SegmentEventCounts {
  counts: Map<string, number>;
  /** Events read. */
  read: number;
  /** True when `cap` stopped the read before the window's start: the counts are a lower bound. */
  capped: boolean;
}

export interface SegmentEventReader {
  /**
   * Counts, per user, the tenant's events of `type` created at or after `since` (seconds),
   * newest first on the type's index, reading at most `cap` events (their user and creation
   * time only). Each write shard is read until its events are older than `since`.
   */
  countByUser(tenant: string, type: string, since: number, cap: number): Promise<SegmentEventCounts>;
}
