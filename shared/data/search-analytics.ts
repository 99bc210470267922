import { SEARCH_ATTRIBUTION_SECONDS, type QueryCounts, type SearchLogStore, type SearchRecord } from '../search/analytics.ts';
import type { TableRef } from './client.ts';
import { SEARCH_COUNTER_SHARDS, SearchCounters, SearchRequest } from './entities.ts';
import { prefixEnd } from './entity.ts';
import { nonZero } from './expressions.ts';
import { GroupCommit } from './group-commit.ts';
import { getRow, markEventOnce, putAll, queryPage, update, type Row } from './ops.ts';

/*
 * Search analytics storage. A search writes its row (by request_id, for attribution; kept for
 * the attribution window and a day) and adds to its day-and-query counters row (and, once ranked
 * without results, adds to `no_results` there) on one of
 * SEARCH_COUNTER_SHARDS shards (random per write: no key takes every search of a tenant).
 * Concurrent searches of a container are written together (GroupCommit): their rows in
 * BatchWriteItem (25 to a call), one counter addition per distinct (day, query) of the group.
 * An attributed event is recorded on its search's row under the event's id, conditionally, so it
 * counts once however often its ingest is retried; the search's first event of a type is told
 * apart the same way (`searches_with`).
 */

/** Searches written in one group at most. */
const GROUP_MAX = 100;
/** Counter rows are kept this long (a report reaches back at most this far). */
const COUNTER_TTL_SECONDS = 400 * 86_400;
const SEARCH_ROW_GRACE_SECONDS = 86_400;

/** Attribute names of a counters row (event types match ^[a-z][a-z0-9_]{0,63}$). */
const EVENTS = 'events:';
const WITH = 'with:';

const shard = () => Math.floor(Math.random() * SEARCH_COUNTER_SHARDS);

interface Pending {
  tenant: string;
  s: SearchRecord;
  /** Only one more search without results (the search itself is recorded already). */
  noResults?: boolean;
}

/** Adds to a (day, query) counters row on a random shard. */
async function addCounts(t: TableRef, tenant: string, day: string, query: string, counts: Record<string, number>): Promise<void> {
  const a = nonZero(counts);
  if (!a) return;
  await update(t, SearchCounters.key({ tenant, shard: shard(), day, query }), { add: a, set: { ttl: Date.parse(`${day}T00:00:00Z`) / 1000 + COUNTER_TTL_SECONDS } });
}

/** What the search function needs: recording searches, group-committed (its bundle carries no more). */
export function dynamoSearchRecorder(t: TableRef): Pick<SearchLogStore, 'record' | 'noResults'> {
  async function write(group: Pending[]): Promise<void> {
    const counters = new Map<string, { tenant: string; day: string; query: string; searches: number; no_results: number }>();
    for (const { tenant, s, noResults } of group) {
      const key = `${tenant}\u0000${s.day}\u0000${s.query}`;
      let c = counters.get(key);
      if (!c) counters.set(key, (c = { tenant, day: s.day, query: s.query, searches: 0, no_results: 0 }));
      if (noResults) c.no_results += 1;
      else c.searches += 1;
    }
    const rows: Row[] = group
      .filter((p) => !p.noResults)
      .map(({ tenant, s }) => ({
        ...SearchRequest.key({ tenant, request_id: s.requestId }),
        query: s.query,
        day: s.day,
        served_at: s.servedAt,
        ttl: s.servedAt + SEARCH_ATTRIBUTION_SECONDS + SEARCH_ROW_GRACE_SECONDS,
      }));
    await Promise.all([putAll(t, rows), ...[...counters.values()].map((c) => addCounts(t, c.tenant, c.day, c.query, { searches: c.searches, no_results: c.no_results }))]);
  }
  const commits = new GroupCommit<Pending>(write, GROUP_MAX);
  return { record: (tenant, s) => commits.add({ tenant, s }), noResults: (tenant, s) => commits.add({ tenant, s, noResults: true }) };
}

export function dynamoSearchLogStore(t: TableRef): SearchLogStore {
  return {
    ...dynamoSearchRecorder(t),

    async search(tenant, requestId) {
      const r = await getRow(t, SearchRequest.key({ tenant, request_id: requestId }), { consistent: true });
      if (!r) return undefined;
      return { requestId, query: String(r.query), day: String(r.day), servedAt: Number(r.served_at) };
    },

    async attribute(tenant, s, event) {
      const { counted, first } = await markEventOnce(t, SearchRequest.key({ tenant, request_id: s.requestId }), event, `first:${event.type}`);
      if (!counted) return false;
      await addCounts(t, tenant, s.day, s.query, { [EVENTS + event.type]: 1, [WITH + event.type]: first ? 1 : 0 });
      return true;
    },

    async counts(tenant, from, to, maxRows) {
      // The days `from`..`to` (YYYY-MM-DD), every query of each.
      const counters = SearchCounters.indexes.primary;
      const days = [counters.skPrefix({ day: from }), prefixEnd(counters.skPrefix({ day: to }))] as const;
      const byQuery = new Map<string, QueryCounts>();
      let read = 0;
      let complete = true;
      await Promise.all(
        Array.from({ length: SEARCH_COUNTER_SHARDS }, async (_, sh) => {
          let start: Row | undefined;
          do {
            const page = await queryPage(t, { ...counters.query({ tenant, shard: sh }, { between: days }), ...(start ? { ExclusiveStartKey: start } : {}) });
            for (const row of page.items) {
              const { query } = counters.parse(String(row.sk));
              let c = byQuery.get(query);
              if (!c) byQuery.set(query, (c = { searches: 0, no_results: 0, events: {}, searches_with: {} }));
              for (const [k, n] of Object.entries(row)) {
                if (typeof n !== 'number') continue;
                if (k === 'searches') c.searches += n;
                else if (k === 'no_results') c.no_results += n;
                else if (k.startsWith(EVENTS)) c.events[k.slice(EVENTS.length)] = (c.events[k.slice(EVENTS.length)] ?? 0) + n;
                else if (k.startsWith(WITH)) c.searches_with[k.slice(WITH.length)] = (c.searches_with[k.slice(WITH.length)] ?? 0) + n;
              }
            }
            read += page.items.length;
            start = page.lastKey;
            if (start && read >= maxRows) complete = false;
          } while (start && complete);
        }),
      );
      return { byQuery, complete };
    },
  };
}
