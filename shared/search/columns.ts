/**
 * Metadata values of a build's documents or a delta's slots as columns (typed arrays), made the
 * first time a search asks for a facet key or a sort field and kept with their documents. Facets
 * and sort by a field see every match of a query; read from the documents, each match cost a few
 * cache misses per key (its object, its metadata, the value, the value's hash), 150 ns or more:
 * 13 ms per key over a broad query's 90,000 matches of the 100K catalog, 28 ms for four keys.
 * Read from columns, it is a few array reads (docs/benchmarks.md, "Facets and sort by a field").
 */
import type { Json } from '../domain/types.ts';
import { fieldGetter } from './filters.ts';
import type { SearchDoc } from './types.ts';

/**
 * One metadata key over a set of documents, as facets count it (facets.ts): whether a document
 * has a value, its distinct string and boolean values (as codes), and the range of its numbers.
 */
export interface FacetColumn {
  /** 1 where the document has the key with a value other than null. */
  present: Uint8Array;
  /** Document i's distinct string and boolean values: `codes[start[i]]` to `codes[start[i + 1] - 1]`. */
  start: Int32Array;
  codes: Int32Array;
  /** The least and greatest of document i's numbers (NaN when it has none). */
  min: Float64Array;
  max: Float64Array;
  /** The value of each code: false (0), true (1), then the strings. */
  values: readonly (string | boolean)[];
}

/** Codes of booleans in every column; strings follow. */
const FALSE = 0;
const TRUE = 1;

export function facetColumn(count: number, docAt: (i: number) => SearchDoc | undefined, key: string): FacetColumn {
  const present = new Uint8Array(count);
  const start = new Int32Array(count + 1);
  const min = new Float64Array(count).fill(Number.NaN);
  const max = new Float64Array(count).fill(Number.NaN);
  const codes: number[] = [];
  const values: (string | boolean)[] = [false, true];
  const byString = new Map<string, number>();
  const get = fieldGetter(`metadata.${key}`);
  const codeOf = (v: Json): number => {
    if (v === false) return FALSE;
    if (v === true) return TRUE;
    if (typeof v !== 'string') return -1;
    let c = byString.get(v);
    if (c === undefined) {
      c = values.length;
      values.push(v);
      byString.set(v, c);
    }
    return c;
  };
  for (let i = 0; i < count; i++) {
    start[i] = codes.length;
    const d = docAt(i);
    const v = d ? get(d) : undefined;
    if (v === null || v === undefined) continue;
    present[i] = 1;
    if (!Array.isArray(v)) {
      if (typeof v === 'number') min[i] = max[i] = v;
      else {
        const c = codeOf(v);
        if (c >= 0) codes.push(c);
      }
      continue;
    }
    const first = codes.length;
    for (const x of v) {
      if (typeof x === 'number') {
        if (!(x >= (min[i] as number))) min[i] = x;
        if (!(x <= (max[i] as number))) max[i] = x;
        continue;
      }
      const c = codeOf(x);
      // A list's element counts once per document.
      if (c >= 0 && codes.indexOf(c, first) < 0) codes.push(c);
    }
  }
  start[count] = codes.length;
  return { present, start, codes: Int32Array.from(codes), min, max, values };
}

/** A field's finite numbers per document, as sort by a field orders them (NaN: none). */
export function numberColumn(count: number, docAt: (i: number) => SearchDoc | undefined, field: string): Float64Array {
  const out = new Float64Array(count).fill(Number.NaN);
  const get = fieldGetter(field);
  for (let i = 0; i < count; i++) {
    const d = docAt(i);
    const v = d ? get(d) : undefined;
    if (typeof v === 'number' && Number.isFinite(v)) out[i] = v;
  }
  return out;
}

/** Columns kept per document set: the most recently made ones, at most this many of each kind. */
const KEPT = 32;

/**
 * The columns of one set of documents (a build's, or a delta's slots until it changes), made on
 * first use. Bound: KEPT facet columns (about 25 bytes a document each, plus the values) and KEPT
 * number columns (8 bytes a document each); the oldest made is dropped first.
 */
export class ColumnCache {
  private readonly facets = new Map<string, FacetColumn>();
  private readonly numbers = new Map<string, Float64Array>();

  constructor(
    readonly count: number,
    private readonly docAt: (i: number) => SearchDoc | undefined,
  ) {}

  facet(key: string): FacetColumn {
    return kept(this.facets, key, () => facetColumn(this.count, this.docAt, key));
  }

  number(field: string): Float64Array {
    return kept(this.numbers, field, () => numberColumn(this.count, this.docAt, field));
  }
}

function kept<T>(m: Map<string, T>, key: string, make: () => T): T {
  let v = m.get(key);
  if (v === undefined) {
    if (m.size >= KEPT) m.delete(m.keys().next().value as string);
    v = make();
    m.set(key, v);
  }
  return v;
}
