import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { Catalog } from '../../shared/domain/catalog.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import type { ExposureStore } from '../../shared/control/exposures.ts';
import type { ControlDeps } from '../../shared/control/serving.ts';
import type { Rule } from '../../shared/control/types.ts';
import type { EventStore, ItemWithVector } from '../../shared/domain/types.ts';
import { DeadlinePassed, withinDeadline } from '../../shared/deadline.ts';
import { recommend } from '../../shared/recs/serve.ts';
import { packSections } from '../../shared/sections.ts';
import { nearestFirstCatalog } from '../helpers/recs-catalog.ts';

/**
 * A catalog of `n` items by content all near the user's one item (1), the nearer the lower the id,
 * and a tenant with no model: popularity is counted from the latest events, and `change` runs on
 * the items while that count is waited for (a catalog page applied meanwhile). With `context`, a
 * context 7 whose rerank controls are those, and with `experiment` a running experiment in it
 * (`exposures` lists what its store was asked).
 */
function racing(
  n: number,
  change: (docs: Map<number, ItemWithVector>) => unknown,
  context?: { popularity_weight?: number; experiment?: boolean; rules?: Rule[]; onRecord?: (docs: Map<number, ItemWithVector>) => Promise<void> },
  categoryOf: (id: number) => string = () => 'shoes',
) {
  const doc = (id: number) =>
    ({ id, name: `item ${id}`, metadata: { category: categoryOf(id) }, active: true, created: 0, updated_at: 0, vector: Float32Array.from([1, 0]) }) as unknown as ItemWithVector;
  const docs = new Map(Array.from({ length: n }, (_, k) => [k + 1, doc(k + 1)]));
  const catalog = nearestFirstCatalog(docs);
  const events = {
    recentByUser: async () => [{ id: 1, item_id: '1', type: 'view', created: 0 }],
    latest: async () => {
      await change(docs);
      return [];
    },
  } as unknown as EventStore;
  const { experiment, rules = [], onRecord, ...controls } = context ?? {};
  const running = {
    id: 4,
    name: 'x',
    context_id: 7,
    segment_id: null,
    status: 'Running' as const,
    attribution_window_seconds: 86_400,
    started_at: 1,
    stopped_at: null,
    created: 1,
    updated_at: 1,
    variants: [
      { name: 'a', endpoint_name: 'main', traffic_percent: 50 },
      { name: 'b', endpoint_name: 'main', traffic_percent: 50 },
    ],
  };
  const control: ControlDeps | undefined = context && {
    config: async () => ({ rules, segments: [], experiments: experiment ? [running] : [], rerank: [{ id: 1, context_id: 7, updated_at: 0, ...controls }], contexts: [7] }),
    contextExists: async () => true,
    userEvents: async () => ({ events: [], cut: false }),
    erasedUser: async () => undefined,
  };
  const exposures: string[] = [];
  const exposureStore = {
    recordExposure: async (_t: string, e: { requestId: string }) => {
      await onRecord?.(docs);
      exposures.push(`recorded ${e.requestId}`);
    },
    forgetRequest: async (_t: string, requestId: string) => void exposures.push(`taken back ${requestId}`),
  } as unknown as ExposureStore;
  const deps = {
    console: { servingRecords: async () => ({ endpoint: [], event_type: [] }), erasedUser: async () => undefined } as unknown as ConsoleStore,
    ...(control ? { control, exposures: exposureStore } : {}),
    events,
    blobs: {} as BlobStore,
    catalog: async () => catalog,
  };
  return {
    docs,
    exposures,
    recommend: (q: Partial<Parameters<typeof recommend>[2]>) => recommend(deps, `race-${Math.random()}`, { user_id: 'u', limit: 5, include_seen: false, explain: false, ...q }, 'req'),
  };
}

