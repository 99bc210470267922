import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { Catalog } from '../../shared/domain/catalog.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import type { EventStore, ItemWithVector } from '../../shared/domain/types.ts';
import { recommend } from '../../shared/recs/serve.ts';
import { packSections } from '../../shared/sections.ts';

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

describe('recommend: a promoted version this code cannot read', () => {
  it('is served as no model (model null, popular items), not a failure, its artifact read once', async () => {
    const docs = new Map([1, 2].map((id) => [id, { id, name: `item ${id}`, metadata: {}, active: true, created: 0, updated_at: 0, vector: null } as unknown as ItemWithVector]));
    const catalog = {
      dims: 2,
      behind: false,
      get: (id: number) => docs.get(id),
      isLive: (id: number) => docs.has(id),
      newest: () => [...docs.values()],
      similarity: () => () => 0,
      hasVector: () => false,
    } as unknown as Catalog;
    const reads: string[] = [];
    const deps = {
      console: {
        servingRecords: async () => ({ endpoint: [{ endpoint_name: 'main', is_default: true, model_version: 3 }], event_type: [] }),
        erasedUser: async () => undefined,
        get: async () => ({ version: 3, artifact: 'models/t/3.bin' }),
      } as unknown as ConsoleStore,
      events: { recentByUser: async () => [], latest: async () => [{ id: 1, item_id: '2', user_id: 'x', type: 'view', created: 0 }] } as unknown as EventStore,
      // An artifact of a format a newer version of the service writes.
      blobs: { get: async (key: string) => (reads.push(key), packSections({ format: 'recsearch-model-v2' }, [])) } as unknown as BlobStore,
      catalog: async () => catalog,
    };
    for (let k = 0; k < 2; k++) {
      const r = await recommend(deps, 'unreadable-model', { user_id: 'u', limit: 2, include_seen: false, explain: false }, 'req');
      expect(r.model).toBeNull();
      expect(r.strategy).toBe('popular');
      expect(r.data.map((x) => x.item_id)[0]).toBe('2');
    }
    expect(reads).toEqual(['models/t/3.bin']);
  });
});
