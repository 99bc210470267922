import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import { controlDepsOf } from '../../shared/control/deps.ts';
import { planFor } from '../../shared/control/serving.ts';
import { dynamoExposureStore } from '../../shared/data/experiments.ts';
import { createContext } from '../../shared/domain/contexts.ts';
import type { NewEvent } from '../../shared/domain/types.ts';
import { recommend, type RecsDeps } from '../../shared/recs/serve.ts';
import { recommendationsQuery } from '../../shared/schemas/recs.ts';
import { searchBody } from '../../shared/schemas/search.ts';
import { serveSearch } from '../../shared/search/core-search.ts';
import { embedItem } from '../../shared/search/indexer.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { tenantView, type SearchDeps } from '../../shared/search/views.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * Segments and an erased user: from the moment the erasure's marker is stored (before the
 * user's events are deleted, which this test never does: they stay in the table throughout),
 * the user's erased events make them a member of no segment, in the plan of a recommendation
 * and of a search alike. Their events sent once the erasure has ended count again.
 */

let db: TestTable;
let dir: string;
let search: SearchDeps;
let recs: RecsDeps;
let contextId: number;
let seenContextId: number;
/** The id of the buyer's latest event (before the erasure). */
let buyerEvents: number;
const T = 'ers-seg';
const now = Math.floor(Date.now() / 1000);
const ev = (user: string, type: string, item: number): NewEvent => ({ type, user_id: user, item_id: String(item), context_id: null, session_id: null, request_id: null, placement: null, extra: {} });

