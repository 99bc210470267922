/* What segment size estimates (shared/control/segment-size.ts) read of the event log; shared/data/segment-events.ts implements it. */

/** Per user, when each of their events of one type a tenant's log holds since some time was created (segment size estimates). */
export interface SegmentEventTimes {
  /** Per user, the creation times (seconds) of the events read. */
  times: Map<string, number[]>;
  /** Events read. */
  read: number;
}

export interface SegmentEventReader {
  /**
   * The tenant's events of `type` created at or after `since` (seconds), per user with their
   * creation times, newest first on the type's index, reading at most `cap` events (their user
   * and creation time only). Each write shard is read until its events are older than `since`.
   */
  timesByUser(tenant: string, type: string, since: number, cap: number): Promise<SegmentEventTimes>;
}
