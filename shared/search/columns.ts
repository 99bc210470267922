/**
 * Metadata values of a build's documents or a delta's slots as columns (typed arrays), made the
 * first time a search asks for a facet key or a sort field and kept with their documents. Facets
 * and sort by a field see every match of a query; read from the documents, each match cost a few
 * cache misses per key (its object, its metadata, the value, the value's hash), 150 ns or more:
 * 13 ms per key over a broad query's 90,000 matches of the 100K catalog, 28 ms for four keys.
 * Read from columns, it is a few array reads (docs/benchmarks.md, "Facets and sort by a field").
 */
import type { Json } from '../domain/types.ts';
import { nfc } from '../domain/nfc.ts';
import { Lru } from '../lru.ts';
import { fieldGetter } from './filters.ts';
import type { SearchDoc } from './types.ts';

/**
 * One metadata key over a set of documents, as facets count it (facets.ts): whether a document
 * has a value, its distinct string and boolean values (as codes), and the range of its numbers.
 */
export interface FacetColumn {
  /** 1 where the document has the key with a value other than null. */
  present: Uint8Array<ArrayBuffer>;
  /**
   * Document i's distinct string and boolean values, where it has any (`present`):
   * `codes[start[i]]` to `codes[start[i + 1] - 1]`.
   */
  start: Int32Array<ArrayBuffer>;
  codes: Int32Array<ArrayBuffer>;
  /** The least and greatest of document i's numbers (NaN when it has none). */
  min: Float64Array<ArrayBuffer>;
  max: Float64Array<ArrayBuffer>;
  /** The value of each code: false (0), true (1), then the strings. */
  values: readonly (string | boolean)[];
  /** The code of each string of `values`. */
  codeOf: ReadonlyMap<string, number>;
}

/** Codes of booleans in every column; strings follow. */
const FALSE = 0;
const TRUE = 1;

/** A column a new one starts from: the same key's over the first of its documents, some gone since. */
export interface ColumnBase<C> {
  column: C;
  /** 1 for each of those documents still there (a delta's `live`). */
  live: ArrayLike<number>;
}

type Typed = Uint8Array<ArrayBuffer> | Int32Array<ArrayBuffer> | Float64Array<ArrayBuffer>;
interface TypedOf<A extends Typed> {
  new (buffer: ArrayBuffer, offset: number, length: number): A;
  BYTES_PER_ELEMENT: number;
}

/**
 * `a` (a view from the start of its buffer) lengthened to `length` in the same buffer when it has
 * room, else copied into one with half as much again. Past `a`'s length the buffer was never
 * written (views only lengthen): it holds zeros.
 */
function lengthened<A extends Typed>(C: TypedOf<A>, a: A | undefined, length: number): A {
  const room = a ? a.buffer.byteLength / C.BYTES_PER_ELEMENT : 0;
  if (a && length <= room) return new C(a.buffer, 0, length);
  const out = new C(new ArrayBuffer(Math.max(length, Math.ceil(room * 1.5)) * C.BYTES_PER_ELEMENT), 0, length);
  if (a) out.set(a);
  return out;
}

/**
 * `key`'s column over documents 0 to `count` − 1 (`docAt` undefined: none there). From a `base`
 * (a delta's slots: a slot's document never changes, it only goes), the base column's arrays are
 * taken over, lengthened in place where their buffers have room: the documents gone are cleared
 * and only those past it are read. The base column is not to be read afterwards.
 */
