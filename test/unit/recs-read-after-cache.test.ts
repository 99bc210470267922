import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import type { EventStore, ItemWithVector } from '../../shared/domain/types.ts';
import { historiesOf, packModel } from '../../shared/recs/artifact.ts';
import { Dataset } from '../../shared/recs/dataset.ts';
import { trainPopularity } from '../../shared/recs/models.ts';
import { READ_AFTER_KEPT, recommend } from '../../shared/recs/serve.ts';
import { nearestFirstCatalog } from '../helpers/recs-catalog.ts';

describe("recommend: each endpoint's read-after guess, past the bound", () => {
  it("the least recently served endpoint is let go, not every one: a busy tenant's request reads its user's events after the model's from the start", async () => {
    // Every tenant's default endpoint serves a model whose training read every event through id 12.
    const ds = new Dataset([
      { user: 'a', item: 1, weight: 1, at: 1 },
      { user: 'b', item: 2, weight: 1, at: 1 },
    ]);
    const artifact = packModel({ model: trainPopularity(ds), items: ds.items, popularity: Float32Array.from(ds.itemWeight), histories: historiesOf(ds, 77, ['view'], 12) });
    const docs = new Map([1, 2].map((id) => [id, { id, name: `item ${id}`, metadata: {}, active: true, created: 0, updated_at: 0, vector: Float32Array.from([1, 0]) } as unknown as ItemWithVector]));
    const catalog = nearestFirstCatalog(docs);
    // The reads of the user's events, by tenant: the id each read after.
    const readAfter = new Map<string, number[]>();
    const deps = {
      console: {
        servingRecords: async () => ({ endpoint: [{ endpoint_name: 'main', is_default: true, model_version: 3 }], event_type: [] }),
        erasedUser: async () => undefined,
        get: async () => ({ version: 3, artifact: 'models/t/3.bin' }),
      } as unknown as ConsoleStore,
      events: {
        recentByUser: async (tenant: string, _u: string, _limit: number, after?: number) => {
          readAfter.set(tenant, [...(readAfter.get(tenant) ?? []), after ?? 0]);
          return [];
        },
        latest: async () => [],
      } as unknown as EventStore,
      blobs: { get: async () => artifact } as unknown as BlobStore,
      catalog: async () => catalog,
    };
    const served = (tenant: string) => recommend(deps, tenant, { user_id: 'a', limit: 2, include_seen: false, explain: false }, 'req');
    await served('ra-busy');
    // A few more one-off tenants than are remembered, the busy tenant served after each three (so
    // that a one-off tenant's request, not the busy one's, finds the cache full, and the busy one
    // is served after that).
    const flood = READ_AFTER_KEPT + 2;
    for (let k = 0; k < flood; k++) {
      await served(`ra-one-off-${k}`);
      if (k % 3 === 2) await served('ra-busy');
    }
    // Until 2026-12-07 the guesses were emptied whole when full: a busy request read from the start (after 0) again.
    const busy = readAfter.get('ra-busy') ?? [];
    expect(busy.length).toBeGreaterThan(300);
    expect(busy.filter((after) => after === 0)).toEqual([0]);
    // The bound holds: the latest one-off tenant's guess is held, the first one's was let go.
    await served(`ra-one-off-${flood - 1}`);
    await served('ra-one-off-0');
    expect([readAfter.get(`ra-one-off-${flood - 1}`), readAfter.get('ra-one-off-0')]).toEqual([
      [0, 12],
      [0, 0],
    ]);
  });
});
