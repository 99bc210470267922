import { SEARCH_ATTRIBUTION_SECONDS, type QueryCounts, type SearchLogStore } from '../search/analytics.ts';
import { dayStart } from '../clock.ts';
import { eachAtMost } from '../concurrency.ts';
import { addCount } from '../counts.ts';
import type { TableRef } from './client.ts';
import { SEARCH_COUNTER_SHARDS, SearchCounters, SearchFold, SearchRequest } from './entities.ts';
import { prefixEnd } from './entity.ts';
import { type Condition, nonZero } from './expressions.ts';
import { GroupCommit } from './group-commit.ts';
import { applied, countEventOnce, EVENTS_PER_REQUEST_MAX, getRow, isStored, putAll, queryPage, refine, remove, update, WRITE_BATCH, type QueryInput, type Row, type TransactWrite } from './ops.ts';

/*
 * Search analytics storage. A search writes one row, nothing more: by request_id (for
 * attribution) and in gsi1 by the second it was served, on a random one of SEARCH_COUNTER_SHARDS
 * shards; kept for the attribution window and a day. Concurrent searches of a container write
 * their rows together (GroupCommit: BatchWriteItem, 25 to a call; a search whose row fails fails
 * alone, `writeSearchRows`). A search without results marks
 * its row (UpdateItem).
 *
 * The maintenance pass folds those rows into counters, a row per UTC day and normalised query, a
 * minute at a time: one addition per distinct day and query of the minute, however many searches
 * it held. Minutes have fixed bounds, and the counters row of a day and query (always the same
 * shard) keeps the end of the last minute added to it (`folded_to`, the addition's condition), so
 * a fold run twice at once, or again after failing half-way, adds each minute to each row once.
 * The tenant's fold row then records the minute's end: every row holds what was served before it.
 * A report reads the counters and, from the searches' rows, those served since that point that
 * their day and query's row does not hold yet: exact whenever it runs, and never more than a few
 * minutes of rows.
 *
 * An attributed event is recorded on its search's row under the event's id, conditionally, so it
 * counts once however often its ingest is retried; the search's first event of a type is told
 * apart the same way (`searches_with`). It adds to a counters row of its day and query on a
 * random shard (no key takes every event of a tenant).
 */

/** Searches written in one group at most. */
const GROUP_MAX = 100;
/** Counter rows are kept this long (a report reaches back at most this far). */
const COUNTER_TTL_SECONDS = 400 * 86_400;
const SEARCH_ROW_GRACE_SECONDS = 86_400;
/** Searches are folded a minute at a time, minutes starting at multiples of this. */
const FOLD_SECONDS = 60;
/**
 * A fold reads a minute's searches one shard at a time, in pages of 100 rows, and adds to 4
 * counters at a time: a busy minute's fold is a row of small requests, none of which holds the
 * database long, instead of a burst. Locally dynalite serves every thread's requests in one
 * thread: with all 8 shards read at once in pages of 1 MB and 16 additions in flight, the fold of
 * a minute of 8 clients' searches (about 24,000) slowed the searches served meanwhile fourfold
 * for 2 s (docs/benchmarks.md). On AWS it reads about 25,000 rows a second this way (a page in
 * ~4 ms), a minute of 400 searches a second in ~1 s; the pass's budget (FOLD_PASS_BUDGET_MS)
 * then keeps up with about 8,000 searches a second.
 */
const FOLD_PAGE_ROWS = 100;
const FOLD_READS_AT_ONCE = 1;
const FOLD_WRITES_AT_ONCE = 4;

/** Attribute names of a counters row (event types match ^[a-z][a-z0-9_]{0,63}$). */
const EVENTS = 'events:';
const WITH = 'with:';

const randomShard = () => Math.floor(Math.random() * SEARCH_COUNTER_SHARDS);

/** The shard of a day and query's folded counts: always the same, so that its `folded_to` guards every minute's addition. */
function foldShard(day: string, query: string): number {
  let h = 0x811c9dc5;
  const s = `${day}#${query}`;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) % SEARCH_COUNTER_SHARDS;
}

