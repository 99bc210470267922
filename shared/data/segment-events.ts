import type { TableRef } from './client.ts';
import { EVENT_SHARDS, keys } from './keys.ts';
import { queryPage, type Row } from './ops.ts';

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

export function dynamoSegmentEvents(t: TableRef): SegmentEventReader {
  return {
    async countByUser(tenant, type, since, cap) {
      const counts = new Map<string, number>();
      let read = 0;
      let capped = false;
      // Ids go round the shards, so each shard's share of the cap covers about the same span of time.
      const perShard = Math.max(1, Math.ceil(cap / EVENT_SHARDS));
      await Promise.all(
        Array.from({ length: EVENT_SHARDS }, async (_, shard) => {
          let taken = 0;
          let start: Row | undefined;
          do {
            const page = await queryPage(t, {
              IndexName: 'gsi2',
              KeyConditionExpression: 'gsi2pk = :pk',
              ExpressionAttributeValues: { ':pk': keys.eventTypePk(tenant, type, shard) },
              ProjectionExpression: 'user_id, created',
              ScanIndexForward: false,
              Limit: Math.min(1000, perShard - taken),
              ...(start ? { ExclusiveStartKey: start } : {}),
            });
            start = page.lastKey;
            for (const row of page.items) {
              // Ids are allocated at ingest: past the first older event, the rest of the shard is older.
              if (Number(row.created) < since) return;
              const user = String(row.user_id);
              counts.set(user, (counts.get(user) ?? 0) + 1);
              taken++;
              read++;
            }
            if (taken >= perShard && start) capped = true;
          } while (start && taken < perShard);
        }),
      );
      return { counts, read, capped };
    },
  };
}
