import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setClock } from '../../shared/clock.ts';
import type { EventStore } from '../../shared/domain/types.ts';
import { KEPT_COUNTS, TRENDING_TENANTS, trendingScores, trendingScoresAsOf } from '../../shared/recs/trending.ts';

describe("popularity without a model: each tenant's count, cached", () => {
  // The time stands still: every count stays fresh however slow the machine.
  let restore = () => {};
  beforeEach(() => {
    restore = setClock({ nowMs: () => 1_700_000_000_000 });
  });
  afterEach(() => restore());

  it('past the bound, the least recently served tenant is let go, not every one: a busy tenant is counted once', async () => {
    const counted: string[] = [];
    // Only `latest` is read by a count (no snapshots here).
    const events = {
      latest: async (tenant: string) => {
        counted.push(tenant);
        return [{ id: 1, item_id: '7', type: 'view', created: 1 }];
      },
    } as unknown as EventStore;
    const counts = (t: string) => counted.filter((c) => c === t).length;
    await trendingScores(events, 'busy');
    // As many other tenants as the cache holds, the busy one served after each.
    for (let k = 0; k < TRENDING_TENANTS; k++) {
      await trendingScores(events, `one-off-${k}`);
      expect((await trendingScores(events, 'busy')).size).toBe(1);
    }
    // Until 2026-12-07 the cache was emptied whole when full: the busy tenant was counted again.
    expect(counts('busy')).toBe(1);
    // The bound holds: the latest other tenant is held, the first was let go (counted again).
    await trendingScores(events, `one-off-${TRENDING_TENANTS - 1}`);
    await trendingScores(events, 'one-off-0');
    expect([counts(`one-off-${TRENDING_TENANTS - 1}`), counts('one-off-0')]).toEqual([1, 2]);
  });

  it("later pages' counts (up to an event id) keep KEPT_COUNTS, the least recently asked for let go: one asked for again stays", async () => {
    // Each count reads the events below an id: listed by it.
    const below: number[] = [];
    const events = {
      latest: async (_tenant: string, _n: number, under?: number) => {
        below.push(under ?? 0);
        return [{ id: 1, item_id: '7', type: 'view', created: 1 }];
      },
    } as unknown as EventStore;
    const counts = (upTo: number) => below.filter((b) => b === upTo + 1).length;
    const page = (upTo: number) => trendingScoresAsOf(events, 'pages', upTo);
    for (let upTo = 1; upTo <= KEPT_COUNTS; upTo++) await page(upTo);
    // The first asked for again (kept: not counted), then one more than are kept.
    await page(1);
    await page(KEPT_COUNTS + 1);
    await page(1);
    await page(2);
    // 1 was used since: kept; 2 the least recently asked for, let go (counted again).
    expect([counts(1), counts(2), counts(KEPT_COUNTS + 1)]).toEqual([1, 2, 1]);
  });
});