describe('recommend: the items shown are current', () => {
  it('leaves out a personal candidate deactivated while the request awaited popularity (the catalog read changes meanwhile)', async () => {
    // By content, the user's item 1 is nearest 2, then 3.
    const t = racing(3, (docs) => Object.assign(docs.get(2) as ItemWithVector, { active: false }));
    const r = await t.recommend({});
    expect(r.strategy).toBe('personalized');
    expect(r.data.map((x) => x.item_id)).toEqual(['3']);
  });

  it('leaves out a personal candidate moved out of the category asked for while the request awaited popularity', async () => {
    const t = racing(3, (docs) => docs.set(2, { ...(docs.get(2) as ItemWithVector), metadata: { category: 'hats' } } as ItemWithVector));
    const r = await t.recommend({ category: 'shoes' });
    expect(r.data.map((x) => [x.item_id, (x.item.metadata as { category: string }).category])).toEqual([['3', 'shoes']]);
  });

  it('matches category in NFC, as search filters do: "Café" composed or with e and U+0301, asked either way, is one category', async () => {
    const [composed, decomposed] = ['Caf\u00e9', 'Cafe\u0301'];
    // Item 1 the user's; 2 and 3 of either spelling (3 in a list), 4 another category.
    const categoryOf = (id: number) => [composed, composed, decomposed, 'Cafe'][id - 1] as string;
    const t = racing(4, () => undefined, undefined, categoryOf);
    t.docs.set(3, { ...(t.docs.get(3) as ItemWithVector), metadata: { category: ['x', decomposed] } } as ItemWithVector);
    // Until 2026-12-07 each spelling found only its own items.
    for (const category of [composed, decomposed]) {
      const r = await t.recommend({ category, include_seen: true });
      expect(r.data.map((x) => x.item_id).sort(), JSON.stringify(category)).toEqual(['1', '2', '3']);
    }
  });

  it("leaves out an item deactivated while a context's popularity_weight awaited popularity", async () => {
    // 200 and more personal candidates, so that choosing them awaits no popularity: only the context's controls do.
    const t = racing(205, (docs) => docs.set(2, { ...(docs.get(2) as ItemWithVector), active: false } as ItemWithVector), { popularity_weight: 0.1 });
    const r = await t.recommend({ context_id: '7', limit: 3 });
    expect(t.docs.get(2)?.active).toBe(false);
    expect(r.data.map((x) => x.item_id)).not.toContain('2');
  });

  it("leaves out an item of a context's first pool deactivated while a deeper pool awaited popularity", async () => {
    // The user's item 1 is nearest 2, then 3, ...: the first pool (200 candidates, none awaiting
    // popularity) is items 2 to 201, of which the context's rule excludes all but 200 and 201, so
    // the pool below it (800) is read, and waits for popularity, counted while item 200 is deactivated.
    const hats: Rule = {
      id: 1,
      name: 'no hats',
      context_id: 7,
      conditions: [{ field: 'category', op: 'eq', value: 'hats' }],
      boost: 0,
      segment_id: null,
      starts_at: null,
      ends_at: null,
      enabled: true,
      created: 0,
      updated_at: 0,
    };
    const t = racing(
      400,
      (docs) => docs.set(200, { ...(docs.get(200) as ItemWithVector), active: false } as ItemWithVector),
      { rules: [hats] },
      (id) => (id < 200 ? 'hats' : 'shoes'),
    );
    const r = await t.recommend({ context_id: '7', limit: 5 });
    expect(t.docs.get(200)?.active).toBe(false);
    expect(r.data.map((x) => x.item_id)).toEqual(['201', '202', '203', '204', '205']);
  });

  it("leaves out an item deactivated while the request waited for its experiment exposure's write", async () => {
    // Ranked at once (the user's item 1 is nearest 2, then 3); the write ends 30 ms later, item 2 deactivated meanwhile.
    const t = racing(3, () => {}, {
      experiment: true,
      onRecord: async (docs) => {
        await new Promise((r) => setTimeout(r, 30));
        docs.set(2, { ...(docs.get(2) as ItemWithVector), active: false } as ItemWithVector);
      },
    });
    const r = await t.recommend({ context_id: '7' });
    expect(t.exposures).toEqual(['recorded req']);
    expect(r.data.map((x) => x.item_id)).toEqual(['3']);
  });
});

describe('recommend: an experiment counts only requests served', () => {
  it('takes back the exposure of a request that failed once accepted (its retry is the one served)', async () => {
    // The context's popularity count fails after the request was accepted and its exposure written: a 500.
    const r = racing(
      250,
      () => {
        throw new Error('throttled');
      },
      { popularity_weight: 0.5, experiment: true },
    );
    await expect(r.recommend({ context_id: '7' })).rejects.toThrow('throttled');
    expect(r.exposures).toEqual(['recorded req', 'taken back req']);
    // Ranked only after its deadline (answered 503 meanwhile), with no table call after it: taken back too.
    const late = racing(250, () => new Promise((r) => setTimeout(r, 60)), { popularity_weight: 0.5, experiment: true });
    await expect(withinDeadline(30, () => late.recommend({ context_id: '7' }))).rejects.toThrow(DeadlinePassed);
    expect(late.exposures).toEqual(['recorded req', 'taken back req']);
    // Served: kept.
    const ok = racing(250, () => {}, { popularity_weight: 0.5, experiment: true });
    await ok.recommend({ context_id: '7' });
    expect(ok.exposures).toEqual(['recorded req']);
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

describe("recommend: the read of a user's latest 5,000 events", () => {
  it('asks at most 4 Query pages of them (unbounded, 5,000 events of 32 KB were 160 pages on every request)', async () => {
    const docs = new Map(
      [1, 2, 3].map((id) => [id, { id, name: `item ${id}`, metadata: {}, active: true, created: 0, updated_at: 0, vector: Float32Array.from([1, id / 10]) } as unknown as ItemWithVector]),
    );
    const catalog = nearestFirstCatalog(docs);
    const reads: { limit: number; pages: number | undefined }[] = [];
    // 100 events since (none of a model): the read of the latest 5,000 follows.
    const recentByUser = async (_t: string, _u: string, limit: number, _after?: number, _below?: number, pages?: number) => {
      reads.push({ limit, pages });
      return Array.from({ length: Math.min(limit, 100) }, (_, k) => ({ id: 1000 - k, item_id: '1', type: 'view', created: 0 }));
    };
    const deps = {
      console: { servingRecords: async () => ({ endpoint: [], event_type: [] }), erasedUser: async () => undefined } as unknown as ConsoleStore,
      events: { recentByUser, latest: async () => [{ id: 1, item_id: '2', user_id: 'x', type: 'view', created: 0 }] } as unknown as EventStore,
      blobs: {} as unknown as BlobStore,
      catalog: async () => catalog,
    };
    const r = await recommend(deps, 'seen-pages', { user_id: 'heavy', limit: 2, include_seen: false, explain: false }, 'req');
    expect(r.data.map((x) => x.item_id)).not.toContain('1');
    const seen = reads.find((x) => x.limit === 5000);
    expect(seen?.pages).toBe(4);
  });
});
