import { describe, expect, it } from 'vitest';
import { attributeSearchEvents, type QueryCounts, type SearchLogStore, searchAnalytics } from '../../shared/search/analytics.ts';
import { storedEvent } from '../helpers/fixtures.ts';

/** A store with no searches: the range's validation and the days it names are under test. */
const empty: SearchLogStore = {
  record: async () => {},
  noResults: async () => {},
  forget: async () => {},
  search: async () => undefined,
  attribute: async () => false,
  fold: async () => ({ searches: 0, queries: 0, foldedTo: undefined }),
  counts: async () => ({ byQuery: new Map(), complete: true }),
};
const q = (from?: string, to?: string) => ({ from, to, limit: 10, click_type: 'click', conversion_type: 'purchase' });
const NOW = Date.parse('2026-11-30T12:00:00Z') / 1000;

describe('search analytics: from and to as Unix seconds', () => {
  it('names the UTC day the seconds fall in', async () => {
    const r = await searchAnalytics(empty, 't', q('1796040000', '1796040000'), NOW);
    expect([r.from, r.to]).toEqual(['2026-11-30', '2026-11-30']);
  });

  it('refuses seconds past 9999-12-31 (no YYYY-MM-DD day) with a 400 naming the parameter, never a malformed day', async () => {
    // 999999999999 is 12 digits, as the parameter allows, but falls in the year 33658.
    await expect(searchAnalytics(empty, 't', q(undefined, '999999999999'), NOW)).rejects.toMatchObject({ fieldErrors: { to: [expect.stringMatching(/9999-12-31|YYYY-MM-DD/)] } });
    await expect(searchAnalytics(empty, 't', q('999999999999', '2026-11-30'), NOW)).rejects.toMatchObject({ fieldErrors: { from: [expect.stringMatching(/9999-12-31/)] } });
    // The last second of 9999-12-31 is still a day.
    const r = await searchAnalytics(empty, 't', q('253402300799', '253402300799'), NOW);
    expect([r.from, r.to]).toEqual(['9999-12-31', '9999-12-31']);
    await expect(searchAnalytics(empty, 't', q('253402300800'), NOW)).rejects.toMatchObject({ fieldErrors: { from: [expect.stringMatching(/9999-12-31|YYYY-MM-DD/)] } });
  });
});

describe('search analytics: the report over the counters', () => {
  const row = (searches: number, no_results: number, events: Record<string, number> = {}, searches_with: Record<string, number> = {}): QueryCounts => ({ searches, no_results, events, searches_with });
  const store = (byQuery: Map<string, QueryCounts>): SearchLogStore => ({ ...empty, counts: async () => ({ byQuery, complete: true }) });

  it('ranks top queries by searches and no-result queries by no_results, ties by query, and rates searches with an event over searches', async () => {
    const byQuery = new Map([
      ['boot', row(4, 0, { click: 6, purchase: 1 }, { click: 3, purchase: 1 })],
      ['zebra', row(2, 2)],
      ['apple', row(2, 1)],
      ['gone', row(0, 0, { click: 1 }, { click: 1 })],
    ]);
    const r = await searchAnalytics(store(byQuery), 't', { ...q('2026-11-01', '2026-11-30'), limit: 10 }, NOW);
    // Most searched first, equals by query; a query with no search in the range is no top query.
    expect(r.top_queries.map((t) => t.query)).toEqual(['boot', 'apple', 'zebra']);
    // click_through_rate = searches with a click / searches (not clicks / searches: 6 clicks of 3 searches).
    expect(r.top_queries[0]).toMatchObject({ clicks: 6, conversions: 1, click_through_rate: 0.75, conversion_rate: 0.25 });
    expect(r.no_result_queries).toEqual([
      { query: 'zebra', searches: 2, no_results: 2 },
      { query: 'apple', searches: 2, no_results: 1 },
    ]);
    expect(r.totals).toMatchObject({ searches: 8, no_results: 3, clicks: 7, queries: 4, click_through_rate: 0.5 });
    // Equal no_results: by query.
    const tie = await searchAnalytics(
      store(
        new Map([
          ['b', row(1, 1)],
          ['a', row(1, 1)],
        ]),
      ),
      't',
      q('2026-11-30', '2026-11-30'),
      NOW,
    );
    expect(tie.no_result_queries.map((t) => t.query)).toEqual(['a', 'b']);
    // Rates to 6 decimals.
    const third = await searchAnalytics(store(new Map([['x', row(3, 0, { click: 1 }, { click: 1 })]])), 't', q('2026-11-30', '2026-11-30'), NOW);
    expect(third.top_queries[0]?.click_through_rate).toBe(0.333333);
  });

  it('covers the 7 days up to today by default, one day at least and 92 at most', async () => {
    expect(await searchAnalytics(empty, 't', q(), NOW)).toMatchObject({ from: '2026-11-24', to: '2026-11-30' });
    await expect(searchAnalytics(empty, 't', q('2026-11-30', '2026-11-29'), NOW)).rejects.toMatchObject({ fieldErrors: { from: [expect.stringMatching(/after/)] } });
    // 92 days: 2026-09-01 to 2026-12-01; one more is 400.
    expect(await searchAnalytics(empty, 't', q('2026-09-01', '2026-12-01'), NOW)).toMatchObject({ from: '2026-09-01' });
    await expect(searchAnalytics(empty, 't', q('2026-08-31', '2026-12-01'), NOW)).rejects.toMatchObject({ fieldErrors: { from: [expect.stringMatching(/92/)] } });
  });

  it('counts an event sent within a day (86,400 s) after its search, not one later nor one well before it', async () => {
    const SERVED = 1_800_000_000;
    const counted: number[] = [];
    const s: SearchLogStore = {
      ...empty,
      search: async () => ({ requestId: 'r', query: 'boot', day: '2027-01-15', servedAt: SERVED }),
      attribute: async (_t, _s, e) => {
        counted.push(e.id);
        return true;
      },
    };
    const ev = (id: number, created: number) => storedEvent(id, 'r', created);
    const n = await attributeSearchEvents(s, 't', [ev(1, SERVED), ev(2, SERVED + 86_400), ev(3, SERVED + 86_401), ev(4, SERVED - 3_600)]);
    expect(counted).toEqual([1, 2]);
    expect(n).toBe(2);
  });
});
