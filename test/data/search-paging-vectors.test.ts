/**
 * Search pages while vectors land (a review of the cursor's \`vectorsAsOf\`, 2026-12-05): the
 * first page's view holds some vectors; later pages must score every item as it did (no repeats,
 * no skips), whatever lands between pages, however the view was read, whichever clock saved them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ItemStore, NewEvent } from '../../shared/domain/types.ts';
import { FolderBlobStore } from '../../shared/blob.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { buildIndex, embedItem } from '../../shared/search/indexer.ts';
import { runSearch } from '../../shared/search/service.ts';
import { SEARCH_SETTINGS } from '../../shared/search/settings.ts';
import { tenantView } from '../../shared/search/views.ts';
import { nowMs, nowSeconds, setClock } from '../../shared/clock.ts';
import { NO_FILTER } from '../../shared/search/engine.ts';
import { testTable, type TestTable } from '../helpers/table.ts';
import { nextSecond } from '../helpers/clock.ts';

let db: TestTable;
let dir: string;
beforeAll(async () => {
  db = await testTable();
  dir = mkdtempSync(join(tmpdir(), 'scratch-vasof-'));
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});
const fixture = () => ({ items: db.stores.items, events: db.stores.events, blobs: new FolderBlobStore(dir), embedder: new HashingEmbedding() });
async function withSettings<T>(over: Partial<typeof SEARCH_SETTINGS>, fn: () => Promise<T>): Promise<T> {
  const before = { ...SEARCH_SETTINGS };
  Object.assign(SEARCH_SETTINGS, over);
  try {
    return await fn();
  } finally {
    Object.assign(SEARCH_SETTINGS, before);
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const decode = (c: string | null) => JSON.parse(Buffer.from(c as string, 'base64url').toString()) as unknown[];
type Req = Parameters<typeof runSearch>[2];
async function pageAll(deps: Parameters<typeof runSearch>[0], T: string, req: Req, first: { data: { id: string }[]; next_cursor: string | null }) {
  const served = first.data.map((h) => String(h.id));
  let cursor = first.next_cursor;
  for (let k = 0; cursor && k < 50; k++) {
    const page = await runSearch(deps, T, { ...req, cursor });
    served.push(...page.data.map((h) => String(h.id)));
    cursor = page.next_cursor;
  }
  return served;
}

/** `n` camping tents, each described a little differently. */
const tents = (n: number) => Array.from({ length: n }, (_, k) => ({ name: `Camping tent ${k}`, description: `${'sturdy '.repeat(k)}shelter, tent pegs included` }));

/** Six tents embedded and built, then three created after the build, their embeddings not saved yet (answered). */
async function builtAndLate(base: ReturnType<typeof fixture>, T: string) {
  const now = Math.floor(Date.now() / 1000) - 5;
  const made = await base.items.create(T, tents(6), now);
  for (const i of made) await embedItem(base.items, base.embedder, T, i.id);
  await buildIndex(base.items, base.blobs, base.embedder.dimensions, T, now + 1);
  return base.items.create(
    T,
    Array.from({ length: 3 }, (_, k) => ({ name: `Tent ${k}`, description: 'tent tent tent, the tent' })),
    Math.floor(Date.now() / 1000),
  );
}

/**
 * Item `id` given a price and the edit undone, then embedded anew: its vector of before, saved now
 * (a later page's view tells it from the first page's only by when it was saved). The next clock
 * second first: a view takes a change stamped in the second of the version it holds for that version.
 */
async function reEmbedAsItWas(base: ReturnType<typeof fixture>, T: string, id: number) {
  await nextSecond();
  const before = (await base.items.getForEmbedding(T, id))?.item.metadata ?? {};
  await base.items.update(T, id, { metadata: { ...before, price: 129 } }, Math.floor(Date.now() / 1000));
  await base.items.update(T, id, { metadata: before }, Math.floor(Date.now() / 1000));
  expect(await embedItem(base.items, base.embedder, T, id)).toBe('embedded');
}

