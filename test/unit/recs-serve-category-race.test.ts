import { expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { Catalog } from '../../shared/domain/catalog.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import type { EventStore, ItemWithVector } from '../../shared/domain/types.ts';
import { recommend } from '../../shared/recs/serve.ts';

// As test/unit/recs-serve.test.ts's "deactivated while the request awaited popularity", but the
// catalog page applied meanwhile moves item 2 out of the category the request asks for: left out.
it('category: an item moved out of the requested category while candidates awaited popularity is not shown', async () => {
  const doc = (id: number) => ({ id, name: `item ${id}`, metadata: { category: 'shoes' }, active: true, created: 0, updated_at: 0, vector: Float32Array.from([1, 0]) }) as unknown as ItemWithVector;
  const docs = new Map([1, 2, 3].map((id) => [id, doc(id)]));
  const catalog: Catalog = {
    dims: 2,
    behind: false,
    current: async (ids) => ids.map((id) => docs.get(id)),
    get: (id) => docs.get(id),
    isLive: (id) => docs.has(id),
    newest: () => [],
    similarity: () => () => 0,
    hasVector: (d) => d.vector !== null,
    addVectors(items, weights, into) {
      for (const w of weights) into[0] = (into[0] as number) + w;
      return items.length > 0;
    },
    nearest(_q, _k, visit) {
      visit(1, 1);
      visit(2, 0.9);
      visit(3, 0.8);
    },
  };
  const events = {
    recentByUser: async () => [{ id: 1, item_id: '1', type: 'view', created: 0 }],
    // Popularity without a model reads the latest events: item 2 is recategorised meanwhile (a PATCH applied by the catalog's read).
    latest: async () => {
      docs.set(2, { ...(docs.get(2) as ItemWithVector), metadata: { category: 'hats' } } as ItemWithVector);
      return [];
    },
  } as unknown as EventStore;
  const deps = {
    console: { servingRecords: async () => ({ endpoint: [], event_type: [] }), erasedUser: async () => undefined } as unknown as ConsoleStore,
    events,
    blobs: {} as BlobStore,
    catalog: async () => catalog,
  };
  const r = await recommend(deps, `cat-race-${Math.random()}`, { user_id: 'u', limit: 5, category: 'shoes', include_seen: false, explain: false }, 'req');
  const shown = r.data.map((x) => [x.item_id, (x.item.metadata as { category: string }).category]);
  expect(shown).toEqual([['3', 'shoes']]);
});
