import { metadataReader } from '../domain/metadata-path.ts';
import type { Json } from '../domain/types.ts';
import { MAX_FACETS, type FilterClause, type SearchBody, type ShorthandFilters } from '../schemas/search.ts';
import { firstAtLeast } from './analyze.ts';
import { asNfc, holdsAnyNfc, holdsNfc, nfc } from '../domain/nfc.ts';
import { KEPT, rowsByCode, rowsByNumber, type ColumnCache } from './columns.ts';
import { ASK, FAILS, NO_FILTER, PASSES, type DocFilter, type SearchDoc } from './types.ts';

const anyOf = (want: string | string[]) => {
  const wanted = new Set([want].flat().map(nfc));
  return (v: Json | undefined) => holdsAnyNfc(v, wanted);
};

/** The Core search filters (api-decisions): the shorthand object or a list of clauses, as a predicate over documents. */
export function coreFilter(f: SearchBody['filters']): DocFilter {
  if (!f) return NO_FILTER;
  return Array.isArray(f) ? clauseFilter(f) : shorthandFilter(f);
}

/**
 * The filters without those on the metadata key `key` (a clause on `metadata.<key>`; in the
 * shorthand, `category`, `brand`, `availability` and `price` are their metadata keys, and
 * `metadata.<key>`), or undefined when none is on it: a disjunctive facet's filter.
 */
export function filtersWithout(f: SearchBody['filters'], key: string): SearchBody['filters'] | undefined {
  if (!f) return undefined;
  if (Array.isArray(f)) {
    const kept = f.filter((c) => c.field !== `metadata.${key}`);
    return kept.length === f.length ? undefined : kept;
  }
  const own = (SHORTHAND_KEYS as readonly string[]).includes(key) && f[key as (typeof SHORTHAND_KEYS)[number]] !== undefined;
  const inMetadata = f.metadata !== undefined && Object.hasOwn(f.metadata, key);
  if (!own && !inMetadata) return undefined;
  const out: ShorthandFilters = { ...f };
  if (own) delete out[key as (typeof SHORTHAND_KEYS)[number]];
  if (inMetadata && f.metadata) {
    const { [key]: _, ...rest } = f.metadata;
    out.metadata = rest;
  }
  return out;
}

/** The shorthand's fields that match the metadata key of their name against one value or any of several. */
const SHORTHAND_VALUE_KEYS = ['category', 'brand', 'availability'] as const;
/** The shorthand's fields that stand for the metadata key of their name (`price` a range of it). */
const SHORTHAND_KEYS = [...SHORTHAND_VALUE_KEYS, 'price'] as const;

function shorthandFilter(f: ShorthandFilters): DocFilter {
  const checks: DocFilter[] = [];
  const columns: ColumnCheck[] = [];
  const keys = new Set<string>();
  for (const key of SHORTHAND_VALUE_KEYS) {
    const want = f[key];
    if (want === undefined) continue;
    const m = anyOf(want);
    checks.push((d) => m(d.metadata[key]));
    columns.push(valuesCheck(key, [want].flat(), false));
    keys.add(key);
  }
  if (f.metadata) {
    for (const [k, v] of Object.entries(f.metadata)) {
      const get = fieldGetter(`metadata.${k}`);
      const want = asNfc(v);
      checks.push((d) => holdsNfc(get(d), want));
      columns.push(valuesCheck(k, [v], false));
      keys.add(k);
    }
  }
  // Last: a range's pass over the set skips the documents the values' clauses failed (`withColumns`).
  if (f.price) {
    const { gte, lte } = f.price;
    checks.push((d) => someNumber(d.metadata.price, (p) => (gte === undefined || p >= gte) && (lte === undefined || p <= lte)));
    columns.push(rangeCheck('price', gte ?? Number.NEGATIVE_INFINITY, lte ?? Number.POSITIVE_INFINITY));
    keys.add('price');
  }
  return checks.length ? withColumns((d) => checks.every((c) => c(d)), columns, keys.size) : NO_FILTER;
}

