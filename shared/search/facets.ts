import { answerBytes, answerBytesAtMost } from '../domain/answer-size.ts';
import type { ColumnCache, FacetColumn } from './columns.ts';
import type { DocFilter } from './types.ts';

/**
 * Facets of a search: for each requested metadata key, over every match of the query and
 * filters (the same matches as `total`, not only the page), the matches with a value, the count
 * of each string (or boolean) value, and for numbers their min and max. A list value counts each of its distinct
 * elements. Fed by ranking's visitor (`PageRequest.visit`) with each match's key, counted from the
 * key's column (columns.ts): a few array reads per match and key, on top of the matches ranking
 * already goes through.
 */
export interface FacetResult {
  /**
   * Matches with a value of the key: a string, boolean or number, or a list holding one. A match
   * whose value is an object, an empty list or a list of only objects and nulls is not counted
   * (it adds nothing to `values`, `min` or `max`), though `exists` holds for it.
   */
  count: number;
  /** String and boolean values by count (descending, then value), at most FACET_VALUES. */
  values: { value: string | boolean; count: number }[];
  /** More distinct values than shown. */
  values_truncated: boolean;
  /** Range of the numeric values (null when none is a number). */
  min: number | null;
  max: number | null;
}

/** Distinct values shown per facet. */
export const FACET_VALUES = 100;

/**
 * The most bytes an answer's facets take as Lambda writes them (answer-size.ts). Values are up to
 * 16 KiB of metadata each, so 20 keys of 100 values could take 60 MB, ten times a Lambda answer:
 * past this, `withinBytes` cuts the value lists. The page's hits take what is left of ANSWER_BYTES.
 */
export const FACET_BYTES = 1_000_000;

/**
 * `facets` within `budget` bytes as Lambda writes them: as they are when they fit (at once when
 * their JSON's length bounds them under it, as it does 20 keys of 100 values of 150 characters); else
 * each key's `values` cut to its most frequent ones, taken in rounds (every key's first value,
 * then every key's second, ...) until the next does not fit, `values_truncated` true where cut.
 * Counts, `min` and `max` stay whole.
 */
export function withinBytes(facets: Record<string, FacetResult>, budget = FACET_BYTES): Record<string, FacetResult> {
  if (answerBytesAtMost(JSON.stringify(facets)) <= budget) return facets;
  const keys = Object.keys(facets);
  const all = keys.map((k) => facets[k] as FacetResult);
  // Without values, then each value and its comma.
  const out: Record<string, FacetResult> = Object.create(null);
  for (const [k, key] of keys.entries()) out[key] = { ...(all[k] as FacetResult), values: [] };
  let used = answerBytes(out);
  const kept = keys.map(() => 0);
  rounds: for (let r = 0; r < FACET_VALUES; r++)
    for (const [k, f] of all.entries()) {
      const v = f.values[r];
      if (v === undefined) continue;
      used += answerBytes(v) + (r > 0 ? 1 : 0);
      if (used > budget) break rounds;
      kept[k] = r + 1;
    }
  for (const [k, key] of keys.entries()) {
    const f = all[k] as FacetResult;
    const n = kept[k] as number;
    out[key] = { ...f, values: f.values.slice(0, n), values_truncated: f.values_truncated || n < f.values.length };
  }
  return out;
}

/** What facets read of a ranking's view: the build's columns and size, the delta's columns. */
export interface FacetView {
  index: { docs: { length: number }; columns(): ColumnCache };
  delta: { columns(): ColumnCache };
}

/** A key's column of the build or of the delta, with the matches' counts by its codes. */
interface Part {
  col: FacetColumn;
  counts: Int32Array;
}

interface Acc {
  count: number;
  min: number;
  max: number;
  built: Part;
  fresh: Part;
}

const partOf = (col: FacetColumn): Part => ({ col, counts: new Int32Array(col.values.length) });

export class FacetCounter {
  private readonly keys: string[];
  private accs: Acc[] = [];

  constructor(keys: readonly string[]) {
    this.keys = [...new Set(keys)];
  }

