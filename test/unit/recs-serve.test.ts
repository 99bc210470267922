import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { Catalog } from '../../shared/domain/catalog.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import type { EventStore, ItemWithVector } from '../../shared/domain/types.ts';
import { recommend } from '../../shared/recs/serve.ts';

describe('recommend: the items shown are current', () => {
  it('leaves out a personal candidate deactivated while the request awaited popularity (the catalog read changes meanwhile)', async () => {
    const doc = (id: number, v: [number, number]) => ({ id, name: `item ${id}`, metadata: {}, active: true, created: 0, updated_at: 0, vector: Float32Array.from(v) }) as unknown as ItemWithVector;
    const docs = new Map([1, 2, 3].map((id) => [id, doc(id, [1, 0])]));
    // By content, the user's item 1 is nearest 2, then 3.
    const catalog: Catalog = {
      dims: 2,
      behind: false,
      current: async (ids) => ids.map((id) => docs.get(id)),
      get: (id) => docs.get(id),
      isLive: (id) => docs.get(id)?.active === true,
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
      // Popularity without a model reads the latest events: item 2 is deactivated meanwhile.
      latest: async () => {
        Object.assign(docs.get(2) as ItemWithVector, { active: false });
        return [];
      },
    } as unknown as EventStore;
    const deps = {
      console: { servingRecords: async () => ({ endpoint: [], event_type: [] }), erasedUser: async () => undefined } as unknown as ConsoleStore,
      events,
      blobs: {} as BlobStore,
      catalog: async () => catalog,
    };
    const r = await recommend(deps, `race-${Math.random()}`, { user_id: 'u', limit: 5, include_seen: false, explain: false }, 'req');
    expect(r.strategy).toBe('personalized');
    expect(r.data.map((x) => x.item_id)).toEqual(['3']);
  });
});
