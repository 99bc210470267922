import { DAY_COUNTS_KEPT_DAYS, type EventListQuery, type EventRecord, type EventStore, type IdPlan, type NewEvent, type Page, type RecentEvent } from '../domain/types.ts';
import type { TableRef } from './client.ts';
import { dayOf, dayStart, nowSeconds } from '../clock.ts';
import { idsFor } from './counters.ts';
import { Counter, ErasedEvent, EVENT_SHARDS, Event, EventDay, eventShard, sortId } from './entities.ts';
import { logger } from '../observability.ts';
import { eachAtMost } from '../concurrency.ts';
import {
  applied,
  countUpTo,
  forEachPartitionPage,
  getRow,
  isStored,
  mergeShards,
  putAll,
  putMissing,
  FILTERED_LIST_READ,
  queryFilteredUpTo,
  queryPage,
  queryUpTo,
  refine,
  remove,
  stripKeys,
  update,
  type QueryInput,
  type Row,
} from './ops.ts';
import { errorMessage } from '../domain/errors.ts';
import { IN_FLIGHT_SECONDS } from '../domain/in-flight.ts';

/*
 * Events are append-only (the Event entity of entities.ts). The table spreads a tenant's log over
 * EVENT_SHARDS partitions (id mod N) so ingest is not capped by one partition key; listing merges
 * the shards by id. `byUser` holds a user's events in id order (also what recommendations read);
 * `byType` a type's, sharded.
 */
const { primary, byUser, byType } = Event.indexes;
const eventKey = (tenant: string, id: number) => Event.key({ tenant, shard: eventShard(id), id });

const fromRow = (row: Row): EventRecord => {
  // The Idempotency-Key it was written under is the erasure's (see `append`), not the event's.
  const { idempotency_key: _key, ...r } = stripKeys(row) as unknown as EventRecord & { idempotency_key?: string };
  return { ...r, id: Number(r.id), occurred_at: Number(r.occurred_at), created: Number(r.created), extra: r.extra ?? {} };
};

const shards = Array.from({ length: EVENT_SHARDS }, (_, i) => i);
const dayCounts = EventDay.indexes.primary;

/** The overview's counts are kept this long (it reaches back 90 days at most). */
const EVENT_DAY_TTL_SECONDS = DAY_COUNTS_KEPT_DAYS * 86_400;

/**
 * Adds `n` events ingested at `created` to the count of their UTC day, on the shard of `firstId`.
 * The events are stored by then: a count that cannot be added is logged, and the ingest answered.
 */
async function countIngested(t: TableRef, tenant: string, created: number, n: number, firstId: number): Promise<void> {
  if (n === 0) return;
  const day = dayOf(created);
  const ttl = dayStart(day) + EVENT_DAY_TTL_SECONDS;
  try {
    await update(t, EventDay.key({ tenant, shard: eventShard(firstId), day }), { add: { count: n }, set: { ttl } });
  } catch (e) {
    logger.error('events ingested, their day count not added', { tenant, day, events: n, error: errorMessage(e) });
  }
}

// A few short attributes instead of whole events: most of a read's volume.
const RECENT = ['id', 'item_id', 'type', 'created'];
const toRecent = (row: Row): RecentEvent => ({ id: Number(row.id), item_id: String(row.item_id), type: String(row.type), created: Number(row.created) });