beforeAll(async () => {
  db = await testTable();
  dir = mkdtempSync(join(tmpdir(), 'erasure-personalisation-'));
  const { items, events, console: c } = db.stores;
  const blobs = new FolderBlobStore(dir);
  // Items 1-3 tents, 4-6 ovens.
  const created = await items.create(
    T,
    Array.from({ length: 6 }, (_, i) => ({ name: `${i < 3 ? 'tent' : 'oven'} ${i + 1}`, description: i < 3 ? 'camping tent' : 'baking oven', metadata: { category: i < 3 ? 'tent' : 'oven' } })),
    now - 2000,
  );
  search = { items, events, blobs, embedder: new HashingEmbedding() };
  for (const i of created) await embedItem(items, search.embedder, T, i.id);
  buyerEvents = (await events.append(T, [ev('buyer', 'purchase', 1), ev('other', 'purchase', 2)], now - 1000))[0]?.id as number;
  contextId = (await createContext(c, T, { name: 'home', description: '' })).id;
  // Buyers (a purchase within 30 days) see no ovens in this context.
  await c.put(T, 'segment', {
    id: 1,
    name: 'buyers',
    description: '',
    definition: { event_type: 'purchase', min_count: 1, within_days: 30 },
    size_estimate: null,
    size_computed_at: null,
    created: now,
    updated_at: now,
    _rev: 1,
    _deleting: null,
  });
  await c.put(T, 'rule', {
    id: 1,
    name: 'no ovens for buyers',
    context_id: contextId,
    conditions: [{ field: 'category', op: 'eq', value: 'oven' }],
    boost: 0,
    segment_id: 1,
    starts_at: null,
    ends_at: null,
    enabled: true,
    created: now,
    updated_at: now,
    _rev: 1,
  });
  // A context that leaves out what the user has seen (its plan reads no segment).
  seenContextId = (await createContext(c, T, { name: 'unseen', description: '' })).id;
  await c.put(T, 'rerank', { id: seenContextId, context_id: seenContextId, exclude_seen: true, updated_at: now, _rev: 1 });
  recs = { console: c, control: controlDepsOf(db.stores), exposures: dynamoExposureStore(db.table), events, blobs, catalog: (t: string) => tenantView(search, t) };
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether the segment's rule is in force for the user: in the plan, and in what a recommendation and a search serve in the context. */
async function inSegment(user: string): Promise<{ plan: boolean; recs: boolean; search: boolean }> {
  const plan = await planFor(controlDepsOf(db.stores), T, contextId, user, nowSeconds());
  const served = await recommend(recs, T, recommendationsQuery.parse({ user_id: user, context_id: String(contextId), limit: '6', include_seen: 'true' }), 'req');
  const found = await serveSearch(
    { search, control: controlDepsOf(db.stores), synonymSets: async () => [] },
    T,
    searchBody.parse({ query: '', user_id: user, context_id: String(contextId), limit: 6 }),
    'req',
  );
  const noOvens = (names: string[]) => names.length > 0 && names.every((n) => n.startsWith('tent'));
  return {
    plan: plan.rules.some((r) => r.id === 1),
    recs: noOvens(served.data.map((r) => r.item.name)),
    search: noOvens((found.data as { name: string }[]).map((h) => h.name)),
  };
}
const nowSeconds = () => Math.floor(Date.now() / 1000);
const member = { plan: true, recs: true, search: true };
const outsider = { plan: false, recs: false, search: false };

describe('segment membership of an erased user', () => {
  it('ends as soon as the erasure is requested, before any event is deleted, in recommendations and search alike', async () => {
    expect(await inSegment('buyer')).toEqual(member);
    await db.stores.console.putErasure(T, { user_id: 'buyer', requested_at: now, completed_at: null });
    expect(await inSegment('buyer')).toEqual(outsider);
    // Ended, and the events it covered still returned (an index read behind the deletion): still none.
    await db.stores.console.putErasure(T, { user_id: 'buyer', requested_at: now, completed_at: now + 1, events_through: buyerEvents });
    expect(await inSegment('buyer')).toEqual(outsider);
    // Others as before.
    expect(await inSegment('other')).toEqual(member);
  });

  it('counts the events a user sends once their erasure has ended, not those it covered', async () => {
    const [erased] = await db.stores.events.append(T, [ev('again', 'purchase', 3)], now - 600);
    await db.stores.console.putErasure(T, { user_id: 'again', requested_at: now - 500, completed_at: now - 500, events_through: erased?.id as number });
    expect(await inSegment('again')).toEqual(outsider);
    await db.stores.events.append(T, [ev('again', 'purchase', 3)], now - 400);
    expect(await inSegment('again')).toEqual(member);
  });
});

/** The names a search browsing for the user (an empty query: by their taste, else newest first) answers, in order, in a context if named. */
async function browse(user: string, context?: number): Promise<string[]> {
  const body = searchBody.parse({ query: '', user_id: user, limit: 6, ...(context !== undefined ? { context_id: String(context) } : {}) });
  const found = await serveSearch({ search, control: controlDepsOf(db.stores), synonymSets: async () => [] }, T, body, 'req');
  return (found.data as { name: string }[]).map((h) => h.name);
}

describe('reading the markers', () => {
  it("reads the user's marker once for a recommendation and once for a personalised search (shared by its plan and its taste), never every marker", async () => {
    let reads = 0;
    let all = 0;
    const c = db.stores.console;
    const counted = { ...c, erasedUser: (t: string, u: string) => (reads++, c.erasedUser(t, u)), servingConfig: (t: string) => (all++, c.servingConfig(t)) };
    const control = controlDepsOf({ console: counted, events: db.stores.events });
    await recommend({ ...recs, console: counted, control }, T, recommendationsQuery.parse({ user_id: 'other', context_id: String(contextId) }), 'req');
    expect(reads).toBe(1);
    reads = 0;
    await serveSearch({ search, control, synonymSets: async () => [] }, T, searchBody.parse({ query: '', user_id: 'other', context_id: String(contextId) }), 'req');
    expect(reads).toBe(1);
    reads = 0;
    await serveSearch({ search, control, synonymSets: async () => [] }, T, searchBody.parse({ query: 'tent' }), 'req');
    expect(reads).toBe(0);
    expect(all).toBe(0);
  });
});

describe('personalised search for an erased user', () => {
  it('ranks by no taste of the events their erasure covers, nor leaves them out as seen, from the moment its marker is stored', async () => {
    const [viewed] = await db.stores.events.append(T, [ev('camper', 'view', 2)], now - 900);
    // Their taste (a tent) first; in the context leaving out the seen, not the tent they viewed.
    expect((await browse('camper'))[0]).toMatch(/^tent/);
    expect(await browse('camper', seenContextId)).not.toContain('tent 2');
    await db.stores.console.putErasure(T, { user_id: 'camper', requested_at: now, completed_at: null });
    // No taste: newest first (oven 6); the viewed tent is served again.
    expect((await browse('camper'))[0]).toBe('oven 6');
    expect(await browse('camper', seenContextId)).toContain('tent 2');
    // Ended (its events still returned by the index): the same.
    await db.stores.console.putErasure(T, { user_id: 'camper', requested_at: now, completed_at: now, events_through: viewed?.id as number });
    expect((await browse('camper'))[0]).toBe('oven 6');
    expect(await browse('camper', seenContextId)).toContain('tent 2');
    // A view sent after it makes a taste again.
    await db.stores.events.append(T, [ev('camper', 'view', 3)], now);
    expect((await browse('camper'))[0]).toMatch(/^tent/);
    expect(await browse('camper', seenContextId)).not.toContain('tent 3');
  });
});