  /**
   * The visitor of one ranking over `view` (`PageRequest.visit`): counts each match by its
   * ranking key (a build position, or the build's size plus a delta slot) from the columns.
   */
  over(view: FacetView): (key: number) => void {
    const N = view.index.docs.length;
    const built = view.index.columns();
    const fresh = view.delta.columns();
    const accs = (this.accs = this.keys.map((key) => ({ count: 0, min: Infinity, max: -Infinity, built: partOf(built.facet(key)), fresh: partOf(fresh.facet(key)) })));
    return (key: number): void => {
      const inBuild = key < N;
      const i = inBuild ? key : key - N;
      for (const a of accs) {
        const { col, counts } = inBuild ? a.built : a.fresh;
        if (col.present[i] === 0) continue;
        const from = col.start[i] as number;
        const end = col.start[i + 1] as number;
        const lo = col.min[i] as number;
        // Only a match with a value counts: an object, an empty list, or a list of objects and
        // nulls has the key (as `exists` tests it) but no string, boolean or number.
        if (from === end && Number.isNaN(lo)) continue;
        a.count += 1;
        for (let j = from; j < end; j++) counts[col.codes[j] as number] = (counts[col.codes[j] as number] as number) + 1;
        if (!Number.isNaN(lo)) {
          if (lo < a.min) a.min = lo;
          const hi = col.max[i] as number;
          if (hi > a.max) a.max = hi;
        }
      }
    };
  }

  result(): Record<string, FacetResult> {
    // Keyed by what the request named: an object without a prototype, so that a key such as
    // `__proto__` is a key of the answer like any other (on `{}` it would set the prototype).
    const out: Record<string, FacetResult> = Object.create(null);
    this.keys.forEach((key, k) => {
      // Counted in key order; none when no ranking was visited.
      const a = this.accs[k];
      const strings = new Map<string, number>();
      let trues = 0;
      let falses = 0;
      for (const { col, counts } of a ? [a.built, a.fresh] : []) {
        falses += counts[0] as number;
        trues += counts[1] as number;
        for (let c = 2; c < counts.length; c++) {
          const n = counts[c] as number;
          if (n === 0) continue;
          const v = col.values[c] as string;
          strings.set(v, (strings.get(v) ?? 0) + n);
        }
      }
      const values: { value: string | boolean; count: number }[] = [...strings].map(([value, count]) => ({ value, count }));
      if (trues) values.push({ value: true, count: trues });
      if (falses) values.push({ value: false, count: falses });
      values.sort((x, y) => y.count - x.count || (String(x.value) < String(y.value) ? -1 : String(x.value) > String(y.value) ? 1 : 0));
      out[key] = {
        count: a?.count ?? 0,
        values: values.slice(0, FACET_VALUES),
        values_truncated: values.length > FACET_VALUES,
        min: !a || a.min === Infinity ? null : a.min,
        max: !a || a.max === -Infinity ? null : a.max,
      };
    });
    return out;
  }
}

/** A facet counted disjunctively: over the matches of the search's filters without those on its own key (`filter`). */
export interface DisjunctiveFacet {
  key: string;
  filter: DocFilter;
}

/**
 * The facets of one search, in the order asked: most counted by the search's own ranking (its
 * visitor, `over`); a disjunctive facet whose key the filters name counted apart, by a ranking of
 * its own with that filter (`countApart`), as a multi-select facet list shows how many matches
 * each other value would add. A disjunctive key the filters do not name counts as any other.
 */
export class SearchFacets {
  private readonly own: FacetCounter;
  private readonly apart: readonly DisjunctiveFacet[];
  private readonly counted: Record<string, FacetResult> = Object.create(null);

  constructor(
    private readonly keys: readonly string[],
    disjunctive: readonly DisjunctiveFacet[],
  ) {
    const named = new Set(disjunctive.map((d) => d.key));
    this.apart = disjunctive;
    this.own = new FacetCounter(keys.filter((k) => !named.has(k)));
  }

  /** The visitor of the search's own ranking over `view`. */
  over(view: FacetView): (key: number) => void {
    return this.own.over(view);
  }

  /** Counts each disjunctive facet over the matches `rankWith` visits for its filter (a ranking each). */
  countApart(view: FacetView, rankWith: (filter: DocFilter, visit: (key: number) => void) => void): void {
    for (const d of this.apart) {
      const counter = new FacetCounter([d.key]);
      rankWith(d.filter, counter.over(view));
      this.counted[d.key] = counter.result()[d.key] as FacetResult;
    }
  }

  result(): Record<string, FacetResult> {
    const own = this.own.result();
    // Keyed by what the request named, without a prototype (as FacetCounter's).
    const out: Record<string, FacetResult> = Object.create(null);
    for (const key of new Set(this.keys)) out[key] = (this.counted[key] ?? own[key]) as FacetResult;
    return out;
  }
}