export function facetColumn(count: number, docAt: (i: number) => SearchDoc | undefined, key: string, base?: ColumnBase<FacetColumn>): FacetColumn {
  const from = base?.column;
  const prefix = from ? from.present.length : 0;
  const present = lengthened(Uint8Array, from?.present, count);
  const start = lengthened(Int32Array, from?.start, count + 1);
  const min = lengthened(Float64Array, from?.min, count);
  const max = lengthened(Float64Array, from?.max, count);
  let n = from ? from.codes.length : 0;
  let codes = lengthened(Int32Array, from?.codes, Math.max(64, n + count - prefix));
  const values: (string | boolean)[] = from ? (from.values as (string | boolean)[]) : [false, true];
  const byString = from ? (from.codeOf as Map<string, number>) : new Map<string, number>();
  if (base) {
    const { live } = base;
    for (let i = 0; i < prefix; i++) {
      if (present[i] === 0 || live[i] === 1) continue;
      present[i] = 0;
      min[i] = max[i] = Number.NaN;
    }
  }
  const get = fieldGetter(`metadata.${key}`);
  const codeOf = (v: Json): number => {
    if (v === false) return FALSE;
    if (v === true) return TRUE;
    if (typeof v !== 'string') return -1;
    const text = nfc(v);
    let c = byString.get(text);
    if (c === undefined) {
      c = values.length;
      values.push(text);
      byString.set(text, c);
    }
    return c;
  };
  const push = (c: number) => {
    if (n === codes.length) codes = lengthened(Int32Array, codes, n * 2);
    codes[n++] = c;
  };
  for (let i = prefix; i < count; i++) {
    start[i] = n;
    min[i] = max[i] = Number.NaN;
    const d = docAt(i);
    const v = d ? get(d) : undefined;
    if (v === null || v === undefined) continue;
    present[i] = 1;
    if (!Array.isArray(v)) {
      if (typeof v === 'number') min[i] = max[i] = v;
      else {
        const c = codeOf(v);
        if (c >= 0) push(c);
      }
      continue;
    }
    const first = n;
    for (const x of v) {
      if (typeof x === 'number') {
        if (!(x >= (min[i] as number))) min[i] = x;
        if (!(x <= (max[i] as number))) max[i] = x;
        continue;
      }
      const c = codeOf(x);
      // A list's element counts once per document.
      if (c >= 0 && codes.subarray(first, n).indexOf(c) < 0) push(c);
    }
  }
  start[count] = n;
  return { present, start, codes: lengthened(Int32Array, codes, n), min, max, values, codeOf: byString };
}

/**
 * The documents holding each code of a column (`rows[first[c]]` to `rows[first[c + 1] - 1]`, in
 * order): an `eq` or `in` filter's passing documents are the rows of its values, read in time
 * proportional to them instead of a pass over every document's codes (docs/benchmarks.md,
 * "Filter verdicts in one pass"). Made once per column, the first time a filter asks (a counting
 * pass over its codes); only documents with the key (`present`) are listed.
 */
export interface RowsByCode {
  first: Int32Array<ArrayBuffer>;
  rows: Int32Array<ArrayBuffer>;
}

const rowLists = new WeakMap<FacetColumn, RowsByCode>();

export function rowsByCode(column: FacetColumn): RowsByCode {
  let made = rowLists.get(column);
  if (made) return made;
  const { present, start, codes, values } = column;
  const count = present.length;
  const first = new Int32Array(values.length + 1);
  // A delta's carried column keeps a gone document's codes (only `present` is cleared).
  for (let i = 0; i < count; i++) {
    if (present[i] !== 1) continue;
    const end = start[i + 1] as number;
    for (let j = start[i] as number; j < end; j++) {
      const c = (codes[j] as number) + 1;
      first[c] = (first[c] as number) + 1;
    }
  }
  for (let c = 0; c < values.length; c++) first[c + 1] = (first[c + 1] as number) + (first[c] as number);
  const rows = new Int32Array(first[values.length] as number);
  const at = first.slice(0, values.length);
  for (let i = 0; i < count; i++) {
    if (present[i] !== 1) continue;
    const end = start[i + 1] as number;
    for (let j = start[i] as number; j < end; j++) {
      const c = codes[j] as number;
      const k = at[c] as number;
      rows[k] = i;
      at[c] = k + 1;
    }
  }
  made = { first, rows };
  rowLists.set(column, made);
  return made;
}

