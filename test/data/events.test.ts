import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../shared/domain/types.ts';
import { allocateIds } from '../../shared/data/counters.ts';
import { dynamoEventStore } from '../../shared/data/events.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { EVENT_SHARDS } from '../../shared/data/keys.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

const ev = (user: string, type: string, extra: Partial<NewEvent> = {}): NewEvent => ({
  type,
  user_id: user,
  item_id: '1',
  context_id: null,
  session_id: null,
  request_id: null,
  placement: null,
  extra: {},
  ...extra,
});

describe('event store', () => {
  it('appends with a block of ids and keeps every field', async () => {
    const s = db.stores.events;
    const out = await s.append('e1', [ev('u', 'click', { payload: { x: 1 }, extra: { k: 'v' }, occurred_at: 5 }), ev('v', 'buy')], 50);
    expect(out.map((e) => e.id)).toEqual([1, 2]);
    expect(await s.get('e1', 1)).toEqual({ ...ev('u', 'click', { payload: { x: 1 }, extra: { k: 'v' } }), id: 1, occurred_at: 5, created: 50 });
    expect((await s.get('e1', 2))?.occurred_at).toBe(50);
    expect(await s.get('e2', 1)).toBeUndefined();
  });

  it('lists ascending across write shards without gaps or duplicates, with filters', async () => {
    const s = db.stores.events;
    const n = EVENT_SHARDS * 9 + 3;
    await s.append(
      'lst',
      Array.from({ length: n }, (_, i) => ev(`u${i % 3}`, i % 2 ? 'odd' : 'even')),
      1,
    );
    const ids: number[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await s.list('lst', { limit: 7, ...(after ? { after } : {}) });
      ids.push(...page.rows.map((r) => r.id));
      if (!page.hasMore) break;
      after = page.rows[page.rows.length - 1]?.id;
    }
    expect(ids).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    // A page that ends at the last event says so (has_more: false, not an empty page more to read).
    expect((await s.list('lst', { limit: n })).hasMore).toBe(false);
    expect((await s.list('lst', { limit: n - 1 })).hasMore).toBe(true);
    const byUser = await s.list('lst', { limit: 100, userId: 'u1' });
    expect(byUser.rows.map((r) => r.id)).toEqual(ids.filter((id) => (id - 1) % 3 === 1));
    const byType = await s.list('lst', { limit: 100, type: 'odd' });
    expect(byType.rows.map((r) => r.id)).toEqual(ids.filter((id) => (id - 1) % 2 === 1));
    const both = await s.list('lst', { limit: 2, userId: 'u0', type: 'even' });
    expect(both.rows.map((r) => r.id)).toEqual([1, 7]);
    expect(both.hasMore).toBe(true);
  });

  it('lists newest first across write shards, paging on to older ids, with filters', async () => {
    const s = db.stores.events;
    const n = EVENT_SHARDS * 9 + 3;
    await s.append(
      'desc',
      Array.from({ length: n }, (_, i) => ev(`u${i % 3}`, i % 2 ? 'odd' : 'even')),
      1,
    );
    const all = Array.from({ length: n }, (_, i) => n - i);
    const pages = async (q: { userId?: string; type?: string }) => {
      const ids: number[] = [];
      let after: number | undefined;
      for (;;) {
        const page = await s.list('desc', { limit: 4, newestFirst: true, ...q, ...(after ? { after } : {}) });
        ids.push(...page.rows.map((r) => r.id));
        if (!page.hasMore) return ids;
        after = page.rows[page.rows.length - 1]?.id;
      }
    };
    expect(await pages({})).toEqual(all);
    expect(await pages({ userId: 'u1' })).toEqual(all.filter((id) => (id - 1) % 3 === 1));
    expect(await pages({ type: 'odd' })).toEqual(all.filter((id) => (id - 1) % 2 === 1));
    expect(await pages({ userId: 'u0', type: 'even' })).toEqual(all.filter((id) => (id - 1) % 3 === 0 && (id - 1) % 2 === 0));
    const first = await s.list('desc', { limit: 3, newestFirst: true });
    expect(first.rows.map((r) => r.id)).toEqual([n, n - 1, n - 2]);
    expect(first.hasMore).toBe(true);
  });

  it("reads a user's latest events newest first, only id, item, type and creation time, within the limit, after an id", async () => {
    const s = db.stores.events;
    await s.append(
      'rec',
      [
        ev('u', 'view', { item_id: '10', payload: { big: 'x'.repeat(500) } }),
        ev('v', 'view', { item_id: '11' }),
        ev('u', 'buy', { item_id: '12', extra: { k: 'v' } }),
        ev('u', 'view', { item_id: '13' }),
      ],
      1,
    );
    expect(await s.recentByUser('rec', 'u', 10)).toEqual([
      { id: 4, item_id: '13', type: 'view', created: 1 },
      { id: 3, item_id: '12', type: 'buy', created: 1 },
      { id: 1, item_id: '10', type: 'view', created: 1 },
    ]);
    expect(await s.recentByUser('rec', 'u', 2)).toEqual([
      { id: 4, item_id: '13', type: 'view', created: 1 },
      { id: 3, item_id: '12', type: 'buy', created: 1 },
    ]);
    // Only the events after an id (those a model's artifact does not hold).
    expect((await s.recentByUser('rec', 'u', 10, 1)).map((e) => e.id)).toEqual([4, 3]);
    expect((await s.recentByUser('rec', 'u', 10, 3)).map((e) => e.id)).toEqual([4]);
    expect(await s.recentByUser('rec', 'u', 10, 4)).toEqual([]);
    // Only the events before an id (the taste a personalised search's first page was ranked with).
    expect((await s.recentByUser('rec', 'u', 10, undefined, 4)).map((e) => e.id)).toEqual([3, 1]);
    expect((await s.recentByUser('rec', 'u', 1, undefined, 5)).map((e) => e.id)).toEqual([4]);
    expect(await s.recentByUser('rec', 'u', 10, undefined, 1)).toEqual([]);
    expect(await s.recentByUser('rec', 'nobody', 5)).toEqual([]);
    expect(await s.recentByUser('other', 'u', 5)).toEqual([]);
  });

  it("reads a user's latest events page after page, at most `pages` Query pages when asked (1 MB of whole events each)", async () => {
    let queries = 0;
    const watched: TableRef = {
      ...db.table,
      signed: {
        ...db.table.signed,
        query: async (input) => {
          queries++;
          return db.table.signed.query(input);
        },
      },
    };
    const s = dynamoEventStore(watched);
    // 200 events of about 30 KB: some 34 to a page, six pages or more.
    const big = 'x'.repeat(30_000);
    for (let k = 0; k < 4; k++)
      await s.append(
        'pages',
        Array.from({ length: 50 }, (_, i) => ev('u', 'view', { item_id: String(k * 50 + i), payload: { big } })),
        1,
      );
    queries = 0;
    const all = await s.recentByUser('pages', 'u', 5000);
    expect(all.map((e) => e.id)).toEqual(Array.from({ length: 200 }, (_, i) => 200 - i));
    expect(queries).toBeGreaterThan(4);
    queries = 0;
    const bounded = await s.recentByUser('pages', 'u', 5000, undefined, undefined, 4);
    expect(queries).toBe(4);
    // The newest, in order, as far as the pages went.
    expect(bounded.length).toBeGreaterThan(100);
    expect(bounded.length).toBeLessThan(200);
    expect(bounded.map((e) => e.id)).toEqual(Array.from({ length: bounded.length }, (_, i) => 200 - i));
    // Within `limit` as before: one page when it holds them.
    queries = 0;
    expect((await s.recentByUser('pages', 'u', 10, undefined, undefined, 4)).map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, i) => 200 - i));
    expect(queries).toBe(1);
  });

  it("reads a tenant's latest events across every write shard, newest first, within the limit", async () => {
    const s = dynamoEventStore(db.table);
    const n = EVENT_SHARDS * 7 + 2;
    await s.append(
      'lat',
      Array.from({ length: n }, (_, i) => ev(`u${i % 3}`, i % 2 ? 'odd' : 'even', { item_id: String(100 + i), payload: { big: 'x'.repeat(100) } })),
      9,
    );
    const all = await s.latest('lat', 1000);
    expect(all.map((e) => e.id)).toEqual(Array.from({ length: n }, (_, i) => n - i));
    expect(all[0]).toEqual({ id: n, item_id: String(100 + n - 1), type: (n - 1) % 2 ? 'odd' : 'even', created: 9 });
    // Small pages (a shard's share of the limit): the merge reads on in a shard as it empties.
    for (const limit of [1, 5, 12, 13, n - 1])
      expect(
        (await s.latest('lat', limit)).map((e) => e.id),
        `limit ${limit}`,
      ).toEqual(Array.from({ length: limit }, (_, i) => n - i));
    // Shards far from even (ids taken by requests that stored nothing): still the newest.
    await allocateIds(db.table, 'lat', 'event', 3);
    await s.append('lat', [ev('u', 'late', { item_id: '1' })], 10);
    await allocateIds(db.table, 'lat', 'event', 7);
    await s.append('lat', [ev('u', 'later', { item_id: '2' })], 11);
    expect((await s.latest('lat', 4)).map((e) => e.id)).toEqual([n + 12, n + 4, n, n - 1]);
    expect(await s.latest('none', 10)).toEqual([]);
  });

  it('counts the events ingested per UTC day, every one, on any shard, and a retry only what it wrote', async () => {
    const s = dynamoEventStore(db.table);
    const day = (d: number) => Date.UTC(2026, 10, d) / 1000;
    expect(await s.ingestedPerDay('cnt', '2026-11-01', '2026-11-30')).toEqual({ perDay: new Map(), firstCounted: null, oldestEventAt: null });
    // Requests whose first ids fall on different shards, two on the 3rd (the last second of it among them), one on the 5th.
    await s.append('cnt', [ev('a', 'view'), ev('b', 'view'), ev('c', 'buy')], day(3));
    await s.append('cnt', [ev('a', 'view')], day(4) - 1);
    await s.append(
      'cnt',
      Array.from({ length: 30 }, (_, i) => ev(`u${i}`, 'view')),
      day(5) + 7,
    );
    // A retry under the ids of an attempt that wrote 2 of its 3 events (ids 35-37) adds the one it writes.
    const first = await allocateIds(db.table, 'cnt', 'event', 3);
    await s.append('cnt', [ev('r1', 'view'), ev('r2', 'view')], day(5) + 60, { reuse: first });
    await s.append('cnt', [ev('r1', 'view'), ev('r2', 'view'), ev('r3', 'view')], day(5) + 90, { reuse: first });
    // And one that finds all of them written adds nothing.
    await s.append('cnt', [ev('r1', 'view'), ev('r2', 'view'), ev('r3', 'view')], day(5) + 95, { reuse: first });
    const all = await s.ingestedPerDay('cnt', '2026-11-01', '2026-11-30');
    expect(Object.fromEntries(all.perDay)).toEqual({ '2026-11-03': 4, '2026-11-05': 33 });
    expect(all).toMatchObject({ firstCounted: '2026-11-03', oldestEventAt: day(3) });
    // Only the days asked for (both ends included); the first counted day whatever the range.
    expect(await s.ingestedPerDay('cnt', '2026-11-04', '2026-11-05')).toEqual({ perDay: new Map([['2026-11-05', 33]]), firstCounted: '2026-11-03', oldestEventAt: day(3) });
    expect(Object.fromEntries((await s.ingestedPerDay('cnt', '2026-11-03', '2026-11-03')).perDay)).toEqual({ '2026-11-03': 4 });
    expect((await s.ingestedPerDay('other', '2026-11-01', '2026-11-30')).perDay.size).toBe(0);
  });

  it('answers an ingest whose day count cannot be added: the events are stored by then', async () => {
    // The comment on countIngested: a count that cannot be added is logged, and the ingest answered
    // (an error would have the client send again events already stored).
    const failing: TableRef = {
      ...db.table,
      signed: {
        ...db.table.signed,
        updateItem: async (input, signal) => {
          if (Object.values(input.ExpressionAttributeNames ?? {}).includes('count')) throw new Error('throttled');
          return db.table.signed.updateItem(input, signal);
        },
      },
    };
    const s = dynamoEventStore(failing);
    const out = await s.append('uncounted', [ev('a', 'view'), ev('b', 'view')], 1000);
    expect(out.map((e) => e.id)).toEqual([1, 2]);
    expect((await s.get('uncounted', 2))?.user_id).toBe('b');
    expect((await s.ingestedPerDay('uncounted', '1970-01-01', '1970-01-01')).perDay.size).toBe(0);
  });

  it('counts the rows of an ingest that failed part way, and its retry only what it writes: every stored event once', async () => {
    // The second BatchWriteItem of the request fails outright (its 25 rows not stored), after the first stored its 25.
    let batches = 0;
    const failing: TableRef = {
      ...db.table,
      signed: {
        ...db.table.signed,
        batchWriteItem: async (input) => {
          if (++batches === 2) throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
          return db.table.signed.batchWriteItem(input);
        },
      },
    };
    const day = Date.UTC(2026, 10, 7) / 1000;
    const fifty = Array.from({ length: 50 }, (_, i) => ev(`p${i}`, 'view'));
    let reserved = 0;
    const attempt = dynamoEventStore(failing).append('partial', fifty, day, { reserved: async (first) => void (reserved = first) });
    await expect(attempt).rejects.toThrow('throttled');
    const counted = async () => (await db.stores.events.ingestedPerDay('partial', '2026-11-07', '2026-11-07')).perDay.get('2026-11-07');
    expect((await db.stores.events.list('partial', { limit: 100 })).rows).toHaveLength(25);
    expect(await counted()).toBe(25);
    // Its retry, under the ids it reserved, writes and counts the other 25.
    await db.stores.events.append('partial', fifty, day + 30, { reuse: reserved });
    expect((await db.stores.events.list('partial', { limit: 100 })).rows).toHaveLength(50);
    expect(await counted()).toBe(50);
  });

  it('reads an event and the unfiltered list consistently: what is acknowledged is found', async () => {
    const sent: { ConsistentRead?: boolean | undefined; IndexName?: string | undefined }[] = [];
    const watched: TableRef = {
      ...db.table,
      signed: {
        ...db.table.signed,
        getItem: async (input) => {
          sent.push(input);
          return db.table.signed.getItem(input);
        },
        query: async (input) => {
          sent.push(input);
          return db.table.signed.query(input);
        },
      },
    };
    const s = dynamoEventStore(watched);
    await s.append('consistent', [ev('a', 'view')], 1000);
    sent.length = 0;
    expect((await s.get('consistent', 1))?.user_id).toBe('a');
    expect((await s.list('consistent', { limit: 10 })).rows.map((e) => e.id)).toEqual([1]);
    expect((await s.list('consistent', { limit: 10, newestFirst: true })).rows.map((e) => e.id)).toEqual([1]);
    expect(sent.length).toBe(1 + 2 * EVENT_SHARDS);
    expect(sent.every((i) => i.ConsistentRead === true && i.IndexName === undefined)).toBe(true);
  });

  it('finds the first counted day whichever write shard holds it', async () => {
    const s = dynamoEventStore(db.table);
    const day = (d: number) => Date.UTC(2026, 10, d) / 1000;
    // Id 1 (shard 1) on the 3rd; ids 2 and 3 taken by requests that stored nothing; id 4 (shard 0) on the 5th.
    await s.append('cnt2', [ev('a', 'view')], day(3));
    await allocateIds(db.table, 'cnt2', 'event', 2);
    await s.append('cnt2', [ev('b', 'view')], day(5));
    expect(await s.ingestedPerDay('cnt2', '2026-11-01', '2026-11-30')).toEqual({
      perDay: new Map([
        ['2026-11-03', 1],
        ['2026-11-05', 1],
      ]),
      firstCounted: '2026-11-03',
      oldestEventAt: day(3),
    });
  });
});