const counterTtl = (day: string) => dayStart(day) + COUNTER_TTL_SECONDS;
const dayQuery = (day: string, query: string) => `${day}\u0000${query}`;

/** A row's `folded_to` is absent or before `to`: the minute ending at `to` is not in it yet. */
const notFoldedTo =
  (to: number): Condition =>
  (x) =>
    x.or(x.absent('folded_to'), x.cmp('folded_to', '<', to));

/** Where the tenant's fold has got to: every search served before it is in the counters (0: nowhere yet). */
async function foldPoint(t: TableRef, tenant: string): Promise<number> {
  const state = await getRow(t, SearchFold.key({ tenant }), { consistent: true });
  return typeof state?.folded_to === 'number' ? state.folded_to : 0;
}

/** Adds to a (day, query) counters row: `shard` and `when` for a fold's addition, else a random shard. */
/** The write adding an attributed event's `counts` (none zero) to a shard of its day's and query's counters, for a transaction (`countEventOnce`). */
function countsWrite(tenant: string, day: string, query: string, counts: Record<string, number>): TransactWrite {
  return { update: SearchCounters.key({ tenant, shard: randomShard(), day, query }), change: { add: counts, set: { ttl: counterTtl(day) } } };
}

async function addCounts(t: TableRef, tenant: string, day: string, query: string, counts: Record<string, number>, fold?: { shard: number; to: number }): Promise<boolean> {
  const a = nonZero(counts);
  if (!a) return false;
  const key = SearchCounters.key({ tenant, shard: fold?.shard ?? randomShard(), day, query });
  const set = { ttl: counterTtl(day), ...(fold ? { folded_to: fold.to } : {}) };
  return applied(() => update(t, key, { add: a, set }, fold ? { when: notFoldedTo(fold.to) } : {}));
}

const byTime = SearchRequest.indexes.byTime;

/** Queries of the searches' rows served in [from, to), one per shard. */
function servedIn(tenant: string, from: number, to: number): QueryInput[] {
  const between = [byTime.skPrefix({ served_at: from }), prefixEnd(byTime.skPrefix({ served_at: to - 1 }))] as const;
  return Array.from({ length: SEARCH_COUNTER_SHARDS }, (_, shard) => byTime.query({ tenant, shard }, { between }));
}

/**
 * Reads every row of the queries (page by page, all queries at once; or, with `paced`, `atOnce`
 * queries at a time in pages of `pageRows` rows instead of DynamoDB's 1 MB), stopping once `max`
 * were read; whether every row was.
 */
async function readAll(t: TableRef, inputs: QueryInput[], max: number, each: (row: Row) => void, paced?: { atOnce: number; pageRows: number }): Promise<boolean> {
  let read = 0;
  let complete = true;
  const pageRows = paced?.pageRows;
  await eachAtMost(inputs, paced?.atOnce ?? inputs.length, async (input) => {
    let start: Row | undefined;
    do {
      const page = await queryPage(t, { ...input, ...(pageRows ? { Limit: pageRows } : {}), ...(start ? { ExclusiveStartKey: start } : {}) });
      for (const row of page.items) each(row);
      read += page.items.length;
      start = page.lastKey;
      if (start && read >= max) complete = false;
    } while (start && complete);
  });
  return complete;
}

/**
 * Writes a group of searches' rows, a BatchWriteItem of WRITE_BATCH rows at a time (as `putAll`),
 * and answers each row's outcome: a batch that failed (one row DynamoDB refuses fails its whole
 * BatchWriteItem, and the other batches' fate is not the group's) is written again row by row (a
 * put is the same whenever repeated), so only a row that fails alone fails, and only its search's
 * record (logged, as before). Until 2026-12-07 one failed write failed every search of the group,
 * and the rows of its BatchWriteItem were not written.
 */
