import { describe, expect, it, vi } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import { packModel } from '../../shared/recs/artifact.ts';
import { packSections } from '../../shared/sections.ts';
import { Dataset } from '../../shared/recs/dataset.ts';
import { trainPopularity } from '../../shared/recs/models.ts';
import { loadModel, MODEL_SETTINGS, MODELS_KEPT, UNREADABLE_MODELS_KEPT } from '../../shared/recs/served-model.ts';
import { AlsModel } from '../../shared/recs/blend.ts';
import { F32Rows } from '../../shared/recs/f32-rows.ts';
import { turnsDuring } from '../helpers/fixtures.ts';

/** A small model's artifact (popularity over two items). */
function smallModel(): Uint8Array {
  const ds = new Dataset([
    { user: 'a', item: 1, weight: 1, at: 1 },
    { user: 'b', item: 2, weight: 1, at: 1 },
  ]);
  return packModel({ model: trainPopularity(ds), items: ds.items, popularity: Float32Array.from(ds.itemWeight) });
}

/** An iALS model's artifact of 20,000 items × 128 factors: 10 MB, more than a step of a load in turns. */
function largeModel(): Uint8Array {
  const n = 20_000;
  const als = new AlsModel(n, 128, new Float32Array(n * 128).fill(0.1), new Float64Array(128 * 128), 0.1, 0.01);
  return packModel({ model: als, items: Array.from({ length: n }, (_, i) => i + 1), popularity: new Float32Array(n) });
}

/** A model version's store whose every version is the model `bytes`, with the artifacts read listed in `loads`. */
function store(bytes = smallModel()) {
  const loads: string[] = [];
  const console = { get: async (_t: string, _k: string, version: number) => ({ artifact: `models/t/v${version}.bin` }) } as unknown as ConsoleStore;
  const blobs = {
    get: async (key: string) => {
      loads.push(key);
      return bytes;
    },
  } as unknown as BlobStore;
  return { bytes, loads, console, blobs };
}