/**
 * The documents with numbers in a column, bucketed by their least number (`byMin`) and by their
 * greatest (`byMax`) over `buckets` equal spans of [lo, hi]: a comparison's or a range's passing
 * documents are then the rows of the buckets wholly on its side, and only a bucket its bound falls
 * in is read document by document (docs/benchmarks.md, "Filter verdicts in one pass"). Made once
 * per column, the first time such a filter asks (two counting passes). `bucketOf` is monotonic in
 * its value, so a bucket before a value's holds only smaller numbers, one after it only larger.
 * `single`: no document holds two different numbers (its least is its greatest).
 */
export interface RowsByNumber {
  buckets: number;
  bucketOf(v: number): number;
  byMin: { first: Int32Array<ArrayBuffer>; rows: Int32Array<ArrayBuffer> };
  byMax: { first: Int32Array<ArrayBuffer>; rows: Int32Array<ArrayBuffer> };
  single: boolean;
}

/** About this many documents to a bucket, at most this many buckets. */
const PER_BUCKET = 64;
const MAX_BUCKETS = 65_536;

const numberLists = new WeakMap<FacetColumn, RowsByNumber>();

export function rowsByNumber(column: FacetColumn): RowsByNumber {
  let made = numberLists.get(column);
  if (made) return made;
  const { min, max } = column;
  const count = min.length;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let numbered = 0;
  let single = true;
  for (let i = 0; i < count; i++) {
    const a = min[i] as number;
    if (Number.isNaN(a)) continue;
    const b = max[i] as number;
    numbered++;
    if (a < lo) lo = a;
    if (b > hi) hi = b;
    if (a !== b) single = false;
  }
  const span = hi - lo;
  const asked = numbered > 0 && span > 0 && Number.isFinite(span) ? Math.min(MAX_BUCKETS, Math.max(1, Math.ceil(numbered / PER_BUCKET))) : 1;
  // A span of a few subnormal steps divides to a width of 0, and (v - lo) / 0 is NaN at lo (no
  // bucket): one bucket then.
  const buckets = asked > 1 && span / asked > 0 ? asked : 1;
  const width = buckets > 1 ? span / buckets : 1;
  const bucketOf = buckets > 1 ? (v: number) => Math.min(buckets - 1, Math.max(0, Math.floor((v - lo) / width))) : () => 0;
  const lists = (values: Float64Array) => {
    const first = new Int32Array(buckets + 1);
    for (let i = 0; i < count; i++) {
      const v = values[i] as number;
      if (Number.isNaN(v)) continue;
      const b = bucketOf(v) + 1;
      first[b] = (first[b] as number) + 1;
    }
    for (let b = 0; b < buckets; b++) first[b + 1] = (first[b + 1] as number) + (first[b] as number);
    const rows = new Int32Array(first[buckets] as number);
    const at = first.slice(0, buckets);
    for (let i = 0; i < count; i++) {
      const v = values[i] as number;
      if (Number.isNaN(v)) continue;
      const b = bucketOf(v);
      const k = at[b] as number;
      rows[k] = i;
      at[b] = k + 1;
    }
    return { first, rows };
  };
  made = { buckets, bucketOf, byMin: lists(min), byMax: lists(max), single };
  numberLists.set(column, made);
  return made;
}

/** A field's finite numbers per document, as sort by a field orders them (NaN: none); from a `base` as `facetColumn`. */
export function numberColumn(count: number, docAt: (i: number) => SearchDoc | undefined, field: string, base?: ColumnBase<Float64Array<ArrayBuffer>>): Float64Array<ArrayBuffer> {
  const prefix = base ? base.column.length : 0;
  const out = lengthened(Float64Array, base?.column, count);
  if (base) {
    const { live } = base;
    for (let i = 0; i < prefix; i++) if (live[i] !== 1) out[i] = Number.NaN;
  }
  const get = fieldGetter(field);
  for (let i = prefix; i < count; i++) {
    const d = docAt(i);
    const v = d ? get(d) : undefined;
    out[i] = typeof v === 'number' && Number.isFinite(v) ? v : Number.NaN;
  }
  return out;
}

