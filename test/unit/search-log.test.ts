import { describe, expect, it } from 'vitest';
import type { SearchRecord } from '../../shared/search/analytics.ts';
import { normaliseQuery, searchRecording } from '../../shared/search/search-log.ts';

describe("a search's query as analytics counts it (normaliseQuery)", () => {
  it('is the folded, lower-cased words joined by one space; a browse is empty', () => {
    expect(normaliseQuery('  Trail  RUNNING, Shoes! ')).toBe('trail running shoes');
    expect(normaliseQuery('')).toBe('');
    expect(normaliseQuery('?!')).toBe('');
  });

  it('keeps the words that fit in 200 characters, up to exactly 200', () => {
    const w = 'a'.repeat(99);
    expect(normaliseQuery(`${w} ${w}`)).toBe(`${w} ${w}`); // 199
    const fits = `${'b'.repeat(100)} ${'c'.repeat(99)}`; // 200
    expect(normaliseQuery(fits)).toBe(fits);
    expect(normaliseQuery(`${fits} d`)).toBe(fits);
    expect(normaliseQuery(`${'b'.repeat(100)} ${'c'.repeat(100)}`)).toBe('b'.repeat(100));
  });

  it('cuts a first word longer than 200 characters instead of counting the search as a browse', () => {
    expect(normaliseQuery('q'.repeat(200))).toBe('q'.repeat(200));
    expect(normaliseQuery(`${'z'.repeat(250)} boots`)).toBe('z'.repeat(200));
    // Never inside a character of two UTF-16 units.
    const cut = normaliseQuery(`${'x'.repeat(199)}𠀀𠀀`);
    expect(cut).toBe('x'.repeat(199));
  });
});

describe("a search's recording (searchRecording)", () => {
  it('cuts the query at the first word that does not fit: no later, shorter word is taken after it', () => {
    // Else "a…(150) b…(60) c" would count as "a… c", a query nobody sent.
    expect(normaliseQuery(`${'a'.repeat(150)} ${'b'.repeat(60)} c`)).toBe('a'.repeat(150));
  });

  it('marks a search without results under no_results, and only such a search', async () => {
    const marked: SearchRecord[] = [];
    const store = { record: async () => {}, noResults: async (_t: string, s: SearchRecord) => void marked.push(s) };
    await searchRecording(store, 't', { requestId: 'r1', query: 'Boot', servedAt: 1_800_000_000 }).ranked(false);
    expect(marked).toEqual([]);
    await searchRecording(store, 't', { requestId: 'r2', query: 'Boot', servedAt: 1_800_000_000 }).ranked(true);
    expect(marked).toEqual([{ requestId: 'r2', query: 'boot', day: '2027-01-15', servedAt: 1_800_000_000 }]);
  });
});
