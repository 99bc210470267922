import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setClock } from '../../shared/clock.ts';
import { SYNONYMS_CACHE_TENANTS, synonymRules } from '../../shared/search/synonyms.ts';

describe("search's synonym-set cache", () => {
  // The time stands still: no entry goes stale (SYNONYMS_CACHE_MS) however slow the machine.
  let restore = () => {};
  beforeEach(() => {
    restore = setClock({ nowMs: () => 1_700_000_000_000 });
  });
  afterEach(() => restore());
  it('full, lets go of the least recently used tenant, not every one: busy tenants are read once while one-off tenants come and go', async () => {
    const reads = new Map<string, number>();
    const read = async (tenant: string) => {
      reads.set(tenant, (reads.get(tenant) ?? 0) + 1);
      return [];
    };
    // As many busy tenants as the cache holds less one, each searched again after each one-off tenant.
    const busy = Array.from({ length: SYNONYMS_CACHE_TENANTS - 1 }, (_, k) => `syn-busy-${k}`);
    for (let round = 0; round < 5; round++) {
      for (const t of busy) await synonymRules(t, read);
      await synonymRules(`syn-one-off-${round}`, read);
    }
    // Until 2026-12-07 the cache was emptied whole when full: every busy tenant was read again.
    expect([busy.filter((t) => reads.get(t) !== 1).length, reads.get('syn-busy-0')]).toEqual([0, 1]);
    // The bound holds: the latest one-off tenant is still held, the first was let go.
    await synonymRules('syn-one-off-4', read);
    await synonymRules('syn-one-off-0', read);
    expect([reads.get('syn-one-off-4'), reads.get('syn-one-off-0')]).toEqual([1, 2]);
  });
});