/**
 * How a filter, facet or sort field (`metadata.<key>` or a top-level field) is read from a
 * document, worked out once per field: a filter reads it for every candidate of a query (tens of
 * thousands for a broad one). A metadata key is read as `metadataReader` resolves it (the
 * document's own key so spelled, else a dotted path into nested objects), as rule conditions read
 * it; the metadata columns (columns.ts) of a build and of a delta are made through it too, so an
 * item filters, counts and sorts alike before and after an index build.
 */
export function fieldGetter(field: string): (d: SearchDoc) => Json | undefined {
  if (field.startsWith('metadata.')) {
    const read = metadataReader(field.slice('metadata.'.length));
    return (d) => read(d.metadata);
  }
  switch (field) {
    case 'id':
      return (d) => d.id;
    case 'name':
      return (d) => d.name;
    case 'description':
      return (d) => d.description;
    case 'active':
      return (d) => d.active;
    case 'created':
      return (d) => d.created;
    case 'updated_at':
      return (d) => d.updated_at;
    default:
      return () => undefined;
  }
}

/**
 * Whether a field's number passes `test`, or one of the numbers of a list does (as `eq` and `in`
 * match a list by its elements, and as facets take a list's numbers into a key's min and max).
 */
const someNumber = (v: Json | undefined, test: (x: number) => boolean): boolean => (typeof v === 'number' ? test(v) : Array.isArray(v) && v.some((x) => typeof x === 'number' && test(x)));

/** A field without a value: not there, or null. */
const absent = (v: unknown) => v === undefined || v === null;

/**
 * `[{ field, op, value }]` clauses (all must hold) as a predicate: the Platform item search's
 * filters, and Core search's `filters` list. `eq`, `neq` and `in` compare exactly, strings in NFC (`neq` also
 * holds when the field is absent); `gt`, `gte`, `lt`, `lte` hold only for numbers (a list's
 * numbers each); `exists`
 * true / false: the field is present / absent, a key whose value is null absent (as facets count
 * it and as rule conditions test it).
 */
export function clauseFilter(filters: readonly FilterClause[]): DocFilter {
  const checks = filters.map(({ field, op, value: given }): DocFilter => {
    // Item IDs come as integers or as their digits (validated): compared as numbers.
    // Strings in NFC, as the document's are compared (`holdsNfc`).
    const asId = (x: Json | undefined) => (field === 'id' && typeof x === 'string' ? Number(x) : asNfc(x));
    const value = Array.isArray(given) ? given.map(asId) : asId(given);
    const values = Array.isArray(value) ? value : [value];
    const n = typeof value === 'number' ? value : NaN;
    const get = fieldGetter(field);
    // One predicate per operator, chosen once.
    switch (op) {
      case 'eq':
        return (d) => holdsNfc(get(d), value);
      case 'neq':
        return (d) => !holdsNfc(get(d), value);
      case 'in': {
        const wanted = new Set<Json | undefined>(values);
        return (d) => holdsAnyNfc(get(d), wanted);
      }
      case 'gt':
        return (d) => someNumber(get(d), (x) => x > n);
      case 'gte':
        return (d) => someNumber(get(d), (x) => x >= n);
      case 'lt':
        return (d) => someNumber(get(d), (x) => x < n);
      case 'lte':
        return (d) => someNumber(get(d), (x) => x <= n);
      case 'exists':
        return value === false ? (d) => absent(get(d)) : (d) => !absent(get(d));
    }
  });
  if (checks.length === 0) return NO_FILTER;
  return withColumns(
    (d) => {
      for (const c of checks) if (!c(d)) return false;
      return true;
    },
    // The values' clauses first: their rows fail the rest of the set, which the others then skip.
    [...filters].sort((a, b) => Number(!byValues(a)) - Number(!byValues(b))).map(clauseColumns),
    new Set(filters.filter((c) => c.field.startsWith('metadata.')).map((c) => c.field)).size,
  );
}

