import { describe, expect, it } from 'vitest';
import { searchBody } from '../../shared/schemas/search.ts';
import type { SearchDoc } from '../../shared/search/engine.ts';
import { decodeSortCursor, encodeSortCursor, type SortSpec } from '../../shared/search/sort.ts';

/** The last hit of a page, as a sorted search's cursor is made from it (the worst case of its numbers). */
const last = { doc: { id: 9_007_199_254_740_991 } as SearchDoc, score: 1, value: -1.2345678901234567e308 };
const BUILT = 1_796_047_738;
/** A list's digest, as `listDigest` makes it (12 characters). */
const LIST = 'AbCdEfGhIjKl';

/** A cursor as the next request sends it back: through the body's schema, then decoded. */
function sentBack(sort: SortSpec, cursor: string) {
  const body = searchBody.safeParse({ query: '', sort, starting_after: cursor });
  expect(body.success, JSON.stringify(body.error?.issues)).toBe(true);
  return decodeSortCursor(cursor, sort, 'starting_after', LIST);
}

describe("a sorted search's next_cursor", () => {
  it('is taken back as starting_after whatever the length of the metadata key sorted by (1 to 1,000 characters)', () => {
    // The longest fields named as written (64 bytes with their quotes), and longer ones.
    for (const key of ['k', 'k'.repeat(53), 'ü'.repeat(26), 'k'.repeat(54), 'k'.repeat(110), 'k'.repeat(1000), 'ü'.repeat(1000), '\u0001'.repeat(1000)]) {
      const sort: SortSpec = { field: `metadata.${key}`, order: 'desc' };
      const cursor = encodeSortCursor(sort, last, BUILT, LIST);
      expect(cursor.length).toBeLessThanOrEqual(200);
      expect(sentBack(sort, cursor)).toEqual({ value: last.value, id: last.doc.id, builtAt: BUILT });
    }
  });

  it('is still refused by a request with another sort, a long field as a short one', () => {
    const long: SortSpec = { field: `metadata.${'k'.repeat(500)}`, order: 'asc' };
    const cursor = encodeSortCursor(long, last, BUILT, LIST);
    expect(() => decodeSortCursor(cursor, { field: `metadata.${'k'.repeat(499)}`, order: 'asc' }, 'starting_after')).toThrow('Invalid cursor.');
    expect(() => decodeSortCursor(cursor, { ...long, order: 'desc' }, 'starting_after')).toThrow('Invalid cursor.');
    expect(() => decodeSortCursor(cursor, undefined, 'starting_after')).toThrow('Invalid cursor.');
    const short = encodeSortCursor({ field: 'metadata.price', order: 'asc' }, last, BUILT, LIST);
    expect(() => decodeSortCursor(short, { field: 'created', order: 'asc' }, 'starting_after')).toThrow('Invalid cursor.');
  });

  it('is refused when forged: a builtAt below 0, an id or value of another kind, an unknown order', () => {
    // A forged cursor must be a 400 naming the field, not a page read from a build that never was.
    const sort: SortSpec = { field: 'metadata.price', order: 'asc' };
    const forged = (...v: unknown[]) => Buffer.from(JSON.stringify(['s', 'metadata.price', ...v])).toString('base64url');
    expect(decodeSortCursor(forged('asc', 5, 7, 0), sort, 'starting_after')).toEqual({ value: 5, id: 7, builtAt: 0 });
    for (const bad of [forged('asc', 5, 7, -1), forged('asc', 5, 7.5, 0), forged('asc', '5', 7, 0), forged('up', 5, 7, 0), forged('asc', 5, 7, 0, 3)]) {
      expect(() => decodeSortCursor(bad, sort, 'starting_after'), bad).toThrow('Invalid cursor.');
    }
  });

  it('is refused by another search (another query, mode, filters or user), as a relevance cursor is; one that names no list is taken', () => {
    const sort: SortSpec = { field: 'metadata.price', order: 'asc' };
    const cursor = encodeSortCursor(sort, last, BUILT, LIST);
    expect(decodeSortCursor(cursor, sort, 'starting_after', LIST)).toEqual({ value: last.value, id: last.doc.id, builtAt: BUILT });
    expect(() => decodeSortCursor(cursor, sort, 'starting_after', 'another-list')).toThrow('Invalid cursor.');
    // Cursors made before they named their list.
    expect(decodeSortCursor(encodeSortCursor(sort, last, BUILT, undefined), sort, 'starting_after', LIST)).toEqual({ value: last.value, id: last.doc.id, builtAt: BUILT });
  });
});