/** Columns kept per document set: the most recently asked for, at most this many of each kind. */
export const KEPT = 32;

/**
 * The columns of one set of documents (a build's, or a delta's slots until it changes), made on
 * first use. A delta's next cache starts from its `previous` one's columns (made there, or carried
 * through it and not yet asked for): its slots are those plus new ones, some gone since, so a
 * key's column is the previous one taken over, cleared where documents went and lengthened by the
 * new slots, instead of every slot's document read again after each change (6-10 ms a key with
 * the 100K catalog in the delta; docs/benchmarks.md). Bound: KEPT facet columns (about 25 bytes a
 * document each, plus the values) and KEPT number columns (8 bytes a document each) made, and as
 * many carried; the one asked for least recently is dropped first. A delta's columns keep up to
 * half as much again room to lengthen into.
 */
export class ColumnCache {
  private readonly facets = new Lru<string, FacetColumn>(KEPT);
  private readonly numbers = new Lru<string, Float64Array<ArrayBuffer>>(KEPT);
  /** The previous cache's columns (not the cache: no chain of caches is kept), taken as each key is asked for. */
  private readonly carried: { facets: Lru<string, FacetColumn>; numbers: Lru<string, Float64Array<ArrayBuffer>> };
  /** Which of the previous cache's documents are still there. */
  private readonly live: ArrayLike<number> | undefined;

  constructor(
    readonly count: number,
    private readonly docAt: (i: number) => SearchDoc | undefined,
    /** The cache of the same slots before the last changes, and which of them are still there. */
    previous?: { cache: ColumnCache; live: ArrayLike<number> },
    /**
     * A build's: its documents never change, so a filter reads its columns' row lists
     * (`rowsByCode`, `rowsByNumber`), made once per column and kept as long as the build. A
     * delta's columns are made anew with each change (during an import's embeddings, at about
     * every search), where lists of a 100K delta would be made again each time (2-7 ms, more than
     * the pass over every document they save): filters read its columns in one pass.
     */
    readonly lasting = false,
  ) {
    const before = previous?.cache;
    this.carried = { facets: carry(before?.carried.facets, before?.facets), numbers: carry(before?.carried.numbers, before?.numbers) };
    this.live = previous?.live;
  }

  facet(key: string): FacetColumn {
    return kept(this.facets, key, () => facetColumn(this.count, this.docAt, key, this.base(this.carried.facets, key)));
  }

  number(field: string): Float64Array {
    return kept(this.numbers, field, () => numberColumn(this.count, this.docAt, field, this.base(this.carried.numbers, field)));
  }

  /** The carried column of `key`, taken (it becomes this cache's). */
  private base<C extends NonNullable<unknown>>(carried: Lru<string, C>, key: string): ColumnBase<C> | undefined {
    const column = carried.peek(key);
    if (column === undefined || !this.live) return undefined;
    carried.delete(key);
    return { column, live: this.live };
  }
}

/** The columns a cache carries from its previous one: those it made, else those it carried; KEPT at most, the latest asked for. */
function carry<T extends NonNullable<unknown>>(carried: Lru<string, T> | undefined, made: Lru<string, T> | undefined): Lru<string, T> {
  const out = new Lru<string, T>(KEPT);
  for (const [k, v] of carried?.entries() ?? []) out.set(k, v);
  for (const [k, v] of made?.entries() ?? []) out.set(k, v);
  return out;
}

/**
 * `key`'s column of `m`, made when it has none. A column asked for becomes the latest (`Lru`), so
 * the one dropped is the one asked for least recently: a request asking for up to KEPT
 * keys (its filter's and its facets', some of them twice) never drops one it has read and makes it
 * again.
 */
function kept<T extends NonNullable<unknown>>(m: Lru<string, T>, key: string, make: () => T): T {
  let v = m.get(key);
  if (v === undefined) m.set(key, (v = make()));
  return v;
}