async function writeSearchRows(t: TableRef, group: readonly Row[]): Promise<PromiseSettledResult<void>[]> {
  const outcomes: PromiseSettledResult<void>[] = group.map(() => ({ status: 'fulfilled', value: undefined }));
  const all = group.map((_, k) => k);
  const batches = Array.from({ length: Math.ceil(all.length / WRITE_BATCH) }, (_, i) => all.slice(i * WRITE_BATCH, (i + 1) * WRITE_BATCH));
  await Promise.all(
    batches.map((ks) =>
      putAll(
        t,
        ks.map((k) => group[k] as Row),
      ).catch(async () => {
        // A BatchWriteItem of one row each: the search function's grant (`searchLog`: BatchWriteItem, no PutItem).
        const each = await Promise.allSettled(ks.map((k) => putAll(t, [group[k] as Row])));
        each.forEach((o, i) => {
          outcomes[ks[i] as number] = o;
        });
      }),
    ),
  );
  return outcomes;
}

/** What the search function needs: recording searches (its bundle carries no more). */
export function dynamoSearchRecorder(t: TableRef): Pick<SearchLogStore, 'record' | 'noResults' | 'forget'> {
  const rows = new GroupCommit<Row>((group) => writeSearchRows(t, group), GROUP_MAX);
  return {
    record: (tenant, s) =>
      rows.add({
        ...SearchRequest.keys({ tenant, request_id: s.requestId, shard: randomShard(), served_at: s.servedAt }),
        query: s.query,
        day: s.day,
        served_at: s.servedAt,
        ttl: s.servedAt + SEARCH_ATTRIBUTION_SECONDS + SEARCH_ROW_GRACE_SECONDS,
      }),
    async noResults(tenant, s) {
      await applied(() => update(t, SearchRequest.key({ tenant, request_id: s.requestId }), { set: { no_results: 1 } }, { when: isStored }));
    },
    async forget(tenant, requestId) {
      await remove(t, SearchRequest.key({ tenant, request_id: requestId }));
    },
  };
}

