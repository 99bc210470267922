import { ValidationError } from '../errors.ts';
import type { SearchDoc } from './engine.ts';
import { fieldValue } from './filters.ts';

/**
 * `sort: { field, order }`: the matches of a search in a numeric field's order instead of by
 * relevance. Items whose field is absent or not a number come after all others; ties (and those
 * items) go by item id ascending. Ranking's visitor (`PageRequest.visit`) hands every match to
 * `SortedPage.visit`, which keeps only the best `limit + 1` after the cursor: O(matches × log
 * limit) comparisons, no sort of the whole list.
 */
export interface SortSpec {
  field: string;
  order: 'asc' | 'desc';
}

/** Where a sorted page ends: the last hit's value (null: without one) and id. */
export interface SortCursor {
  value: number | null;
  id: number;
  builtAt: number;
}

export interface SortedHit {
  doc: SearchDoc;
  score: number;
  value: number | null;
}

const numberOf = (d: SearchDoc, field: string): number | null => {
  const v = fieldValue(d, field);
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

/** The order of sorted hits: negative when `a` comes first. */
function compare(sort: SortSpec, a: { value: number | null; id: number }, b: { value: number | null; id: number }): number {
  if (a.value !== b.value) {
    if (a.value === null) return 1;
    if (b.value === null) return -1;
    return sort.order === 'asc' ? a.value - b.value : b.value - a.value;
  }
  return a.id - b.id;
}

export class SortedPage {
  readonly hits: SortedHit[] = [];

  constructor(
    private readonly sort: SortSpec,
    private readonly limit: number,
    private readonly after: SortCursor | undefined,
  ) {}

  readonly visit = (doc: SearchDoc, score: number): void => {
    const key = { value: numberOf(doc, this.sort.field), id: doc.id };
    if (this.after && compare(this.sort, key, this.after) <= 0) return;
    const keep = this.limit + 1;
    const hits = this.hits;
    if (hits.length === keep && compare(this.sort, key, { value: (hits[keep - 1] as SortedHit).value, id: (hits[keep - 1] as SortedHit).doc.id }) >= 0) return;
    let lo = 0;
    let hi = hits.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const h = hits[mid] as SortedHit;
      if (compare(this.sort, { value: h.value, id: h.doc.id }, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    hits.splice(lo, 0, { doc, score, value: key.value });
    if (hits.length > keep) hits.pop();
  };
}

/** A sorted list's cursor names its sort, so a page of another order is refused, not misread. */
export const encodeSortCursor = (sort: SortSpec, last: SortedHit, builtAt: number) =>
  Buffer.from(JSON.stringify(['s', sort.field, sort.order, last.value, last.doc.id, builtAt])).toString('base64url');

/** The sort cursor in `c`, undefined when `c` is no sort cursor, a 400 when it is one of another sort. */
export function decodeSortCursor(c: string, sort: SortSpec | undefined, field: string): SortCursor | undefined {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(c, 'base64url').toString());
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v[0] !== 's') return undefined;
  const [, f, order, value, id, builtAt] = v as unknown[];
  const valid =
    typeof f === 'string' &&
    (order === 'asc' || order === 'desc') &&
    (value === null || (typeof value === 'number' && Number.isFinite(value))) &&
    Number.isSafeInteger(id) &&
    Number.isSafeInteger(builtAt) &&
    (builtAt as number) >= 0;
  if (!valid) throw new ValidationError('Invalid cursor.', { [field]: ['Not a cursor returned by this API.'] });
  if (!sort || sort.field !== f || sort.order !== order) {
    throw new ValidationError('Invalid cursor.', { [field]: [`This cursor is from a search sorted by ${f} ${order}; send the same sort.`] });
  }
  return { value: value as number | null, id: id as number, builtAt: builtAt as number };
}
