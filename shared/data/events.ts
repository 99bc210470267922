import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { EventListQuery, EventRecord, EventStore, IdPlan, NewEvent, Page, RecentEvent } from '../domain/types.ts';
import type { TableRef } from './client.ts';
import { idsFor } from './counters.ts';
import { EVENT_SHARDS, keys } from './keys.ts';
import { forEachPartitionPage, getRow, mergeShards, putAll, putMissing, queryPage, queryUpTo, stripKeys, type Row } from './ops.ts';

/*
 * Events are append-only. The base table spreads a tenant's log over EVENT_SHARDS partitions
 * (id mod N) so ingest is not capped by one partition key; listing merges the shards by id.
 * gsi1 holds a user's events in id order (also what recommendations read); gsi2 a type's, sharded.
 */

const fromRow = (row: Row): EventRecord => {
  const r = stripKeys(row) as unknown as EventRecord;
  return { ...r, id: Number(r.id), occurred_at: Number(r.occurred_at), created: Number(r.created), extra: r.extra ?? {} };
};

const shards = Array.from({ length: EVENT_SHARDS }, (_, i) => i);

// A few short attributes instead of whole events: most of a read's volume.
const RECENT_PROJECTION = { ProjectionExpression: 'id, item_id, #type, created', ExpressionAttributeNames: { '#type': 'type' } };
const toRecent = (row: Row): RecentEvent => ({ id: Number(row.id), item_id: String(row.item_id), type: String(row.type), created: Number(row.created) });