/** The Platform item-search filters. */
export const platformFilter = clauseFilter;

/**
 * A filter's clause read from a document set's metadata columns (columns.ts): lowers `out[i]`, the
 * verdict so far on document i of the set, to the clause's where that is lower: `FAILS`, `ASK`
 * (the document decides) or `PASSES`. One pass over the set in typed arrays, a few nanoseconds a
 * document (a closure per document and clause cost 20-40: docs/benchmarks.md, "Filter verdicts in
 * one pass").
 */
type ColumnCheck = (columns: ColumnCache, out: Uint8Array) => void;

/**
 * `predicate`, which can also be read from columns (`DocFilter.over`). A broad filtered query
 * tests tens of thousands of documents (each keyword match, and the vector neighbours a
 * selective filter makes it look for): read from its objects, a document costs a few cache
 * misses per clause (its metadata, the value, a list's elements), 100-200 ns; from columns, a few
 * array reads (docs/benchmarks.md, "Filters read from columns"). All clauses must hold: the
 * verdict is the least of theirs.
 */
function withColumns(predicate: (d: SearchDoc) => boolean, checks: readonly ColumnCheck[], keys: number): DocFilter {
  // A filter's columns and a request's facets are at most the columns a cache keeps: none is dropped
  // and made again while the request reads them. A filter of more keys (a shorthand `metadata` of
  // many) tests each document, which its first failing key answers, instead of making every key's
  // column over the whole set again at each request.
  // A filter of the item's own fields only (name, active, ...) has no column to read: every
  // verdict would be "ask the document".
  if (keys === 0 || keys > KEPT - MAX_FACETS) return predicate;
  const over = (columns: ColumnCache): Uint8Array => {
    const out = new Uint8Array(columns.count).fill(PASSES);
    for (const check of checks) check(columns, out);
    return out;
  };
  return Object.assign(predicate, { over });
}

/** An `eq`, `in` or `neq` clause of a metadata key: read from its values' rows when they are strings or booleans (`valuesCheck`). */
const byValues = (c: FilterClause) => c.field.startsWith('metadata.') && (c.op === 'eq' || c.op === 'in' || c.op === 'neq');

/** A clause as a column check: a metadata key's from its facet column; the item's own fields are left to the document. */
function clauseColumns({ field, op, value }: FilterClause): ColumnCheck {
  if (!field.startsWith('metadata.')) return askDocuments;
  const key = field.slice('metadata.'.length);
  switch (op) {
    case 'eq':
    case 'in':
    case 'neq':
      return valuesCheck(key, [value ?? []].flat(), op === 'neq');
    case 'exists':
      return existsCheck(key, value !== false);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return orderedCheck(key, op, typeof value === 'number' ? value : Number.NaN);
  }
}

/** A clause no column tells (a field of the item's own): every document not failed yet is asked. */
const askDocuments: ColumnCheck = (_columns, out) => {
  for (let i = 0; i < out.length; i++) if (out[i] === PASSES) out[i] = ASK;
};

/**
 * Cache: the verdicts a check keeps of the rows it reads (the rest fail), copied over its set's
 * afterwards; reused, as a new array of a 100K set costs more than the rows it holds, and never
 * handed out. Bound: one byte per document of the largest set filtered.
 */
let keptScratch = new Uint8Array(0);

/** `keptScratch` for a set of `count` documents, every verdict `FAILS`. */
function keptFor(count: number): Uint8Array {
  if (keptScratch.length < count) keptScratch = new Uint8Array(Math.max(count, Math.ceil(keptScratch.length * 1.5)));
  return keptScratch.subarray(0, count).fill(FAILS);
}

type Lists = { first: Int32Array; rows: Int32Array };

/** Copies `out`'s verdicts of the documents in group `g` of `lists` into `kept`. */
function keepGroup(kept: Uint8Array, out: Uint8Array, { first, rows }: Lists, g: number): void {
  for (let k = first[g] as number, end = first[g + 1] as number; k < end; k++) {
    const i = rows[k] as number;
    kept[i] = out[i] as number;
  }
}