describe('listing events while writes are in flight', () => {
  const ev = (user: string) => ({ type: 'view', user_id: user, item_id: '1', context_id: null, session_id: null, request_id: null, placement: null, extra: {} });
  const ids = (l: { data: { id: string }[] }) => l.data.map((e) => e.id);
  it('stops before a missing id whose successor is recent, and passes it once it is old', async () => {
    const { listEvents } = await import('../../shared/domain/events.ts');
    const s = db.stores.events;
    const T = 'inflight';
    const now = Math.floor(Date.now() / 1000);
    // Ids 1 and 2 stored, 3 taken by a write still under way, 4 stored.
    await s.append(T, [ev('a'), ev('b')], now);
    await s.append(T, [ev('d')], now, { reuse: 4 });
    const first = await listEvents(s, T, { limit: 20 }, now);
    expect(ids(first)).toEqual(['1', '2']);
    expect(first.has_more).toBe(false);
    expect(ids(await listEvents(s, T, { limit: 20, starting_after: 2 }, now))).toEqual([]);
    // Filtered by user or type, a page stops before the tenant's first id still being written:
    // that event may be the user's (or of the type), and a cursor past it would never show it.
    const byUser = await listEvents(s, T, { limit: 20, user_id: 'd' }, now);
    expect(ids(byUser)).toEqual([]);
    expect(byUser.has_more).toBe(false);
    expect(ids(await listEvents(s, T, { limit: 20, type: 'view' }, now))).toEqual(['1', '2']);
    expect(ids(await listEvents(s, T, { limit: 20, user_id: 'a' }, now))).toEqual(['1']);
    // The write lands: the same cursors read on.
    await s.append(T, [ev('c')], now, { reuse: 3 });
    expect(ids(await listEvents(s, T, { limit: 20, starting_after: 2 }, now))).toEqual(['3', '4']);
    expect(ids(await listEvents(s, T, { limit: 20, user_id: 'd' }, now))).toEqual(['4']);
    expect(ids(await listEvents(s, T, { limit: 20, type: 'view', starting_after: 2 }, now))).toEqual(['3', '4']);
    // A gap older than the in-flight window is an ingest that failed: passed.
    await s.append(T, [ev('f')], now, { reuse: 6 });
    expect(ids(await listEvents(s, T, { limit: 20, starting_after: 4 }, now))).toEqual([]);
    expect(ids(await listEvents(s, T, { limit: 20, starting_after: 4 }, now + 31))).toEqual(['6']);
    expect(ids(await listEvents(s, T, { limit: 20, user_id: 'f' }, now))).toEqual([]);
    expect(ids(await listEvents(s, T, { limit: 20, user_id: 'f' }, now + 31))).toEqual(['6']);
  });

  it('passes at once the gap an erasure left, however old the erased events (filtered or not), and up to 10,000 ids of it', async () => {
    // Found by a review (2026-12-05): the ids an erasure deleted were taken for ids still being
    // written, so the first event stored after them held every list for 30 s.
    const { listEvents } = await import('../../shared/domain/events.ts');
    const s = db.stores.events;
    const T = 'inflight-erased';
    const now = Math.floor(Date.now() / 1000);
    await s.append(T, [ev('v')], now - 3600);
    await s.append(
      T,
      Array.from({ length: 150 }, () => ev('gone')),
      now - 3600,
    );
    await s.eraseUser(T, 'gone');
    await s.append(T, [ev('v')], now);
    expect(ids(await listEvents(s, T, { limit: 20, starting_after: 1 }, now))).toEqual(['152']);
    expect(ids(await listEvents(s, T, { limit: 20, user_id: 'v' }, now))).toEqual(['1', '152']);
    expect(ids(await listEvents(s, T, { limit: 20, type: 'view' }, now))).toEqual(['1', '152']);
    // A gap of an id still being written beside the erased ones still holds the list.
    await allocateIds(db.table, T, 'event', 1);
    await s.append(T, [ev('v')], now);
    expect(ids(await listEvents(s, T, { limit: 20, starting_after: 152 }, now))).toEqual([]);
    expect(ids(await listEvents(s, T, { limit: 20, user_id: 'v' }, now))).toEqual(['1', '152']);
  });

  it('a filtered page reads the log back only to an event older than the in-flight window: gaps below it ended', async () => {
    const { listEvents } = await import('../../shared/domain/events.ts');
    const s = db.stores.events;
    const T = 'inflight2';
    const now = Math.floor(Date.now() / 1000);
    // Id 2 never written (an ingest that failed long ago), 3 stored long ago, 4 just now.
    await s.append(T, [ev('a')], now - 100, { reuse: 1 });
    await s.append(T, [ev('b')], now - 100, { reuse: 3 });
    await s.append(T, [ev('a')], now, { reuse: 4 });
    expect(ids(await listEvents(s, T, { limit: 20, user_id: 'a' }, now))).toEqual(['1', '4']);
  });

  it('holds a gap while its successor was stored under 30 s ago, passes it at 30 s, and a page it ends says has_more: false', async () => {
    // docs/api.md: "stored under 30 s ago ... the page ends there with has_more: false". A page
    // cut at the gap that kept the store's has_more would send a client on past the gap.
    const { listEvents } = await import('../../shared/domain/events.ts');
    const s = db.stores.events;
    const T = 'inflight3';
    const now = Math.floor(Date.now() / 1000);
    // Id 2 still being written; 1, 3 and 4 stored at `now`.
    await s.append(T, [ev('a')], now, { reuse: 1 });
    await s.append(T, [ev('c'), ev('d')], now, { reuse: 3 });
    const cut = await listEvents(s, T, { limit: 2 }, now);
    expect(ids(cut)).toEqual(['1']);
    expect(cut.has_more).toBe(false);
    expect(ids(await listEvents(s, T, { limit: 20 }, now + 29))).toEqual(['1']);
    const passed = await listEvents(s, T, { limit: 2 }, now + 30);
    expect(ids(passed)).toEqual(['1', '3']);
    expect(passed.has_more).toBe(true);
  });

  it('a filtered page of a tenant storing over 2,000 events in 30 s stops before its recent events (the read-back bound), and reads on when the start of the log is within it', async () => {
    // docs/api.md: the read-back reads at most 2,000 events; a tenant ingesting faster than that
    // holds its filtered pages before their last 30 s of events, the page's first recent one included.
    const { listEvents } = await import('../../shared/domain/events.ts');
    const s = db.stores.events;
    const now = Math.floor(Date.now() / 1000);
    await s.append(
      'inflight7',
      Array.from({ length: 2100 }, () => ev('a')),
      now,
      { reuse: 1 },
    );
    const held = await listEvents(s, 'inflight7', { limit: 20, user_id: 'a', starting_after: 2090 }, now);
    expect([ids(held), held.has_more]).toEqual([[], false]);
    expect(ids(await listEvents(s, 'inflight7', { limit: 20, user_id: 'a', starting_after: 2090 }, now + 30))).toHaveLength(10);
    // Within the bound it reads on: below a page ending at id 2000 the read-back reaches the log's
    // first event after 1,999 reads (32 + 128 + 512 + the rest), and finds no gap.
    const within = await listEvents(s, 'inflight7', { limit: 10, user_id: 'a', starting_after: 1990 }, now);
    expect(ids(within)).toEqual(Array.from({ length: 10 }, (_, i) => String(1991 + i)));
  });

  it('a filtered page: the first id missing holds it, the read-back ends at an event stored 30 s ago, and reads on past its first 32 events', async () => {
    const { listEvents } = await import('../../shared/domain/events.ts');
    const s = db.stores.events;
    const now = Math.floor(Date.now() / 1000);
    // Id 1 still being written (the tenant's first id): a page of the user's later event stops before it.
    await s.append('inflight4', [ev('a')], now, { reuse: 2 });
    expect(ids(await listEvents(s, 'inflight4', { limit: 20, user_id: 'a' }, now))).toEqual([]);
    // At 30 s the page holds no recent event and reads nothing back.
    expect(ids(await listEvents(s, 'inflight4', { limit: 20, user_id: 'a' }, now + 30))).toEqual(['2']);
    // Id 2 never written, 3 stored exactly 30 s ago (so 2's write has ended), 4 just now: 4 is listed.
    await s.append('inflight5', [ev('a')], now - 100, { reuse: 1 });
    await s.append('inflight5', [ev('b')], now - 30, { reuse: 3 });
    await s.append('inflight5', [ev('a')], now, { reuse: 4 });
    expect(ids(await listEvents(s, 'inflight5', { limit: 20, user_id: 'a' }, now))).toEqual(['1', '4']);
    // 40 events stored just now, none missing: the read-back below id 40 takes a first chunk of
    // 32, then the rest, and finds no gap (a full first chunk is not the start of the log).
    await s.append(
      'inflight6',
      Array.from({ length: 40 }, () => ev('a')),
      now,
      { reuse: 1 },
    );
    expect(ids(await listEvents(s, 'inflight6', { limit: 20, user_id: 'a', starting_after: 30 }, now))).toEqual(Array.from({ length: 10 }, (_, i) => String(31 + i)));
  });
});

