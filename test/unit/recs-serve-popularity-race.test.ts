import { expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { Catalog } from '../../shared/domain/catalog.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import type { EventStore, ItemWithVector } from '../../shared/domain/types.ts';
import type { ControlDeps } from '../../shared/control/serving.ts';
import type { ExposureStore } from '../../shared/control/exposures.ts';
import { recommend } from '../../shared/recs/serve.ts';

// A context with popularity_weight, no model, a tenant whose first popularity count is waited for:
// an item deactivated by a catalog page applied during that wait is left out (until 2026-12-05 the
// candidates were checked against the catalog before the wait, and it was served as it was).
it('context popularity_weight: an item deactivated while the pipeline awaited popularity is not shown', async () => {
  const doc = (id: number) => ({ id, name: `item ${id}`, metadata: {}, active: true, created: 0, updated_at: 0, vector: Float32Array.from([1, 0]) }) as unknown as ItemWithVector;
  const N = 205;
  const docs = new Map(Array.from({ length: N }, (_, k) => k + 1).map((id) => [id, doc(id)]));
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
    // By content every item is near the user's item 1, item 2 nearest: 200+ personal candidates, so
    // candidates() itself never awaits popularity.
    nearest(_q, k, visit) {
      for (let id = 1; id <= Math.min(N, k + 1); id++) visit(id, 1 - id / 1000);
    },
  };
  const events = {
    recentByUser: async () => [{ id: 1, item_id: '1', type: 'view', created: 0 }],
    // The first popularity count (waited for): item 2 is deactivated meanwhile.
    latest: async () => {
      docs.set(2, { ...(docs.get(2) as ItemWithVector), active: false } as ItemWithVector);
      return [];
    },
  } as unknown as EventStore;
  const control: ControlDeps = {
    config: async () => ({ rules: [], segments: [], experiments: [], rerank: [{ id: 1, context_id: 7, updated_at: 0, popularity_weight: 0.1 }], contexts: [7] }),
    contextExists: async () => true,
    userEvents: async () => [],
    erasedUser: async () => undefined,
  };
  const deps = {
    console: { servingRecords: async () => ({ endpoint: [], event_type: [] }), erasedUser: async () => undefined } as unknown as ConsoleStore,
    control,
    exposures: {} as ExposureStore,
    events,
    blobs: {} as BlobStore,
    catalog: async () => catalog,
  };
  const r = await recommend(deps, `pw-race-${Math.random()}`, { user_id: 'u', context_id: '7', limit: 3, include_seen: false, explain: false }, 'req');
  const shown = r.data.map((x) => x.item_id);
  expect(docs.get(2)?.active).toBe(false);
  expect(shown).not.toContain('2');
});