/**
 * Keeps `out`'s verdicts of the documents in buckets `from` to `to` of `lists` (those of a bucket
 * `edge` says its bound falls in only where `passes`), every other document failing.
 */
function keepBuckets(out: Uint8Array, lists: Lists, from: number, to: number, edge: (b: number) => boolean, passes: (i: number) => boolean): void {
  const kept = keptFor(out.length);
  const { first, rows } = lists;
  for (let b = from; b <= to; b++) {
    if (!edge(b)) {
      keepGroup(kept, out, lists, b);
      continue;
    }
    for (let k = first[b] as number, end = first[b + 1] as number; k < end; k++) {
      const i = rows[k] as number;
      if (passes(i)) kept[i] = out[i] as number;
    }
  }
  out.set(kept);
}

/**
 * `eq` / `in` (a document whose value is one of `values`, or whose list holds one) and `neq` (not
 * so: an absent or null value passes). Strings and booleans are answered by the column's codes;
 * a number by the document's numbers' range (its least and greatest it holds, none outside it),
 * a number strictly between them by the document.
 */
function valuesCheck(key: string, values: readonly Json[], negate: boolean): ColumnCheck {
  return (columns, out) => {
    const column = columns.facet(key);
    const { present, start, codes, min, max, values: coded, codeOf } = column;
    const wanted = new Uint8Array(coded.length);
    const wantedCodes: number[] = [];
    const numbers: number[] = [];
    for (const v of values) {
      let code: number | undefined;
      if (typeof v === 'number') numbers.push(v);
      else if (typeof v === 'boolean') code = v ? 1 : 0;
      else if (typeof v === 'string') code = codeOf.get(nfc(v));
      if (code !== undefined && wanted[code] === 0) {
        wanted[code] = 1;
        wantedCodes.push(code);
      }
    }
    if (numbers.length === 0 && columns.lasting) {
      // Strings and booleans only, of a build: the documents holding one of them are the rows of
      // their codes, the only ones that pass (eq, in) or the only ones that fail (neq).
      const lists = rowsByCode(column);
      if (negate) {
        const { first, rows } = lists;
        for (const c of wantedCodes) for (let k = first[c] as number, end = first[c + 1] as number; k < end; k++) out[rows[k] as number] = FAILS;
        return;
      }
      const kept = keptFor(out.length);
      for (const c of wantedCodes) keepGroup(kept, out, lists, c);
      out.set(kept);
      return;
    }
    const hit = negate ? FAILS : PASSES;
    const miss = negate ? PASSES : FAILS;
    // Sorted, each document's least and greatest are looked up (two binary searches), not compared
    // with every number: an `in` of a thousand numbers over a 100K set was 100 million comparisons.
    const sorted = Float64Array.from(numbers).sort();
    const count = out.length;
    for (let i = 0; i < count; i++) {
      const before = out[i] as number;
      if (before === FAILS) continue;
      let verdict = miss;
      if (present[i] === 1) {
        let found = false;
        const end = start[i + 1] as number;
        for (let j = start[i] as number; j < end; j++)
          if (wanted[codes[j] as number] === 1) {
            found = true;
            break;
          }
        if (found) verdict = hit;
        else {
          // The least and greatest are numbers the document holds; one between them may be too.
          // `next`: the least of the numbers at least `lo` (NaN: none; with no number, NaN, neither test holds).
          const lo = min[i] as number;
          const hi = max[i] as number;
          const at = firstAtLeast(sorted, lo);
          const next = at < sorted.length ? (sorted[at] as number) : Number.NaN;
          if (next === lo || next === hi) verdict = hit;
          else if (next < hi) {
            const up = firstAtLeast(sorted, hi);
            verdict = up < sorted.length && sorted[up] === hi ? hit : ASK;
          }
        }
      }
      if (verdict < before) out[i] = verdict;
    }
  };
}

