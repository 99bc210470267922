import { describe, expect, it } from 'vitest';
import { type SearchLogStore, searchAnalytics } from '../../shared/search/analytics.ts';

/** A store with no searches: the range's validation and the days it names are under test. */
const empty: SearchLogStore = {
  record: async () => {},
  noResults: async () => {},
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
