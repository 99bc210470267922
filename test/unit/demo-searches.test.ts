import { describe, expect, it, vi } from 'vitest';

// Core search answers an item the tenant made while the seed ran: no price, no currency.
const servedAt: number[] = [];
vi.mock('../../shared/search/core-search.ts', () => ({
  serveSearch: async (_deps: unknown, _tenant: string, _body: unknown, _requestId: string, now: number) => {
    servedAt.push(now);
    return { data: [{ id: '423', name: 'Wool socks', metadata: { category: 'hiking' } }] };
  },
}));
const ingested: unknown[] = [];
vi.mock('../../shared/domain/events.ts', () => ({
  ingestEvents: async (_deps: unknown, _tenant: string, body: unknown[]) => {
    ingested.push(...body);
  },
}));

const { demoRequestId, newSearchProgress, searchAsShoppers } = await import('../../shared/demo/searches.ts');

describe('demo searches', () => {
  it("follow a hit without a price or currency (an item of the tenant's own) with a purchase the events route takes", async () => {
    const deps = { serving: { search: { events: {} }, traffic: { exposures: {} } }, log: { search: async () => undefined } } as unknown as Parameters<typeof searchAsShoppers>[0];
    // Every search is followed by a view, an add to cart and a purchase.
    let clock = 1_790_000_000;
    const summary = await searchAsShoppers(deps, 'demo', [{ id: 'u-1', categories: ['hiking'], brands: [] }], {
      seed: 22,
      count: 3,
      clock: () => clock++,
      progress: newSearchProgress(),
      save: () => {},
      random: () => () => 0.1,
    });
    expect(summary.events).toEqual({ view: 3, add_to_cart: 3, purchase: 3 });
    const purchases = ingested.filter((e) => (e as { type: string }).type === 'purchase');
    expect(purchases).toHaveLength(3);
    expect(purchases[0]).toMatchObject({ item_id: '423', purchase: {} });
    // Each search served at its own time (search analytics folds each minute once it is past), its events with it.
    expect(servedAt).toEqual([1_790_000_000, 1_790_000_001, 1_790_000_002]);
    expect(purchases.map((e) => (e as { occurred_at: number }).occurred_at)).toEqual(servedAt);
  });

  it('gives search i of a seed the same request id at every attempt, a UUID the events route takes', () => {
    expect(demoRequestId(22, 7)).toBe(demoRequestId(22, 7));
    expect(new Set([demoRequestId(22, 7), demoRequestId(22, 8), demoRequestId(23, 7)]).size).toBe(3);
    expect(demoRequestId(22, 7)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