/** `exists`: the key has a value other than null (`present`), or not. */
function existsCheck(key: string, wanted: boolean): ColumnCheck {
  return (columns, out) => {
    const { present } = columns.facet(key);
    const want = wanted ? 1 : 0;
    for (let i = 0; i < out.length; i++) if (present[i] !== want) out[i] = FAILS;
  };
}

/**
 * `gt`, `gte`, `lt`, `lte`: one of the document's numbers compares so, which its numbers' range
 * tells exactly: its greatest for `gt` / `gte`, its least for `lt` / `lte`. A build's columns are
 * read from the buckets of those numbers (`rowsByNumber`): the buckets wholly on the passing side
 * pass, the one the bound falls in is read document by document; a delta's in one pass. NaN (no
 * number) compares false: the document fails, as `someNumber` has it.
 */
function orderedCheck(key: string, op: 'gt' | 'gte' | 'lt' | 'lte', n: number): ColumnCheck {
  return (columns, out) => {
    const column = columns.facet(key);
    if (Number.isNaN(n)) {
      out.fill(FAILS);
      return;
    }
    const { min, max } = column;
    if (!columns.lasting) {
      const count = out.length;
      switch (op) {
        case 'gt':
          for (let i = 0; i < count; i++) if (out[i] !== FAILS && !((max[i] as number) > n)) out[i] = FAILS;
          return;
        case 'gte':
          for (let i = 0; i < count; i++) if (out[i] !== FAILS && !((max[i] as number) >= n)) out[i] = FAILS;
          return;
        case 'lt':
          for (let i = 0; i < count; i++) if (out[i] !== FAILS && !((min[i] as number) < n)) out[i] = FAILS;
          return;
        case 'lte':
          for (let i = 0; i < count; i++) if (out[i] !== FAILS && !((min[i] as number) <= n)) out[i] = FAILS;
          return;
      }
    }
    const { buckets, bucketOf, byMin, byMax } = rowsByNumber(column);
    const at = bucketOf(n);
    const edge = (b: number) => b === at;
    switch (op) {
      case 'gt':
        return keepBuckets(out, byMax, at, buckets - 1, edge, (i) => (max[i] as number) > n);
      case 'gte':
        return keepBuckets(out, byMax, at, buckets - 1, edge, (i) => (max[i] as number) >= n);
      case 'lt':
        return keepBuckets(out, byMin, 0, at, edge, (i) => (min[i] as number) < n);
      case 'lte':
        return keepBuckets(out, byMin, 0, at, edge, (i) => (min[i] as number) <= n);
    }
  };
}

/**
 * The shorthand `price: { gte, lte }`: one of the document's numbers within both bounds. Its
 * numbers' range tells when it is one number, lies outside the bounds, or has an end within
 * them; a list with numbers on both sides of the bounds and none seen within is left to the
 * document.
 */
function rangeCheck(key: string, gte: number, lte: number): ColumnCheck {
  return (columns, out) => {
    const column = columns.facet(key);
    const { min, max } = column;
    const numbers = columns.lasting ? rowsByNumber(column) : undefined;
    if (numbers?.single) {
      // One number a document: it passes when that number is within the bounds, else fails; the
      // buckets between the two the bounds fall in pass whole.
      const from = numbers.bucketOf(gte);
      const to = numbers.bucketOf(lte);
      keepBuckets(
        out,
        numbers.byMin,
        from,
        to,
        (b) => b === from || b === to,
        (i) => (min[i] as number) >= gte && (min[i] as number) <= lte,
      );
      return;
    }
    for (let i = 0; i < out.length; i++) {
      if (out[i] === FAILS) continue;
      const lo = min[i] as number;
      const hi = max[i] as number;
      // NaN (no number): neither end is within, and `hi >= gte` is false: it fails.
      if ((lo >= gte && lo <= lte) || (hi >= gte && hi <= lte)) continue;
      if (hi >= gte && lo <= lte) {
        if (out[i] === PASSES) out[i] = ASK;
      } else out[i] = FAILS;
    }
  };
}