const encode = (v: unknown[]) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A catalog of tents, 8 of them for a garden party, embedded and built. */
async function gardenTentsBuilt(T: string) {
  const base = fixture();
  const now = Math.floor(Date.now() / 1000) - 5;
  const made = await base.items.create(
    T,
    [...tents(8), ...Array.from({ length: 8 }, (_, k) => ({ name: `Tent for the garden ${k}`, description: `${'garden '.repeat(k)} tent for a party in the garden` }))],
    now,
  );
  for (const i of made) await embedItem(base.items, base.embedder, T, i.id);
  await buildIndex(base.items, base.blobs, base.embedder.dimensions, T, now + 1);
  return base;
}

/**
 * A built catalog of tents (gardenTentsBuilt), and a garden party marquee created since the build
 * and embedded (in the delta with its vector) that user u1 viewed: the first page's taste.
 */
async function viewedSinceTheBuild(T: string) {
  const base = await gardenTentsBuilt(T);
  const [created] = await base.items.create(T, [{ name: 'Garden party marquee', description: 'garden garden garden party marquee' }], Math.floor(Date.now() / 1000));
  const liked = created?.id as number;
  await embedItem(base.items, base.embedder, T, liked);
  const ev: NewEvent = { type: 'view', user_id: 'u1', item_id: String(liked), context_id: null, session_id: null, request_id: null, placement: null, extra: {} };
  await db.stores.events.append(T, [ev], Math.floor(Date.now() / 1000));
  await sleep(20);
  return { base, liked, user: { id: 'u1', erased: Promise.resolve(undefined) } };
}