/** `eventsPerRequest`: EVENTS_PER_REQUEST_MAX unless a test asks for fewer. */
export function dynamoSearchLogStore(t: TableRef, opts: { eventsPerRequest?: number } = {}): SearchLogStore {
  const eventsPerRequest = opts.eventsPerRequest ?? EVENTS_PER_REQUEST_MAX;
  return {
    ...dynamoSearchRecorder(t),

    async search(tenant, requestId) {
      const r = await getRow(t, SearchRequest.key({ tenant, request_id: requestId }), { consistent: true });
      if (!r) return undefined;
      return { requestId, query: String(r.query), day: String(r.day), servedAt: Number(r.served_at) };
    },

    attribute: (tenant, s, event) =>
      // The counters' write goes with the event's mark on the search's row (one transaction).
      countEventOnce(t, SearchRequest.key({ tenant, request_id: s.requestId }), event, `first:${event.type}`, eventsPerRequest, async (first) => [
        countsWrite(tenant, s.day, s.query, { [EVENTS + event.type]: 1, ...(first ? { [WITH + event.type]: 1 } : {}) }),
      ]),

    async fold(tenant, upTo, budgetMs) {
      const end = Math.floor(upTo / FOLD_SECONDS) * FOLD_SECONDS;
      let at = await foldPoint(t, tenant);
      let searches = 0;
      let queries = 0;
      const started = performance.now();
      for (let first = true; at < end && (first || performance.now() - started < budgetMs); first = false) {
        // The next minute with a search (minutes without any are passed over in one read).
        const firsts = await Promise.all(servedIn(tenant, at, end).map((q) => queryPage(t, { ...q, Limit: 1 })));
        const next = Math.min(...firsts.flatMap((p) => p.items.map((r) => Number(r.served_at))));
        if (!Number.isFinite(next)) break;
        const minute = Math.floor(next / FOLD_SECONDS) * FOLD_SECONDS;
        const to = minute + FOLD_SECONDS;
        const sums = new Map<string, { day: string; query: string; searches: number; no_results: number }>();
        const add = (row: Row) => {
          const day = String(row.day);
          const query = String(row.query);
          const k = dayQuery(day, query);
          let c = sums.get(k);
          if (!c) sums.set(k, (c = { day, query, searches: 0, no_results: 0 }));
          c.searches += 1;
          if (row.no_results) c.no_results += 1;
          searches += 1;
        };
        // Only what it counts (a row also holds the events attributed to it), in small pages.
        const reads = servedIn(tenant, minute, to).map((q) => refine(q, { project: ['query', 'day', 'no_results'] }));
        await readAll(t, reads, Infinity, add, { atOnce: FOLD_READS_AT_ONCE, pageRows: FOLD_PAGE_ROWS });
        await eachAtMost([...sums.values()], FOLD_WRITES_AT_ONCE, async (c) => {
          if (await addCounts(t, tenant, c.day, c.query, { searches: c.searches, no_results: c.no_results }, { shard: foldShard(c.day, c.query), to })) queries += 1;
        });
        await applied(() => update(t, SearchFold.key({ tenant }), { set: { folded_to: to } }, { when: notFoldedTo(to) }));
        at = to;
      }
      return { searches, queries, foldedTo: at || undefined };
    },

    async counts(tenant, from, to, maxRows) {
      // How far every counters row holds the searches: read first, so that a fold running meanwhile
      // leaves nothing between what the counters hold and what is read from the searches' rows.
      const foldedTo = await foldPoint(t, tenant);
      const byQuery = new Map<string, QueryCounts>();
      const of = (query: string) => {
        let c = byQuery.get(query);
        if (!c) byQuery.set(query, (c = { searches: 0, no_results: 0, events: {}, searches_with: {} }));
        return c;
      };
      // Where the counters of a day and query hold that day's searches up to (the fold's row).
      const foldedAt = new Map<string, number>();
      // The days `from`..`to` (YYYY-MM-DD), every query of each.
      const counters = SearchCounters.indexes.primary;
      const days = [counters.skPrefix({ day: from }), prefixEnd(counters.skPrefix({ day: to }))] as const;
      // Read consistently: a counters row read as it was before a fold added a minute to it would
      // hold that minute nowhere, as the searches' rows are read from the fold's point on.
      const inputs = Array.from({ length: SEARCH_COUNTER_SHARDS }, (_, shard) => ({ ...counters.query({ tenant, shard }, { between: days }), ConsistentRead: true }));
      const countersComplete = await readAll(t, inputs, maxRows, (row) => {
        const { day, query } = counters.parse(String(row.sk));
        const c = of(query);
        for (const [k, n] of Object.entries(row)) {
          if (typeof n !== 'number') continue;
          if (k === 'searches') c.searches += n;
          else if (k === 'no_results') c.no_results += n;
          else if (k === 'folded_to') {
            const dq = dayQuery(day, query);
            foldedAt.set(dq, Math.max(n, foldedAt.get(dq) ?? 0));
          } else if (k.startsWith(EVENTS)) addCount(c.events, k.slice(EVENTS.length), n);
          else if (k.startsWith(WITH)) addCount(c.searches_with, k.slice(WITH.length), n);
        }
      });
      // The searches not folded yet: served since `foldedTo` within the days, unless their row holds them by now.
      const since = Math.max(foldedTo, dayStart(from));
      const until = dayStart(to) + 86_400;
      const tailComplete =
        since >= until ||
        (await readAll(t, servedIn(tenant, since, until), maxRows, (row) => {
          const query = String(row.query);
          if (Number(row.served_at) < (foldedAt.get(dayQuery(String(row.day), query)) ?? 0)) return;
          const c = of(query);
          c.searches += 1;
          if (row.no_results) c.no_results += 1;
        }));
      return { byQuery, complete: countersComplete && tailComplete };
    },
  };
}
