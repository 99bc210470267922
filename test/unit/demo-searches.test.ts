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

const { searchAsShoppers } = await import('../../shared/demo/searches.ts');

describe('demo searches', () => {
  it("follow a hit without a price or currency (an item of the tenant's own) with a purchase the events route takes", async () => {
    const deps = { serving: { search: { events: {} }, traffic: { exposures: {} } }, log: {} } as unknown as Parameters<typeof searchAsShoppers>[0];
    // Every search is followed by a view, an add to cart and a purchase.
    let clock = 1_790_000_000;
    const summary = await searchAsShoppers(
      deps,
      'demo',
      [{ id: 'u-1', categories: ['hiking'], brands: [] }],
      () => 0.1,
      3,
      () => clock++,
    );
    expect(summary.events).toEqual({ view: 3, add_to_cart: 3, purchase: 3 });
    const purchases = ingested.filter((e) => (e as { type: string }).type === 'purchase');
    expect(purchases).toHaveLength(3);
    expect(purchases[0]).toMatchObject({ item_id: '423', purchase: {} });
    // Each search served at its own time (search analytics folds each minute once it is past), its events with it.
    expect(servedAt).toEqual([1_790_000_000, 1_790_000_001, 1_790_000_002]);
    expect(purchases.map((e) => (e as { occurred_at: number }).occurred_at)).toEqual(servedAt);
  });
});