describe('pages while vectors land', () => {
  it("a vector saved while the read that put it in the first page's view ran counts on its later pages (the same view)", async () => {
    const T = 'during-read';
    const base = fixture();
    const late = await builtAndLate(base, T);
    let armed = false;
    const items: ItemStore = {
      ...base.items,
      changeKeysSince: async (...a: Parameters<ItemStore['changeKeysSince']>) => {
        const listed = await base.items.changeKeysSince(...a);
        if (armed) {
          armed = false;
          // The embedding worker saves these while the read runs (after it started, before it reads them).
          await nextSecond();
          for (const i of late) await embedItem(base.items, base.embedder, T, i.id);
        }
        return listed;
      },
    };
    const deps = { ...base, items };
    await tenantView(deps, T);
    const req: Req = { query: 'tent', mode: 'semantic', filter: NO_FILTER, limit: 2, listOf: 'b' };
    // Some change the next read lists as new (so it reads on from there).
    await base.items.create(T, [{ name: 'Lamp' }], Math.floor(Date.now() / 1000));
    armed = true;
    const first = await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, req));
    expect(armed).toBe(false);
    // The view is not read again from here on (the TTL is long): every page ranks on the same view.
    const all = (await withSettings({ deltaTtlMs: 3_600_000 }, () => runSearch(deps, T, { ...req, limit: 100 }))).data.map((h) => String(h.id));
    expect(first.data.map((h) => String(h.id))).toEqual(all.slice(0, 2));
    const served = await withSettings({ deltaTtlMs: 3_600_000 }, () => pageAll(deps, T, req, first));
    expect(served).toEqual(all);
  });

  it("a first page served behind (its view's first read still running): its later pages keep the vectors it had", async () => {
    const T = 'behind-first';
    const base = fixture();
    const now = Math.floor(Date.now() / 1000) - 5;
    const made = await base.items.create(T, tents(8), now);
    for (const i of made) await embedItem(base.items, base.embedder, T, i.id);
    let slow = true;
    const items: ItemStore = {
      ...base.items,
      changedSince: async (...a: Parameters<ItemStore['changedSince']>) => {
        if (slow && a[3] !== undefined) await sleep(700);
        return base.items.changedSince(...a);
      },
    };
    const deps = { ...base, items };
    const req: Req = { query: 'tent', mode: 'semantic', filter: NO_FILTER, limit: 2, listOf: 'a' };
    const first = await withSettings({ readWaitMs: 100, deltaPage: 4, firstReadRanges: 1 }, () => runSearch(deps, T, req));
    expect(first.next_cursor).not.toBeNull();
    slow = false;
    await sleep(2000);
    await tenantView(deps, T);
    const second = await runSearch(deps, T, { ...req, cursor: first.next_cursor as string });
    // Page 1 had 3+ vector matches in its view (it said more follow): page 2 serves the rest of them
    // (it served none when the cursor named the view's read time, 0 before a whole read).
    expect(second.data.length).toBeGreaterThan(0);
  });

  it("the user's taste on a later page leaves out the vector of an item of their events saved since the first page", async () => {
    const T = 'taste-lands';
    const base = await gardenTentsBuilt(T);
    // The user viewed a garden party tent: created now, its vector not saved yet.
    const [liked] = await base.items.create(T, [{ name: 'Garden party marquee', description: 'garden garden garden party marquee' }], Math.floor(Date.now() / 1000));
    const ev = (user: string, type: string, item: number): NewEvent => ({
      type,
      user_id: user,
      item_id: String(item),
      context_id: null,
      session_id: null,
      request_id: null,
      placement: null,
      extra: {},
    });
    await db.stores.events.append(T, [ev('u1', 'view', liked?.id as number)], Math.floor(Date.now() / 1000));
    const deps = base;
    const user = { id: 'u1', erased: Promise.resolve(undefined) };
    const req: Req = { query: 'tent', mode: 'hybrid', filter: NO_FILTER, limit: 3, listOf: 'e', user };
    const all = (await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, { ...req, limit: 100 }))).data.map((h) => String(h.id));
    const first = await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, req));
    await sleep(20);
    await embedItem(base.items, base.embedder, T, liked?.id as number);
    const served = await withSettings({ deltaTtlMs: 0 }, () => pageAll(deps, T, req, first));
    expect(served).toEqual(all);
  });

  it("the user's taste on a later page keeps the vector the first page's had of an item of their events re-embedded since (the build's)", async () => {
    const T = 'taste-re-embedded';
    const base = fixture();
    const now = Math.floor(Date.now() / 1000) - 5;
    // The user viewed a garden party marquee (no match of the query), embedded and built with the tents.
    const made = await base.items.create(
      T,
      [
        ...tents(8),
        ...Array.from({ length: 8 }, (_, k) => ({ name: `Tent for the garden ${k}`, description: `${'garden '.repeat(k)} tent for a party in the garden` })),
        { name: 'Garden party marquee', description: 'garden garden garden party marquee' },
      ],
      now,
    );
    for (const i of made) await embedItem(base.items, base.embedder, T, i.id);
    await buildIndex(base.items, base.blobs, base.embedder.dimensions, T, now + 1);
    const liked = made[made.length - 1]?.id as number;
    const ev: NewEvent = { type: 'view', user_id: 'u1', item_id: String(liked), context_id: null, session_id: null, request_id: null, placement: null, extra: {} };
    await db.stores.events.append(T, [ev], Math.floor(Date.now() / 1000));
    const deps = base;
    const user = { id: 'u1', erased: Promise.resolve(undefined) };
    const req: Req = { query: 'tent', mode: 'hybrid', filter: NO_FILTER, limit: 3, listOf: 'r', user };
    const all = (await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, { ...req, limit: 100 }))).data.map((h) => String(h.id));
    const first = await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, req));
    // Given a price after the first page, and embedded anew (its vector saved after that page's
    // view). Until 2026-12-07 later pages' taste left it out (the user's taste was then none), and
    // every score moved between pages.
    await base.items.update(T, liked, { metadata: { price: 129 } }, Math.floor(Date.now() / 1000));
    await sleep(20);
    await embedItem(base.items, base.embedder, T, liked);
    const served = await withSettings({ deltaTtlMs: 0 }, () => pageAll(deps, T, req, first));
    expect(served).toEqual(all);
  });

  it("the user's taste on a later page keeps a vector of an item of their events created since the build and re-embedded after the first page (its current one)", async () => {
    const T = 'taste-created-re-embedded';
    const { base, liked, user } = await viewedSinceTheBuild(T);
    const deps = base;
    // Browsing orders by the taste alone; a query's hybrid scores weigh it.
    for (const [label, query, mode] of [
      ['browse', '', 'hybrid'],
      ['hybrid', 'tent', 'hybrid'],
    ] as const) {
      const req: Req = { query, mode, filter: NO_FILTER, limit: 3, listOf: `t-${label}`, user };
      const all = (await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, { ...req, limit: 100 }))).data.map((h) => String(h.id));
      const first = await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, req));
      // Given a price after the first page and the edit undone, then embedded anew: the vector the
      // first page's taste held, saved since (the build holds none of the item). Until 2026-12-07
      // later pages' taste left it out (the user's taste was then none), and every score moved
      // between pages.
      await reEmbedAsItWas(base, T, liked);
      const served = await withSettings({ deltaTtlMs: 0 }, () => pageAll(deps, T, req, first));
      expect(served, label).toEqual(all);
    }
  });

  it("the user's taste keeps that vector also when the first page's build is gone and a newer one holds it", async () => {
    const T = 'taste-created-re-embedded-newer-build';
    const { base, liked, user } = await viewedSinceTheBuild(T);
    const deps = base;
    const req: Req = { query: '', mode: 'hybrid', filter: NO_FILTER, limit: 3, listOf: 'tn', user };
    await withSettings({ deltaTtlMs: 0 }, async () => {
      const all = (await runSearch(deps, T, { ...req, limit: 100 })).data.map((h) => String(h.id));
      const first = await runSearch(deps, T, req);
      await reEmbedAsItWas(base, T, liked);
      // A newer build holds the item's vector saved after the first page; the first page's build is gone.
      await nextSecond();
      const b2 = await buildIndex(base.items, base.blobs, base.embedder.dimensions, T);
      await withSettings({ pointerCheckMs: 0 }, async () => {
        for (let k = 0; k < 50 && decode((await runSearch(deps, T, req)).next_cursor)[2] !== b2.builtAt; k++) await sleep(100);
      });
      const c = decode(first.next_cursor);
      c[2] = 12345;
      const served = await pageAll(deps, T, req, { ...first, next_cursor: encode(c) });
      expect(served).toEqual(all);
    });
  });

  it('diversity on a later page compares an item created since the build and re-embedded after the first page by its current vector, not as one without a vector', async () => {
    const T = 'diversity-created-re-embedded';
    const base = fixture();
    const now = Math.floor(Date.now() / 1000) - 5;
    const made = await base.items.create(T, tents(9), now);
    for (const i of made) await embedItem(base.items, base.embedder, T, i.id);
    await buildIndex(base.items, base.blobs, base.embedder.dimensions, T, now + 1);
    // Created since the build, embedded before the first page: in the delta with its vector.
    const [created] = await base.items.create(T, [{ name: 'Camping tent 9', description: `${'sturdy '.repeat(4)}shelter, tent pegs included` }], Math.floor(Date.now() / 1000));
    const id = created?.id as number;
    await embedItem(base.items, base.embedder, T, id);
    await sleep(20);
    const deps = base;
    const plan = { contextId: 1, at: nowSeconds(), rules: [], controls: { diversity: 0.9 }, assignment: null };
    const req: Req = { query: 'tent', mode: 'keyword', filter: NO_FILTER, limit: 3, listOf: 'diverse-created', plan };
    const all = (await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, { ...req, limit: 100 }))).data.map((h) => String(h.id));
    const first = await withSettings({ deltaTtlMs: 0 }, () => runSearch(deps, T, req));
    // Its vector of the first page saved anew after it. Until 2026-12-07 later pages compared it as
    // an item without a vector (similar to none), which diversity moved across the positions.
    await reEmbedAsItWas(base, T, id);
    const served = await withSettings({ deltaTtlMs: 0 }, () => pageAll(deps, T, req, first));
    expect(served).toEqual(all);
  });

  it("an embedding worker whose clock runs 2 s ahead of the search container's: later pages keep the first page's vectors", async () => {
    const T = 'skew';
    const base = fixture();
    const late = await builtAndLate(base, T);
    // The worker's clock: 2 s ahead of the search container's.
    const restore = setClock({ nowMs: () => Date.now() + 2000 });
    try {
      for (const i of late) await embedItem(base.items, base.embedder, T, i.id);
    } finally {
      restore();
    }
    const deps = base;
    const req: Req = { query: 'tent', mode: 'semantic', filter: NO_FILTER, limit: 2, listOf: 'd' };
    const first = await runSearch(deps, T, req);
    await withSettings({ deltaTtlMs: 3_600_000 }, async () => {
      const all = (await runSearch(deps, T, { ...req, limit: 100 })).data.map((h) => String(h.id));
      expect(all).toEqual(expect.arrayContaining(late.map((i) => String(i.id))));
      const served = await pageAll(deps, T, req, first);
      expect(served).toEqual(all);
    });
  });

  it('a newer build holding vectors saved after the first page (its build gone): later pages leave them out too', async () => {
    const T = 'newer-build';
    const items = db.stores.items;
    const blobs = new FolderBlobStore(dir);
    const embedder = new HashingEmbedding();
    const deps = { items, events: db.stores.events, blobs, embedder };
    const now = Math.floor(Date.now() / 1000) - 5;
    const made = await items.create(
      T,
      Array.from({ length: 10 }, (_, k) => ({ name: `Garden bench ${k}`, description: `${'wooden '.repeat(k)}bench for the garden, birdbath beside` })),
      now,
    );
    for (const i of made) await embedItem(items, embedder, T, i.id);
    await buildIndex(items, blobs, embedder.dimensions, T, now + 1);
    const late = await items.create(
      T,
      Array.from({ length: 12 }, (_, i) => ({ name: `Model ${i}`, description: `a birdbath for the garden, number ${i}` })),
      now + 2,
    );
    // The clock from here: real time moved to 50 ms into a second.
    const offset = (Math.ceil(Date.now() / 1000) + 1) * 1000 + 50 - Date.now();
    const restore = setClock({ nowMs: () => Date.now() + offset });
    const before = { ...SEARCH_SETTINGS };
    try {
      SEARCH_SETTINGS.deltaTtlMs = 0;
      const req: Req = { query: 'birdbath', mode: 'hybrid', filter: NO_FILTER, limit: 5, listOf: 'c' };
      const first = await runSearch(deps, T, req);
      const asOf = decode(first.next_cursor)[6] as number;
      // Their vectors land after that page.
      for (const i of late) await embedItem(items, embedder, T, i.id);
      expect(nowMs()).toBeGreaterThan(asOf);
      // A newer build holds them; the first page's build is gone.
      await sleep(1000 - (nowMs() % 1000) + 20);
      const b2 = await buildIndex(items, blobs, embedder.dimensions, T);
      expect(b2.builtAt * 1000).toBeGreaterThan(asOf);
      SEARCH_SETTINGS.pointerCheckMs = 0;
      // This container loads the newer build (serving the one it has meanwhile).
      for (let k = 0; k < 50; k++) {
        const r = await runSearch(deps, T, req);
        if (decode(r.next_cursor)[2] === b2.builtAt) break;
        await sleep(100);
      }
      // The first page's build named as one no longer kept: its later pages rank on the newer one.
      const c = decode(first.next_cursor);
      c[2] = 12345;
      let cursor: string | null = encode(c);
      const served = first.data.map((h) => String(h.id));
      while (cursor) {
        const page = await runSearch(deps, T, { ...req, cursor });
        served.push(...page.data.map((h) => String(h.id)));
        cursor = page.next_cursor;
      }
      expect(new Set(served).size).toBe(served.length);
      expect(served).toEqual(expect.arrayContaining(late.map((i) => String(i.id))));
    } finally {
      Object.assign(SEARCH_SETTINGS, before);
      restore();
    }
  });
});
