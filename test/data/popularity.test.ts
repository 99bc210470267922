import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import { PopularSnapshot } from '../../shared/data/entities.ts';
import { getRow } from '../../shared/data/ops.ts';
import { dynamoPopularitySnapshots } from '../../shared/data/popularity.ts';
import type { EventStore, NewEvent } from '../../shared/domain/types.ts';
import type { PopularitySnapshot, PopularitySnapshots } from '../../shared/recs/trending.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * Popularity without a model (shared/recs/trending.ts) over a table: a container with no count
 * of its own serves the tenant's stored snapshot (one GetItem) instead of listing 20,000 events
 * on the request's time. Each "container" is a fresh import of trending.ts (its cache empty).
 */

let db: TestTable;
let snapshots: PopularitySnapshots;
let dir: string;
beforeAll(async () => {
  db = await testTable();
  snapshots = dynamoPopularitySnapshots(db.table);
  dir = mkdtempSync(join(tmpdir(), 'popularity-test-'));
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const ev = (item: string): NewEvent => ({ type: 'view', user_id: 'u', item_id: item, context_id: null, session_id: null, request_id: null, placement: null, extra: {} });

/** The table's event store, counting its `latest` calls; each waits for `gate` when one is set. */
function countingEvents() {
  const inner = db.stores.events;
  const out = {
    calls: 0,
    gate: undefined as Promise<void> | undefined,
    store: {
      ...inner,
      latest: async (tenant: string, limit: number, below?: number) => {
        out.calls++;
        if (out.gate) await out.gate;
        return inner.latest(tenant, limit, below);
      },
    } satisfies EventStore,
  };
  return out;
}

/** A new container: trending.ts imported afresh, nothing counted. */
async function container() {
  vi.resetModules();
  return (await import('../../shared/recs/trending.ts')).trendingScores;
}

/** The snapshot stores as they are written (the container writes beside the requests). */
function watched(s: PopularitySnapshots) {
  const writes: Promise<void>[] = [];
  return { writes, store: { read: s.read, write: (t: string, x: PopularitySnapshot) => (writes.push(s.write(t, x)), writes.at(-1) as Promise<void>) } };
}

const sorted = (m: Map<number, number>) => [...m].sort((a, b) => a[0] - b[0]);

describe('popularity snapshot', () => {
  it('is stored by the first count; a new container serves it without listing events, the same scores as a count', async () => {
    const tenant = 'pop-a';
    await db.stores.events.append(tenant, ['1', '1', '1', '2', '2', '3', 'not-a-catalog-id'].map(ev), 1_000);
    const first = countingEvents();
    const w = watched(snapshots);
    const counted = await (await container())(first.store, tenant, undefined, w.store);
    expect(first.calls).toBe(1);
    expect(sorted(counted)).toEqual([
      [1, 1],
      [2, 2 / 3],
      [3, 1 / 3],
    ]);
    await Promise.all(w.writes);
    expect(w.writes).toHaveLength(1);
    const stored = await snapshots.read(tenant);
    expect(stored?.events).toBe(20_000);
    expect(stored?.top).toEqual([
      [1, 3],
      [2, 2],
      [3, 1],
    ]);

    const second = countingEvents();
    const served = await (await container())(second.store, tenant, undefined, snapshots);
    expect(second.calls).toBe(0);
    expect(sorted(served)).toEqual(sorted(counted));
  });

  it('older than 30 s (an hour here) is served at once while a count runs beside the request, which stores the new count', async () => {
    const tenant = 'pop-b';
    await db.stores.events.append(tenant, ['5', '6', '6'].map(ev), 1_000);
    const hourAgo = Date.now() - 3_600_000;
    await snapshots.write(tenant, { countedAt: hourAgo, events: 20_000, top: [[4, 2]] });
    const events = countingEvents();
    let release: () => void = () => undefined;
    events.gate = new Promise((r) => (release = r));
    const w = watched(snapshots);
    const trendingScores = await container();
    // The count is held at its read: the answer comes from the snapshot all the same.
    expect([...(await trendingScores(events.store, tenant, undefined, w.store))]).toEqual([[4, 1]]);
    expect([...(await trendingScores(events.store, tenant, undefined, w.store))]).toEqual([[4, 1]]);
    expect(events.calls).toBe(1);
    release();
    await vi.waitFor(() => expect(w.writes).toHaveLength(1));
    await Promise.all(w.writes);
    expect(sorted(await trendingScores(events.store, tenant, undefined, w.store))).toEqual([
      [5, 0.5],
      [6, 1],
    ]);
    const stored = await snapshots.read(tenant);
    expect(stored?.countedAt).toBeGreaterThan(hourAgo);
    expect(stored?.top).toEqual([
      [6, 2],
      [5, 1],
    ]);
  });

  it('absent (a tenant never counted): the first count is waited for, as without snapshots', async () => {
    const tenant = 'pop-c';
    await db.stores.events.append(tenant, ['7'].map(ev), 1_000);
    const events = countingEvents();
    let release: () => void = () => undefined;
    events.gate = new Promise((r) => (release = r));
    const answer = (await container())(events.store, tenant, undefined, snapshots);
    let answered = false;
    void answer.then(() => (answered = true));
    await vi.waitFor(() => expect(events.calls).toBe(1));
    await new Promise((r) => setTimeout(r, 20));
    expect(answered).toBe(false);
    release();
    expect([...(await answer)]).toEqual([[7, 1]]);
  });

  it('keeps a later count: an older one stored after it is not written', async () => {
    const tenant = 'pop-d';
    await snapshots.write(tenant, { countedAt: 2_000, events: 20_000, top: [[1, 1]] });
    await snapshots.write(tenant, { countedAt: 1_000, events: 20_000, top: [[2, 1]] });
    expect((await snapshots.read(tenant))?.top).toEqual([[1, 1]]);
    await snapshots.write(tenant, { countedAt: 3_000, events: 20_000, top: [[3, 1]] });
    expect(await snapshots.read(tenant)).toEqual({ countedAt: 3_000, events: 20_000, top: [[3, 1]] });
  });

  it('holds at most the top 4,000 items, 12 bytes each (far below the 400 KB item limit), ids up to the largest safe integer', async () => {
    const { SNAPSHOT_ITEMS, topCounts } = await import('../../shared/recs/trending.ts');
    const counts = new Map<number, number>();
    for (let i = 0; i < 10_000; i++) counts.set(Number.MAX_SAFE_INTEGER - i, 1 + (i % 9));
    const top = topCounts(counts, SNAPSHOT_ITEMS);
    expect(top).toHaveLength(4000);
    const tenant = 'pop-e';
    await snapshots.write(tenant, { countedAt: 1, events: 20_000, top });
    const row = await getRow(db.table, PopularSnapshot.key({ tenant }));
    expect(row?.top).toBeInstanceOf(Uint8Array);
    expect((row?.top as Uint8Array | undefined)?.byteLength).toBe(48_000);
    expect((await snapshots.read(tenant))?.top).toEqual(top);
    // Most counted first, ties by lower id: what the popular fill takes first.
    expect(top[0]).toEqual([Number.MAX_SAFE_INTEGER - 9_998, 9]);
  });

  it("serves a new container's first recommendation without a model from the snapshot: the popular strategy, no event listed on its time", async () => {
    const tenant = 'pop-f';
    const now = Math.floor(Date.now() / 1000);
    const made = await db.stores.items.create(
      tenant,
      ['a', 'b', 'c'].map((name) => ({ name })),
      now,
    );
    const [a, b, c] = made.map((i) => Number(i.id));
    // The events would say otherwise (c most, then a): the snapshot, counted a minute ago, is served.
    await db.stores.events.append(tenant, [String(c), String(c), String(a)].map(ev), now);
    await snapshots.write(tenant, {
      countedAt: Date.now() - 60_000,
      events: 20_000,
      top: [
        [b as number, 4],
        [a as number, 2],
      ],
    });
    const events = countingEvents();
    let release: () => void = () => undefined;
    events.gate = new Promise((r) => (release = r));
    vi.resetModules();
    const { recommend } = await import('../../shared/recs/serve.ts');
    const { tenantView } = await import('../../shared/search/views.ts');
    const blobs = new FolderBlobStore(dir);
    const deps = {
      console: db.stores.console,
      events: events.store,
      popularSnapshots: snapshots,
      blobs,
      catalog: (t: string) => tenantView({ items: db.stores.items, events: db.stores.events, blobs, embedder: new HashingEmbedding() }, t),
    };
    const r = await recommend(deps, tenant, { user_id: 'someone', limit: 2, include_seen: false, explain: false }, 'req');
    expect(r.strategy).toBe('popular');
    expect(r.data.map((d) => [d.item_id, d.score])).toEqual([
      [String(b), 1],
      [String(a), 0.5],
    ]);
    // Only the count beside the request (older than 30 s), held at its read until now.
    expect(events.calls).toBe(1);
    release();
  });
});

describe("a later search page's popularity (trendingScoresAsOf)", () => {
  /** The table's event store, adding up the events its `latest` read. */
  function readingEvents() {
    const inner = db.stores.events;
    const out = {
      read: 0,
      store: {
        ...inner,
        latest: async (tenant: string, limit: number, below?: number) => {
          const rows = await inner.latest(tenant, limit, below);
          out.read += rows.length;
          return rows;
        },
      } satisfies EventStore,
    };
    return out;
  }
  const trending = async () => {
    vi.resetModules();
    return import('../../shared/recs/trending.ts');
  };
  const itemOf = (i: number) => String(1 + ((i * 7) % 13));

  it("another container's count is made from its own, reading the events between the two counts (and as many at the window's end), not the whole window again: the same scores as a count of the window", async () => {
    const tenant = 'pop-slide';
    const n = 40;
    await db.stores.events.append(
      tenant,
      Array.from({ length: 100 }, (_, i) => ev(itemOf(i))),
      1_000,
    );
    const a = await trending();
    const atA = await a.trendingPopularity(db.stores.events, tenant, n);
    // Events between the two containers' counts (and one not of the catalog).
    await db.stores.events.append(tenant, [...Array.from({ length: 5 }, (_, i) => ev(itemOf(3 * i))), ev('not-a-catalog-id')], 1_001);
    const b = await trending();
    const atB = await b.trendingPopularity(db.stores.events, tenant, n);
    expect(atB.upTo).toBe((atA.upTo as number) + 6);
    expect(sorted(atB.scores)).not.toEqual(sorted(atA.scores));
    // B's page after A's first page: the 6 newer events leave, the 6 below B's oldest come in.
    const onB = readingEvents();
    expect(sorted(await b.trendingScoresAsOf(onB.store, tenant, atA.upTo as number, n))).toEqual(sorted(atA.scores));
    expect(onB.read).toBe(12);
    // A's page after B's first page: the 6 come in, A's 6 oldest leave.
    const onA = readingEvents();
    expect(sorted(await a.trendingScoresAsOf(onA.store, tenant, atB.upTo as number, n))).toEqual(sorted(atB.scores));
    expect(onA.read).toBeLessThanOrEqual(12);
    // A container with no count of its own counts the window again: the same scores.
    const c = await trending();
    const onC = readingEvents();
    expect(sorted(await c.trendingScoresAsOf(onC.store, tenant, atA.upTo as number, n))).toEqual(sorted(atA.scores));
    expect(onC.read).toBe(n);
  });

  it('made from a count of a short log (fewer events than the window), and across a gap in the ids', async () => {
    const tenant = 'pop-slide-short';
    const n = 40;
    await db.stores.events.append(
      tenant,
      Array.from({ length: 12 }, (_, i) => ev(itemOf(i))),
      1_000,
    );
    const a = await trending();
    const atA = await a.trendingPopularity(db.stores.events, tenant, n);
    await db.stores.events.append(
      tenant,
      Array.from({ length: 4 }, (_, i) => ev(itemOf(i + 5))),
      1_001,
    );
    const b = await trending();
    const atB = await b.trendingPopularity(db.stores.events, tenant, n);
    expect(sorted(await b.trendingScoresAsOf(db.stores.events, tenant, atA.upTo as number, n))).toEqual(sorted(atA.scores));
    expect(sorted(await a.trendingScoresAsOf(db.stores.events, tenant, atB.upTo as number, n))).toEqual(sorted(atB.scores));

    // A full window whose oldest events have a gap after them (ids 6-8 handed out to events not
    // stored): the window's oldest two are 4 and 5, then 9.
    const gapped = 'pop-slide-gap';
    const m = 10;
    await db.stores.events.append(
      gapped,
      Array.from({ length: 5 }, (_, i) => ev(itemOf(i))),
      1_000,
    );
    await db.stores.events.append(gapped, [ev('1'), ev('2'), ev('3')], 1_000, undefined, new Set(['u']));
    await db.stores.events.append(
      gapped,
      Array.from({ length: 8 }, (_, i) => ev(itemOf(i + 6))),
      1_000,
    );
    const x = await trending();
    const atX = await x.trendingPopularity(db.stores.events, gapped, m);
    expect(atX.upTo).toBe(16);
    await db.stores.events.append(
      gapped,
      Array.from({ length: 4 }, (_, i) => ev(itemOf(i + 2))),
      1_001,
    );
    const y = await trending();
    const atY = await y.trendingPopularity(db.stores.events, gapped, m);
    expect(sorted(await x.trendingScoresAsOf(db.stores.events, gapped, atY.upTo as number, m))).toEqual(sorted(atY.scores));
    expect(sorted(await y.trendingScoresAsOf(db.stores.events, gapped, atX.upTo as number, m))).toEqual(sorted(atX.scores));
  });
});