export function dynamoEventStore(t: TableRef): EventStore {
  return {
    async append(tenant: string, events: NewEvent[], now: number, ids?: IdPlan): Promise<EventRecord[]> {
      const first = await idsFor(t, tenant, 'event', events.length, ids);
      const records: EventRecord[] = events.map((e, i) => ({
        ...e,
        id: first + i,
        occurred_at: e.occurred_at ?? now,
        created: now,
      }));
      const rows = records.map((r) => ({ ...keys.event(tenant, r.id), ...keys.eventIndexes(tenant, r.id, r.user_id, r.type), ...r }));
      // A retry under the ids its failed attempt reserved writes only the events that attempt did
      // not (they keep their ingest time) and answers them as stored.
      if (ids?.reuse !== undefined) return (await putMissing(t, rows, (row) => keys.event(tenant, Number(row.id)))).map(fromRow);
      await putAll(t, rows);
      return records;
    },

    async recentByUser(tenant: string, userId: string, limit: number, afterId?: number): Promise<RecentEvent[]> {
      const after = afterId ? keys.sortId(afterId) : undefined;
      const out = await queryPage(t, {
        IndexName: 'gsi1',
        KeyConditionExpression: `gsi1pk = :pk${after ? ' AND gsi1sk > :after' : ''}`,
        ExpressionAttributeValues: { ':pk': keys.eventUserPk(tenant, userId), ...(after ? { ':after': after } : {}) },
        ScanIndexForward: false,
        Limit: limit,
        ...RECENT_PROJECTION,
      });
      return out.items.map(toRecent);
    },

    async latest(tenant: string, limit: number): Promise<RecentEvent[]> {
      // Each shard read newest first a page at a time (pages of a shard's share of `limit`: ids
      // go round the shards), merged by id: reads little more than `limit` events (a page per
      // shard at most), whatever the tenant's log holds.
      const pageSize = Math.max(1, Math.min(1000, Math.ceil(limit / EVENT_SHARDS)));
      const heads = shards.map((s) => ({ pk: keys.eventPk(tenant, s), rows: [] as RecentEvent[], at: 0, next: undefined as Row | undefined }));
      const fill = async (h: (typeof heads)[number]) => {
        const page = await queryPage(t, {
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': h.pk },
          ScanIndexForward: false,
          Limit: pageSize,
          ...RECENT_PROJECTION,
          ...(h.next ? { ExclusiveStartKey: h.next } : {}),
        });
        h.rows = page.items.map(toRecent);
        h.at = 0;
        h.next = page.lastKey;
      };
      await Promise.all(heads.map(fill));
      const out: RecentEvent[] = [];
      while (out.length < limit) {
        let best: (typeof heads)[number] | undefined;
        for (const h of heads) if (h.at < h.rows.length && (!best || (h.rows[h.at] as RecentEvent).id > (best.rows[best.at] as RecentEvent).id)) best = h;
        if (!best) break;
        out.push(best.rows[best.at++] as RecentEvent);
        if (best.at === best.rows.length && best.next) await fill(best);
      }
      return out;
    },

    async forEachPage(tenant: string, fn: (events: EventRecord[]) => void | boolean): Promise<void> {
      for (const shard of shards) {
        if (!(await forEachPartitionPage(t, keys.eventPk(tenant, shard), (rows) => fn(rows.map(fromRow))))) return;
      }
    },

    async get(tenant: string, id: number): Promise<EventRecord | undefined> {
      const row = await getRow(t, keys.event(tenant, id));
      return row ? fromRow(row) : undefined;
    },

    async list(tenant: string, q: EventListQuery): Promise<Page<EventRecord>> {
      const want = q.limit + 1;
      const after = q.after !== undefined ? keys.sortId(q.after) : undefined;
      const range = (pkName: string, skName: string, pk: string, index?: string) => ({
        ...(index ? { IndexName: index } : {}),
        KeyConditionExpression: `${pkName} = :pk${after ? ` AND ${skName} > :after` : ''}`,
        ExpressionAttributeValues: { ':pk': pk, ...(after ? { ':after': after } : {}) },
      });
      let rows: Row[];
      if (q.userId !== undefined) {
        const base = range('gsi1pk', 'gsi1sk', keys.eventUserPk(tenant, q.userId), 'gsi1');
        rows = await queryUpTo(
          t,
          q.type !== undefined
            ? {
                ...base,
                FilterExpression: '#type = :type',
                ExpressionAttributeNames: { '#type': 'type' },
                ExpressionAttributeValues: { ...base.ExpressionAttributeValues, ':type': q.type },
              }
            : base,
          want,
        );
      } else if (q.type !== undefined) {
        const type = q.type;
        rows = await mergeShards(t, shards.map((s) => range('gsi2pk', 'gsi2sk', keys.eventTypePk(tenant, type, s), 'gsi2')), want, (r) => Number(r.id));
      } else {
        rows = await mergeShards(t, shards.map((s) => range('pk', 'sk', keys.eventPk(tenant, s))), want, (r) => Number(r.id));
      }
      return { rows: rows.slice(0, q.limit).map(fromRow), hasMore: rows.length > q.limit };
    },

    async eraseUser(tenant: string, userId: string): Promise<number> {
      // The user's index (gsi1) names their events; each lives on its id's write shard, and its
      // index entries (user, type) go with it. The index is read again until a pass finds no
      // event it had not found before (an index read is eventually consistent: an event stored
      // just before may show only then, one just deleted may still show).
      const erased = new Set<number>();
      for (let pass = 0; pass < ERASE_PASSES; pass++) {
        let found = false;
        let start: Row | undefined;
        do {
          const page = await queryPage(t, {
            IndexName: 'gsi1',
            KeyConditionExpression: 'gsi1pk = :pk',
            ExpressionAttributeValues: { ':pk': keys.eventUserPk(tenant, userId) },
            ProjectionExpression: 'id',
            Limit: 1000,
            ...(start ? { ExclusiveStartKey: start } : {}),
          });
          const ids = page.items.map((r) => Number(r.id)).filter((id) => !erased.has(id));
          if (ids.length) {
            found = true;
            await deleteAll(t, ids.map((id) => keys.event(tenant, id)));
            ids.forEach((id) => erased.add(id));
          }
          start = page.lastKey;
        } while (start);
        if (!found) break;
      }
      return erased.size;
    },
  };
}

/** Passes over a user's index an erasure makes at most (it stops at the first that finds nothing new). */
const ERASE_PASSES = 5;

/** Deletes rows by key, 25 to a BatchWriteItem, retrying what DynamoDB leaves unprocessed. */
async function deleteAll(t: TableRef, keyList: Row[]): Promise<void> {
  for (let i = 0; i < keyList.length; i += 25) {
    let pending = keyList.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= 10) throw new Error(`BatchWriteItem left ${pending.length} deletes unprocessed after ${attempt} attempts`);
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
      const out = await t.doc.send(new BatchWriteCommand({ RequestItems: { [t.tableName]: pending } }));
      pending = (out.UnprocessedItems?.[t.tableName] ?? []).flatMap((r) => (r.DeleteRequest?.Key ? [{ DeleteRequest: { Key: r.DeleteRequest.Key } }] : []));
    }
  }
}
