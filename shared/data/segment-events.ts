import type { SegmentEventReader } from '../domain/segment-events.ts';
import type { TableRef } from './client.ts';
import { EVENT_SHARDS, Event } from './entities.ts';
import { queryPage, type Row } from './ops.ts';

export function dynamoSegmentEvents(t: TableRef): SegmentEventReader {
  return {
    async timesByUser(tenant, type, since, cap) {
      const times = new Map<string, number[]>();
      let read = 0;
      // Ids go round the shards, so each shard's share of the cap covers about the same span of time.
      const perShard = Math.max(1, Math.ceil(cap / EVENT_SHARDS));
      await Promise.all(
        Array.from({ length: EVENT_SHARDS }, async (_, shard) => {
          let taken = 0;
          let start: Row | undefined;
          do {
            const page = await queryPage(t, {
              ...Event.indexes.byType.query({ tenant, type, shard }),
              ProjectionExpression: 'user_id, created',
              ScanIndexForward: false,
              Limit: Math.min(1000, perShard - taken),
              ...(start ? { ExclusiveStartKey: start } : {}),
            });
            start = page.lastKey;
            for (const row of page.items) {
              // Ids are allocated at ingest: past the first older event, the rest of the shard is older.
              const created = Number(row.created);
              if (created < since) return;
              const user = String(row.user_id);
              const own = times.get(user);
              if (own) own.push(created);
              else times.set(user, [created]);
              taken++;
              read++;
            }
          } while (start && taken < perShard);
        }),
      );
      return { times, read };
    },
  };
}