describe("a user's events of a type", () => {
  it('are read a bounded stretch at a time: a page that did not fill ends where the read did, its next_cursor there', async () => {
    // Found by a review (2026-12-05): the console's Events filter (user and type) read the user's
    // whole history per page when the type was rare (3,001 rows for one purchase).
    const { listEvents } = await import('../../shared/domain/events.ts');
    const T = 'user-type-bound';
    const s = db.stores.events;
    await s.append(T, [ev('rare', 'purchase')], 100);
    for (let k = 0; k < 6; k++)
      await s.append(
        T,
        Array.from({ length: 500 }, () => ev('rare', 'view')),
        100,
      );
    await s.append(T, [ev('rare', 'purchase')], 100);
    const now = 10_000;
    // Newest first (the console's): the newest purchase, then a page that read its 2,000 rows and ends there.
    const first = await listEvents(s, T, { limit: 20, user_id: 'rare', type: 'purchase', order: 'desc' }, now);
    expect(first.data.map((e) => e.id)).toEqual(['3002']);
    expect([first.has_more, first.next_cursor]).toEqual([true, '1003']);
    const second = await listEvents(s, T, { limit: 20, user_id: 'rare', type: 'purchase', order: 'desc', starting_after: 1003 }, now);
    expect(second.data.map((e) => e.id)).toEqual(['1']);
    expect([second.has_more, second.next_cursor]).toEqual([false, null]);
    // Oldest first (the Core list): the same bound.
    const asc = await listEvents(s, T, { limit: 20, user_id: 'rare', type: 'purchase' }, now);
    expect(asc.data.map((e) => e.id)).toEqual(['1']);
    expect([asc.has_more, asc.next_cursor]).toEqual([true, '2000']);
    const rest = await listEvents(s, T, { limit: 20, user_id: 'rare', type: 'purchase', starting_after: 2000 }, now);
    expect(rest.data.map((e) => e.id)).toEqual(['3002']);
    expect(rest.has_more).toBe(false);
  });

  it('a page whose read stopped is held before an id still being written below where it stopped: its cursor would pass that event for good', async () => {
    // Found by a review (2026-12-06): the page's cursor was where the read stopped, past an id whose
    // write was under way, and a page with no row of its own read nothing back.
    const { listEvents } = await import('../../shared/domain/events.ts');
    const T = 'user-type-inflight';
    const s = db.stores.events;
    const now = Math.floor(Date.now() / 1000);
    // Views at ids 1-1,990 long ago; 1,991 (a purchase) still being written; views 1,992-2,101 just now.
    await s.append(
      T,
      Array.from({ length: 1990 }, () => ev('u', 'view')),
      now - 100,
    );
    await s.append(
      T,
      Array.from({ length: 110 }, () => ev('u', 'view')),
      now,
      { reuse: 1992 },
    );
    const page = (at: number) => listEvents(s, T, { limit: 20, user_id: 'u', type: 'purchase' }, at);
    const held = await page(now);
    expect([held.data, held.has_more, held.next_cursor]).toEqual([[], false, null]);
    // The purchase lands: the same request finds it, and pages on where its read stopped.
    await s.append(T, [ev('u', 'purchase')], now, { reuse: 1991 });
    const landed = await page(now);
    expect([landed.data.map((e) => e.id), landed.has_more, landed.next_cursor]).toEqual([['1991'], true, '2000']);
    // Had it never been written, the gap is passed once its successor is 30 s old.
    const T2 = 'user-type-inflight-old';
    await s.append(
      T2,
      Array.from({ length: 1990 }, () => ev('u', 'view')),
      now - 100,
    );
    await s.append(
      T2,
      Array.from({ length: 110 }, () => ev('u', 'view')),
      now - 40,
      { reuse: 1992 },
    );
    const passed = await listEvents(s, T2, { limit: 20, user_id: 'u', type: 'purchase' }, now);
    expect([passed.data, passed.has_more, passed.next_cursor]).toEqual([[], true, '2001']);
    // A gap right below where the read stopped, every row old (a write that failed long ago): not
    // held (a review found such a page held for good, has_more false, the purchase never listed).
    const T3 = 'user-type-old-gap';
    await s.append(
      T3,
      Array.from({ length: 1999 }, () => ev('u', 'view')),
      now - 100,
    );
    await s.append(
      T3,
      Array.from({ length: 100 }, () => ev('u', 'view')),
      now - 100,
      { reuse: 2001 },
    );
    await s.append(T3, [ev('u', 'purchase')], now - 100, { reuse: 2101 });
    const old = await listEvents(s, T3, { limit: 20, user_id: 'u', type: 'purchase' }, now);
    expect([old.data, old.has_more, old.next_cursor]).toEqual([[], true, '2001']);
    expect((await listEvents(s, T3, { limit: 20, user_id: 'u', type: 'purchase', starting_after: 2001 }, now)).data.map((e) => e.id)).toEqual(['2101']);
  });
});

