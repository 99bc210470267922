import { describe, expect, it } from 'vitest';
import { CONTROL_CACHE_TENANTS, planFor, type ControlDeps } from '../../shared/control/serving.ts';

/** Deps whose config answers one context (1) and nothing else, counting the reads of each tenant. */
function counting(): { deps: ControlDeps; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const deps: ControlDeps = {
    async config(tenant) {
      reads.set(tenant, (reads.get(tenant) ?? 0) + 1);
      return { rules: [], segments: [], experiments: [], rerank: [], contexts: [1] };
    },
    contextExists: async () => true,
    userEvents: async () => ({ events: [], cut: false }),
    erasedUser: async () => undefined,
  };
  return { deps, reads };
}
const NOW = 1_700_000_000;

describe("serving's control-config cache", () => {
  it('full, drops the least recently used tenant, not every one: busy tenants are read once while one-off tenants come and go', async () => {
    const { deps, reads } = counting();
    // As many busy tenants as the cache holds less one, each served again after each one-off tenant.
    const busy = Array.from({ length: CONTROL_CACHE_TENANTS - 1 }, (_, k) => `busy-${k}`);
    for (let round = 0; round < 5; round++) {
      for (const t of busy) await planFor(deps, t, 1, undefined, NOW);
      await planFor(deps, `one-off-${round}`, 1, undefined, NOW);
    }
    // Until 2026-12-07 the cache was emptied whole once full: every busy tenant read again (4 times each here).
    const readAgain = busy.filter((t) => reads.get(t) !== 1);
    expect([readAgain.length, reads.get(busy[0] as string)]).toEqual([0, 1]);
    // Each one-off tenant was dropped in turn (the bound holds): the last one is still there, an earlier one is read again.
    await planFor(deps, 'one-off-4', 1, undefined, NOW);
    expect(reads.get('one-off-4')).toBe(1);
    await planFor(deps, 'one-off-0', 1, undefined, NOW);
    expect(reads.get('one-off-0')).toBe(2);
  });
});
