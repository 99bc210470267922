import { InvalidInput } from '../domain/errors.ts';
import { cursorDigest, sameList } from './cursor.ts';
import type { SearchDoc } from './engine.ts';
import type { ColumnCache } from './columns.ts';

/**
 * `sort: { field, order }`: the matches of a search in a numeric field's order instead of by
 * relevance. Items whose field is absent or not a number come after all others; ties (and those
 * items) go by item id in the sort's order (ids grow with creation: `created` descending lists
 * items created in the same second newest first too). Ranking's visitor (`PageRequest.visit`) hands every match to
 * `SortedPage.over`'s visitor, which keeps only the best `limit + 1` after the cursor: O(matches ×
 * log limit) comparisons, no sort of the whole list.
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

/** What sort reads of a ranking's view: the field's columns and the ids of the build and the delta, and their documents. */
export interface SortView {
  index: { docs: readonly SearchDoc[]; ids: ArrayLike<number>; columns(): ColumnCache };
  delta: { ids: ArrayLike<number>; docAt(slot: number): SearchDoc; columns(): ColumnCache };
}

/** The order of sorted hits: negative when (aValue, aId) comes first. */
function compare(sort: SortSpec, aValue: number | null, aId: number, bValue: number | null, bId: number): number {
  if (aValue !== bValue) {
    if (aValue === null) return 1;
    if (bValue === null) return -1;
    return sort.order === 'asc' ? aValue - bValue : bValue - aValue;
  }
  return sort.order === 'asc' ? aId - bId : bId - aId;
}

interface Kept {
  key: number;
  id: number;
  score: number;
  value: number | null;
}

export class SortedPage {
  private readonly kept: Kept[] = [];
  private docOf: (key: number) => SearchDoc = () => {
    throw new Error('SortedPage: no ranking visited');
  };

  constructor(
    private readonly sort: SortSpec,
    private readonly limit: number,
    private readonly after: SortCursor | undefined,
  ) {}

  /**
   * The visitor of one ranking over `view` (`PageRequest.visit`): each match by its ranking key
   * (a build position, or the build's size plus a delta slot), its value read from the field's
   * column (columns.ts; a finite number, else none).
   */
  over(view: SortView): (key: number, score: number) => void {
    const { index, delta } = view;
    const N = index.docs.length;
    const built = index.columns().number(this.sort.field);
    const fresh = delta.columns().number(this.sort.field);
    this.docOf = (key) => (key < N ? (index.docs[key] as SearchDoc) : delta.docAt(key - N));
    const { sort, after, kept } = this;
    const keep = this.limit + 1;
    return (key, score) => {
      const v = (key < N ? built[key] : fresh[key - N]) as number;
      const value = Number.isNaN(v) ? null : v;
      const id = (key < N ? index.ids[key] : delta.ids[key - N]) as number;
      if (after && compare(sort, value, id, after.value, after.id) <= 0) return;
      const last = kept[keep - 1];
      if (last && compare(sort, value, id, last.value, last.id) >= 0) return;
      let lo = 0;
      let hi = kept.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        const h = kept[mid] as Kept;
        if (compare(sort, h.value, h.id, value, id) < 0) lo = mid + 1;
        else hi = mid;
      }
      kept.splice(lo, 0, { key, id, score, value });
      if (kept.length > keep) kept.pop();
    };
  }

  /** The best `limit + 1` matches after the cursor, in order, with their documents. */
  get hits(): SortedHit[] {
    return this.kept.map((h) => ({ doc: this.docOf(h.key), score: h.score, value: h.value }));
  }
}

/**
 * How a sorted list's cursor names its field: as written when that is short, else by a digest
 * (`#` and 16 characters of its SHA-256; no field starts with `#`). A field is up to 1,009
 * characters (`metadata.` and a key of 1,000), and a cursor is at most 200 (`starting_after`):
 * a key of 110 or more gave a `next_cursor` the next page refused.
 */
const FIELD_AS_WRITTEN_BYTES = 64;
const cursorField = (field: string): string => (Buffer.byteLength(JSON.stringify(field)) <= FIELD_AS_WRITTEN_BYTES ? field : `#${cursorDigest(field, 16)}`);

/**
 * A sorted list's cursor names its sort, so a page of another order is refused, not misread, and
 * the digest of what else makes the list (`list`: query, mode, filters, user, as a relevance
 * cursor holds it), so a page of another search is refused too. At most 194 characters: a field
 * of 64 bytes, a value of 24 characters, an id of 16 digits.
 */
export const encodeSortCursor = (sort: SortSpec, last: SortedHit, builtAt: number, list: string | undefined) =>
  Buffer.from(JSON.stringify(['s', cursorField(sort.field), sort.order, last.value, last.doc.id, builtAt, ...(list === undefined ? [] : [list])])).toString('base64url');

/**
 * The sort cursor in `c`, undefined when `c` is no sort cursor, a 400 when it is one of another
 * sort or (both naming one) of another list.
 */
export function decodeSortCursor(c: string, sort: SortSpec | undefined, field: string, list?: string): SortCursor | undefined {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(c, 'base64url').toString());
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v[0] !== 's') return undefined;
  const [, f, order, value, id, builtAt, of] = v as unknown[];
  const valid =
    typeof f === 'string' &&
    (of === undefined || typeof of === 'string') &&
    (order === 'asc' || order === 'desc') &&
    (value === null || (typeof value === 'number' && Number.isFinite(value))) &&
    Number.isSafeInteger(id) &&
    Number.isSafeInteger(builtAt) &&
    (builtAt as number) >= 0;
  if (!valid) throw new InvalidInput('Invalid cursor.', { [field]: ['Not a cursor returned by this API.'] });
  if (!sort || (sort.field !== f && cursorField(sort.field) !== f) || sort.order !== order) {
    const by = (f as string).startsWith('#') ? `another field (${order})` : `${f} ${order}`;
    throw new InvalidInput('Invalid cursor.', { [field]: [`This cursor is from a search sorted by ${by}; send the same sort.`] });
  }
  sameList(of as string | undefined, list, field);
  return { value: value as number | null, id: id as number, builtAt: builtAt as number };
}
