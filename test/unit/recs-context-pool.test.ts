import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import type { ExposureStore } from '../../shared/control/exposures.ts';
import type { ControlDeps } from '../../shared/control/serving.ts';
import type { Rule } from '../../shared/control/types.ts';
import type { EventStore, ItemWithVector } from '../../shared/domain/types.ts';
import { recommend } from '../../shared/recs/serve.ts';
import { nearestFirstCatalog } from '../helpers/recs-catalog.ts';

/*
 * A context's rules and rerank controls choose from a pool of the best 200 candidates: what they
 * leave out is made up from the candidates below it (found by a review, 2026-12-05: the answer was
 * short, or empty, while eligible items remained past the pool).
 */

/**
 * `n` items, the user's `history` (one view of item 1), and by content the `near` lowest ids near it (the lower
 * the nearer); no model, no events: popular items are none, the newest fill up. Context 7 has
 * `rules` and rerank `controls`.
 */
function shop(
  n: number,
  near: number,
  metadata: (id: number) => Record<string, unknown>,
  context: { rules?: Rule[]; controls?: Record<string, unknown> },
  history = [{ id: 1, item_id: '1', type: 'view', created: 0 }],
) {
  const doc = (id: number) => ({ id, name: `item ${id}`, metadata: metadata(id), active: true, created: 0, updated_at: 0, vector: Float32Array.from([1, 0]) }) as unknown as ItemWithVector;
  const docs = new Map(Array.from({ length: n }, (_, k) => [k + 1, doc(k + 1)]));
  const base = nearestFirstCatalog(docs, { near, step: 1e-6, newest: true });
  // How deep each read of the nearest items went.
  const depths: number[] = [];
  const catalog = { ...base, nearest: (...a: Parameters<typeof base.nearest>) => (depths.push(a[1]), base.nearest(...a)) };
  const events = { recentByUser: async () => history, latest: async () => [] } as unknown as EventStore;
  const control: ControlDeps = {
    config: async () => ({ rules: context.rules ?? [], segments: [], experiments: [], rerank: [{ id: 1, context_id: 7, updated_at: 0, ...context.controls }], contexts: [7] }),
    contextExists: async () => true,
    userEvents: async () => ({ events: [], cut: false }),
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
  return async (q: { limit?: number; include_seen?: boolean } = {}) => {
    depths.length = 0;
    const r = await recommend(deps, `pool-${Math.random()}`, { user_id: 'u', limit: 5, include_seen: false, explain: false, context_id: '7', ...q }, 'req');
    return { ids: r.data.map((x) => Number(x.item_id)), reasons: r.data.map((x) => x.reason), strategy: r.strategy, depths: [...depths] };
  };
}

const excluding = (brand: string): Rule => ({
  id: 1,
  name: `no ${brand}`,
  context_id: 7,
  conditions: [{ field: 'metadata.brand', op: 'eq', value: brand }],
  boost: 0,
  segment_id: null,
  starts_at: null,
  ends_at: null,
  enabled: true,
  created: 0,
  updated_at: 0,
});

describe('recommendations with a context: what its rules and controls leave out is made up from below the pool', () => {
  it('a rule of boost 0 that matches the 250 best candidates: the next five are served', async () => {
    const rec = shop(300, 300, (id) => ({ brand: id <= 250 ? 'X' : 'Y' }), { rules: [excluding('X')] });
    const r = await rec();
    expect(r.ids).toEqual([251, 252, 253, 254, 255]);
    expect(r.strategy).toBe('personalized');
    expect(r.reasons).toEqual(Array(5).fill('from your recent activity'));
    // Over a thousand and more items past the pool: still found.
    const far = shop(3000, 3000, (id) => ({ brand: id <= 2990 ? 'X' : 'Y' }), { rules: [excluding('X')] });
    expect((await far({ limit: 20 })).ids).toEqual([2991, 2992, 2993, 2994, 2995, 2996, 2997, 2998, 2999, 3000]);
  });

  it('max_per_category 1 over a pool of one category: one of it, then the other categories below the pool', async () => {
    const rec = shop(300, 300, (id) => ({ category: id <= 250 ? 'a' : `c${id}` }), { controls: { max_per_category: 1 } });
    expect((await rec()).ids).toEqual([2, 251, 252, 253, 254]);
  });

  it('exclude_seen with include_seen=true and 250 seen candidates: unseen ones below the pool are served', async () => {
    const seen = Array.from({ length: 250 }, (_, k) => ({ id: 1000 - k, item_id: String(k + 1), type: 'view', created: 0 }));
    const rec = shop(300, 300, () => ({}), { controls: { exclude_seen: true } }, seen);
    expect((await rec({ include_seen: true })).ids).toEqual([251, 252, 253, 254, 255]);
  });

  it('reads at most two pools below the first (800, then 3,200 candidates): a context that cannot fill answers short, not after the whole catalog', async () => {
    // Every item but the last ten excluded: past 3,200 candidates they are not looked for.
    const rec = shop(20_000, 20_000, (id) => ({ brand: id <= 19_990 ? 'X' : 'Y' }), { rules: [excluding('X')] });
    const r = await rec();
    expect(r.ids).toEqual([]);
    expect(r.depths).toEqual([200, 800, 3200]);
  });

  it('is personalized, with personal reasons, when only a pool below the first holds personal candidates', async () => {
    // The 201 nearest items seen: the first pool is the newest items (popular); a rule leaves out
    // ids from 300 up, and the 800-pool's unseen nearest are served.
    const seen = Array.from({ length: 201 }, (_, k) => ({ id: 1000 - k, item_id: String(k + 1), type: 'view', created: 0 }));
    const rec = shop(1000, 1000, (id) => ({ brand: id >= 300 ? 'X' : 'Y' }), { rules: [excluding('X')] }, seen);
    const r = await rec();
    expect(r.ids).toEqual([202, 203, 204, 205, 206]);
    expect(r.strategy).toBe('personalized');
    expect(r.reasons).toEqual(Array(5).fill('from your recent activity'));
  });

  it('is popular when the rules left out every personal candidate (the newest fill the answer)', async () => {
    const rec = shop(300, 21, (id) => ({ brand: id <= 21 ? 'X' : 'Y' }), { rules: [excluding('X')] });
    const r = await rec();
    expect(r.ids).toEqual([300, 299, 298, 297, 296]);
    expect(r.reasons).toEqual(Array(5).fill('new in the catalog'));
    expect(r.strategy).toBe('popular');
  });
});