describe("a serving container's loaded models", () => {
  it("are made in turns, the container's other requests served meanwhile; two requests that load one at once keep one copy", async () => {
    const { console, blobs } = store(largeModel());
    const { value, turns } = await turnsDuring(() => Promise.all([loadModel(console, blobs, 'big', 1), loadModel(console, blobs, 'big', 1)]));
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(value[0]).toBeDefined();
    expect(value[1]).toBe(value[0]);
  });

  it('are made once for requests that load one at once: each does not make a copy of its own meanwhile', async () => {
    const { console, blobs } = store(largeModel());
    const filled = vi.spyOn(F32Rows, 'filling');
    try {
      const loaded = await Promise.all(Array.from({ length: 4 }, () => loadModel(console, blobs, 'burst', 1)));
      for (const m of loaded) expect(m).toBe(loaded[0]);
      // iALS's item factors, made into a kernel's rows once.
      expect(filled).toHaveBeenCalledTimes(1);
    } finally {
      filled.mockRestore();
    }
  });

  it('lets the least recently served go when full, never the ones in use', async () => {
    const { loads, console, blobs } = store();
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

  it('keeps within the memory budget, the least recently served let go first, and always the one served', async () => {
    const { bytes, loads, console, blobs } = store();
    const loadsOf = async (v: number) => {
      const before = loads.length;
      expect(await loadModel(console, blobs, 'budget', v)).toBeDefined();
      return loads.length - before;
    };
    const budget = MODEL_SETTINGS.memoryBytes;
    try {
      // Room for two of these models (each estimated at twice its artifact), not three.
      MODEL_SETTINGS.memoryBytes = 2 * 2 * bytes.byteLength + 1;
      expect(await loadsOf(1)).toBe(1);
      expect(await loadsOf(2)).toBe(1);
      expect(await loadsOf(1)).toBe(0);
      // The third lets version 2 go, the least recently served.
      expect(await loadsOf(3)).toBe(1);
      expect(await loadsOf(1)).toBe(0);
      expect(await loadsOf(2)).toBe(1);
      // A model over the whole budget is still served, and kept while it is the one served.
      MODEL_SETTINGS.memoryBytes = 1;
      expect(await loadsOf(4)).toBe(1);
      expect(await loadsOf(4)).toBe(0);
      expect(await loadsOf(1)).toBe(1);
    } finally {
      MODEL_SETTINGS.memoryBytes = budget;
    }
  });

  it('a version whose artifact this code cannot read (a newer format, or damaged) is served as no model, and not read again', async () => {
    const newer = packSections({ format: 'recsearch-model-v2', items: [1, 2] }, []);
    const { loads, console, blobs } = store(newer);
    for (let k = 0; k < 3; k++) expect(await loadModel(console, blobs, 'newer', 1)).toBeUndefined();
    expect(loads).toEqual(['models/t/v1.bin']);
    const damaged = store(smallModel().slice(0, 40));
    expect(await loadModel(damaged.console, damaged.blobs, 'damaged', 1)).toBeUndefined();
    // Another version of the tenant is read as usual.
    expect(await loadModel(console, store().blobs, 'newer', 2)).toBeDefined();
  });

  it('versions found unreadable, past the bound: the least recently asked for is let go, not every one (a busy one is not read again)', async () => {
    const { loads, console, blobs } = store(packSections({ format: 'recsearch-model-v2', items: [1, 2] }, []));
    const busy = () => loads.filter((k) => k === 'models/t/v0.bin').length;
    expect(await loadModel(console, blobs, 'unreadable-busy', 0)).toBeUndefined();
    // As many other unreadable versions as the cache holds, the busy one asked for after each.
    for (let v = 1; v <= UNREADABLE_MODELS_KEPT; v++) {
      await loadModel(console, blobs, 'unreadable-one-off', v);
      expect(await loadModel(console, blobs, 'unreadable-busy', 0)).toBeUndefined();
    }
    // Until 2026-12-07 the cache was emptied whole when full: the busy version was downloaded again.
    expect(busy()).toBe(1);
    // The bound holds: the first other version was let go (read again), the latest is held.
    const before = loads.length;
    await loadModel(console, blobs, 'unreadable-one-off', UNREADABLE_MODELS_KEPT);
    expect(loads.length).toBe(before);
    await loadModel(console, blobs, 'unreadable-one-off', 1);
    expect(loads.length).toBe(before + 1);
  });

  it('fill the memory budget exactly: models whose estimates add up to it all stay', async () => {
    const { bytes, loads, console, blobs } = store();
    const budget = MODEL_SETTINGS.memoryBytes;
    try {
      MODEL_SETTINGS.memoryBytes = 2 * 2 * bytes.byteLength;
      await loadModel(console, blobs, 'exact', 1);
      await loadModel(console, blobs, 'exact', 2);
      const before = loads.length;
      await loadModel(console, blobs, 'exact', 1);
      expect(loads.length).toBe(before);
    } finally {
      MODEL_SETTINGS.memoryBytes = budget;
    }
  });
});

describe("a loaded model's popular items", () => {
  it('are its 1,000 most popular items in training, scaled so the most popular is 1', async () => {
    const n = 1200;
    const ids = Array.from({ length: n }, (_, i) => i + 1);
    const ds = new Dataset([{ user: 'a', item: 1, weight: 1, at: 1 }], ids);
    // Item id k has popularity k: the 1,000 most popular are 201-1200.
    const artifact = packModel({ model: trainPopularity(ds), items: ds.items, popularity: Float32Array.from(ids) });
    const { console, blobs } = store(artifact);
    const m = await loadModel(console, blobs, 'popular', 1);
    expect(m?.popular.size).toBe(1000);
    expect(Math.min(...(m?.popular.keys() ?? []))).toBe(201);
    expect(m?.popular.get(1200)).toBe(1);
    expect(m?.popular.get(600)).toBeCloseTo(0.5, 6);
  });
});