export function dynamoEventStore(t: TableRef): EventStore {
  const issuedThrough = async (tenant: string) => Number((await getRow(t, Counter.key({ tenant, counter: 'event' }), { consistent: true }))?.value ?? 0);
  /**
   * A user's latest events (`recentByUser`); `cut`: the read stopped after `pages` pages with fewer
   * than `limit` and the user's index partition not at its end (more may be there).
   */
  async function recentOf(tenant: string, userId: string, limit: number, afterId: number | undefined, below: number | undefined, pages: number): Promise<{ events: RecentEvent[]; cut: boolean }> {
    const range = afterId ? { gt: sortId(afterId) } : below !== undefined ? { lt: sortId(below) } : undefined;
    // Page after page until `limit`: a Query answers at most 1 MB of the rows it reads (whole
    // events, the index projecting them all; up to 32 KB each), whatever it projects. One page
    // was read until 2026-12-07, so a user's latest 100 events of 12 KB each answered about 85,
    // and 5,000 events of over 210 bytes each (a row's keys and fields) fewer than 5,000: items
    // interacted with past them came back, and a short read was taken for all of the user's
    // events (segments). At most `pages` of them: 5,000 events of 32 KB are 160 pages (160 MB,
    // some 20,000 read units) read one after another.
    const input: QueryInput = { ...refine(byUser.query({ tenant, user_id: userId }, range), { project: RECENT }), ScanIndexForward: false };
    const out: RecentEvent[] = [];
    let start: Row | undefined;
    for (let n = 0; n < pages && out.length < limit; n++) {
      const page = await queryPage(t, { ...input, Limit: limit - out.length, ExclusiveStartKey: start });
      for (const row of page.items) out.push(toRecent(row));
      start = page.lastKey;
      if (!start) break;
    }
    return { events: out, cut: start !== undefined && out.length < limit };
  }
  return {
    async append(tenant: string, events: NewEvent[], now: number, ids?: IdPlan, leaveOut?: ReadonlySet<string>): Promise<EventRecord[]> {
      const first = await idsFor(t, tenant, 'event', events.length, ids);
      const records: EventRecord[] = events.flatMap((e, i) => (leaveOut?.has(e.user_id) ? [] : [{ ...e, id: first + i, occurred_at: e.occurred_at ?? now, created: now }]));
      // Each row names the Idempotency-Key it came with: an erasure of its user finds the answer stored under it.
      const key = ids?.idempotencyKey !== undefined ? { idempotency_key: ids.idempotencyKey } : {};
      const rows = records.map((r) => ({ ...Event.keys({ tenant, shard: eventShard(r.id), id: r.id, user_id: r.user_id, type: r.type }), ...r, ...key }));
      // A retry under the ids its failed attempt reserved writes only the events that attempt did
      // not (they keep their ingest time) and answers them as stored.
      if (ids?.reuse !== undefined) {
        let wrote = 0;
        const stored = await putMissing(
          t,
          rows,
          (row) => eventKey(tenant, Number(row.id)),
          undefined,
          () => wrote++,
        );
        await countIngested(t, tenant, now, wrote, first);
        return stored.map(fromRow);
      }
      // Counted as they land: the rows of a write that failed part way are stored (its retry
      // writes only the others, and counts those).
      let landed = 0;
      try {
        await putAll(t, rows, (n) => (landed += n));
      } finally {
        await countIngested(t, tenant, now, landed, first);
      }
      return records;
    },

    async ingestedPerDay(tenant: string, from: string, to: string) {
      const [counted, firsts, oldest] = await Promise.all([
        Promise.all(shards.map((shard) => queryUpTo(t, dayCounts.query({ tenant, shard }, { between: [dayCounts.skPrefix({ day: from }), dayCounts.skPrefix({ day: to })] }), Infinity))),
        Promise.all(shards.map((shard) => queryPage(t, { ...dayCounts.query({ tenant, shard }), Limit: 1 }))),
        Promise.all(shards.map((shard) => queryPage(t, { ...refine(primary.query({ tenant, shard }), { project: ['created'] }), Limit: 1 }))),
      ]);
      const perDay = new Map<string, number>();
      for (const row of counted.flat()) {
        const { day } = dayCounts.parse(String(row.sk));
        perDay.set(day, (perDay.get(day) ?? 0) + Number(row.count));
      }
      const firstDays = firsts.flatMap((p) => p.items.map((row) => dayCounts.parse(String(row.sk)).day)).sort();
      const created = oldest.flatMap((p) => p.items.map((row) => Number(row.created)));
      return { perDay, firstCounted: firstDays[0] ?? null, oldestEventAt: created.length ? Math.min(...created) : null };
    },

    async recentByUser(tenant: string, userId: string, limit: number, afterId?: number, below?: number, pages = Infinity): Promise<RecentEvent[]> {
      return (await recentOf(tenant, userId, limit, afterId, below, pages)).events;
    },

    recentByUserWithin(tenant: string, userId: string, limit: number, below: number | undefined, pages: number): Promise<{ events: RecentEvent[]; cut: boolean }> {
      return recentOf(tenant, userId, limit, undefined, below, pages);
    },

    async latest(tenant: string, limit: number, below?: number): Promise<RecentEvent[]> {
      // Each shard read newest first a page at a time (pages of a shard's share of `limit`: ids
      // go round the shards), merged by id: reads little more than `limit` events (a page per
      // shard at most), whatever the tenant's log holds. Below an id, read consistently: what
      // is stored by now.
      const pageSize = Math.max(1, Math.min(1000, Math.ceil(limit / EVENT_SHARDS)));
      const query = (shard: number) => {
        const q = refine(primary.query({ tenant, shard }, below === undefined ? undefined : { lt: sortId(below) }), { project: RECENT });
        return below === undefined ? q : { ...q, ConsistentRead: true };
      };
      const heads = shards.map((shard) => ({ query: query(shard), rows: [] as RecentEvent[], at: 0, next: undefined as Row | undefined }));
      const fill = async (h: (typeof heads)[number]) => {
        const page = await queryPage(t, { ...h.query, ScanIndexForward: false, Limit: pageSize, ...(h.next ? { ExclusiveStartKey: h.next } : {}) });
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
        if (!(await forEachPartitionPage(t, primary.query({ tenant, shard }), (rows) => fn(rows.map(fromRow))))) return;
      }
    },

    async get(tenant: string, id: number): Promise<EventRecord | undefined> {
      // Consistent: an event just acknowledged is found (docs/api.md).
      const row = await getRow(t, eventKey(tenant, id), { consistent: true });
      return row ? fromRow(row) : undefined;
    },

    async list(tenant: string, q: EventListQuery): Promise<Page<EventRecord>> {
      const want = q.limit + 1;
      // Newest first: each index read backwards from the cursor, the shards merged by id, largest first.
      const desc = q.newestFirst === true;
      const after = q.after === undefined ? undefined : desc ? { lt: sortId(q.after) } : { gt: sortId(q.after) };
      const ordered = (input: QueryInput): QueryInput => (desc ? { ...input, ScanIndexForward: false } : input);
      const byId = (r: Row) => (desc ? -Number(r.id) : Number(r.id));
      let rows: Row[];
      if (q.userId !== undefined) {
        const type = q.type;
        const ofUser = byUser.query({ tenant, user_id: q.userId }, after);
        if (type === undefined) rows = await queryUpTo(t, ordered(ofUser), want);
        else {
          // A type filter on the user's events: a bounded read, a page that did not fill ending
          // where the read did (`next`), as the item list's filters do.
          const { rows: matched, stoppedAt } = await queryFilteredUpTo(t, ordered(refine(ofUser, { filter: (x) => x.eq('type', type) })), want, FILTERED_LIST_READ);
          if (stoppedAt !== undefined) return { rows: matched.map(fromRow), hasMore: true, next: Number(byUser.parse(String(stoppedAt[byUser.skAttr])).id) };
          rows = matched;
        }
      } else if (q.type !== undefined) {
        const type = q.type;
        rows = await mergeShards(
          t,
          shards.map((shard) => ordered(byType.query({ tenant, type, shard }, after))),
          want,
          byId,
        );
      } else {
        // The table itself, read consistently (the indexes cannot be): what is acknowledged is listed.
        rows = await mergeShards(
          t,
          shards.map((shard) => ({ ...ordered(primary.query({ tenant, shard }, after)), ConsistentRead: true })),
          want,
          byId,
        );
      }
      return { rows: rows.slice(0, q.limit).map(fromRow), hasMore: rows.length > q.limit };
    },

    async eraseUser(
      tenant: string,
      userId: string,
      forget?: (written: ReadonlyMap<string, number>) => Promise<void>,
      upTo?: number,
      until = Number.POSITIVE_INFINITY,
    ): Promise<{ deleted: number; through: number; finished: boolean }> {
      // The events sent before the erasure began: ids up to the last the tenant's counter had
      // handed out then (or `upTo`, an ended erasure's, for its sweep). Those sent while it runs take later ids, and are kept.
      const through = upTo ?? (await issuedThrough(tenant));
      // The user's index (gsi1) names their events; each lives on its id's write shard, and its
      // index entries (user, type) go with it. The index is read again until a pass finds no
      // event it had not found before (an index read is eventually consistent: an event stored
      // just before may show only then, one just deleted may still show).
      const erased = new Set<number>();
      // Counted as each conditional delete finds its row: of two erasures at once, each counts
      // only what it removed (a batch delete tells nothing of what was there).
      let deleted = 0;
      // Past `until` (the maintenance pass's budget), no further page: the next call goes on (until
      // 2026-12-07 a pass's sweep or finish of an erasure cut off with many events left deleted
      // them all, however long that took, and outlived the pass's 60 s).
      let first = true;
      for (let pass = 0; pass < ERASE_PASSES; pass++) {
        let found = false;
        let start: Row | undefined;
        do {
          if (!first && performance.now() >= until) return { deleted, through, finished: false };
          first = false;
          const page = await queryPage(t, {
            ...refine(byUser.query({ tenant, user_id: userId }), { project: ['id', 'created', 'idempotency_key'] }),
            Limit: 1000,
            ...(start ? { ExclusiveStartKey: start } : {}),
          });
          const rows = page.items.filter((r) => Number(r.id) <= through && !erased.has(Number(r.id)));
          const ids = rows.map((r) => Number(r.id));
          if (ids.length) {
            found = true;
            // The answers stored under the keys these events came with hold them: forgotten
            // first, so that an erasure cut off before it deleted the events finds them again.
            const written = new Map<string, number>();
            for (const r of rows) if (typeof r.idempotency_key === 'string') written.set(r.idempotency_key, Math.max(written.get(r.idempotency_key) ?? 0, Number(r.created)));
            if (forget && written.size) await forget(written);
            // Each id marked before its event goes: the list tells the gap from an id still
            // being written (until 2026-12-05 a gap an erasure left, however old its events, held
            // the list 30 s once an event was stored after it).
            const ttl = nowSeconds() + ERASED_EVENT_MARK_SECONDS;
            await putAll(
              t,
              ids.map((id) => ({ ...ErasedEvent.keys({ tenant, id }), id, ttl })),
            );
            await eachAtMost(ids, ERASE_DELETES_AT_ONCE, async (id) => {
              if (await applied(() => remove(t, eventKey(tenant, id), isStored))) deleted++;
            });
            ids.forEach((id) => erased.add(id));
          }
          // The index is in id order: past the bound, every later event is one the erasure keeps,
          // not read (until 2026-12-08 every pass read them all, the user's events sent since
          // included: a finish or sweep of a user who went on sending many outran its pass's time at
          // each pass, its row due for good).
          const last = page.items[page.items.length - 1];
          start = last !== undefined && Number(last.id) > through ? undefined : page.lastKey;
        } while (start);
        if (!found) break;
      }
      return { deleted, through, finished: true };
    },

    issuedThrough,

    async lastSentBy(tenant: string, userId: string, at: number): Promise<number> {
      // The user's index oldest first, up to the first event ingested IN_FLIGHT_SECONDS past `at`
      // by a request with no Idempotency-Key: its id was handed out as it was ingested (not by an
      // earlier attempt, which a keyed retry resumes under, its rows ingested late), so every
      // later one was handed out after it, to a request begun after `at` (a write request ends
      // within them). So the read is of the events the erasure erases (which its finish deletes),
      // not of every one the user sent since (of a client that sends no key): until 2026-12-08 it
      // read the index newest first through all of those, however many, in no time bound of the
      // pass, and again at each pass while the bound was 0 (the user's events up to it gone).
      const input: QueryInput = refine(byUser.query({ tenant, user_id: userId }), { project: ['id', 'created', 'idempotency_key'] });
      let through = 0;
      await forEachPartitionPage(t, input, (rows) => {
        for (const row of rows) {
          const created = Number(row.created);
          if (created > at + IN_FLIGHT_SECONDS && row.idempotency_key === undefined) return false;
          if (created <= at) through = Math.max(through, Number(row.id));
        }
      });
      return through;
    },

    async erasedIn(tenant: string, from: number, to: number, upTo: number): Promise<number> {
      // Consistent: an erasure writes the marks before it deletes the events.
      return countUpTo(t, { ...ErasedEvent.indexes.primary.query({ tenant }, { between: [sortId(from), sortId(to)] }), ConsistentRead: true }, upTo);
    },
  };
}

/** Passes over a user's index an erasure makes at most (it stops at the first that finds nothing new). */
const ERASE_PASSES = 5;
/**
 * How long an erased event's mark is kept: past it, an erasure's gap that no event was stored
 * after meanwhile holds the list once more, for 30 s after the next event (shared/domain/in-flight.ts).
 */
const ERASED_EVENT_MARK_SECONDS = 30 * 86_400;
/** An erasure's conditional deletes in flight at once. */
const ERASE_DELETES_AT_ONCE = 25;
