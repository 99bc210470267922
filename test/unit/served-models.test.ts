import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import { packModel } from '../../shared/recs/artifact.ts';
import { Dataset } from '../../shared/recs/dataset.ts';
import { trainPopularity } from '../../shared/recs/models.ts';
import { loadModel, MODELS_KEPT } from '../../shared/recs/served-model.ts';

describe("a serving container's loaded models", () => {
  it('lets the least recently served go when full, never the ones in use', async () => {
    const ds = new Dataset([
      { user: 'a', item: 1, weight: 1, at: 1 },
      { user: 'b', item: 2, weight: 1, at: 1 },
    ]);
    const bytes = packModel({ model: trainPopularity(ds), items: ds.items, popularity: Float32Array.from(ds.itemWeight) });
    const loads: string[] = [];
    const console = { get: async (_t: string, _k: string, version: number) => ({ artifact: `models/t/v${version}.bin` }) } as unknown as ConsoleStore;
    const blobs = {
      get: async (key: string) => {
        loads.push(key);
        return bytes;
      },
    } as unknown as BlobStore;
    const serve = (tenant: string, v: number) => loadModel(console, blobs, tenant, v);
    for (let v = 1; v <= MODELS_KEPT; v++) expect(await serve('lru', v)).toBeDefined();
    expect(loads).toHaveLength(MODELS_KEPT);
    // Version 1 served again (a hit), then one model more than the cache keeps.
    await serve('lru', 1);
    await serve('lru', MODELS_KEPT + 1);
    expect(loads).toHaveLength(MODELS_KEPT + 1);
    // The one let go is version 2, the least recently served; version 1 stays (was loaded again: the cache was emptied).
    await serve('lru', 1);
    await serve('lru', 3);
    expect(loads).toHaveLength(MODELS_KEPT + 1);
    await serve('lru', 2);
    expect(loads.slice(MODELS_KEPT + 1)).toEqual(['models/t/v2.bin']);
  });
});