describe('a page of large events', () => {
  it("fits the answer a Lambda function may give (6 MB) newest first too (the console's list), the rest on the next page", async () => {
    const { listEvents } = await import('../../shared/domain/events.ts');
    const s = db.stores.events;
    const T = 'large-events';
    const now = Math.floor(Date.now() / 1000);
    // A payload of 16,000 quotes, held twice by the answer (at top level and in metadata), escaped again by Lambda.
    const large = { type: 'view', user_id: 'reader', item_id: '1', context_id: null, session_id: null, request_id: null, placement: null, payload: { k: '"'.repeat(16_000) }, extra: {} };
    for (let b = 0; b < 5; b++)
      await s.append(
        T,
        Array.from({ length: 20 }, () => large),
        now,
      );
    const seen: string[] = [];
    let after: number | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const p = await listEvents(s, T, { limit: 100, order: 'desc', ...(after !== undefined ? { starting_after: after } : {}) }, now);
      expect(Buffer.byteLength(JSON.stringify({ statusCode: 200, body: JSON.stringify(p) }))).toBeLessThan(6 * 1024 * 1024);
      seen.push(...p.data.map((e) => e.id));
      if (!p.has_more) break;
      expect(p.next_cursor).toBe(p.data.at(-1)?.id);
      after = Number(p.next_cursor);
    }
    expect(seen.length).toBe(100);
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => String(100 - i)));
  });
});
