import type { ColumnCache, FacetColumn } from './columns.ts';

/**
 * Facets of a search: for each requested metadata key, over every match of the query and
 * filters (the same matches as `total`, not only the page), the count of each string (or
 * boolean) value, and for numbers their min and max. A list value counts each of its distinct
 * elements. Fed by ranking's visitor (`PageRequest.visit`) with each match's key, counted from the
 * key's column (columns.ts): a few array reads per match and key, on top of the matches ranking
 * already goes through.
 */
export interface FacetResult {
  /** Matches that have the key (any value). */
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
        a.count += 1;
        const end = col.start[i + 1] as number;
        for (let j = col.start[i] as number; j < end; j++) counts[col.codes[j] as number] = (counts[col.codes[j] as number] as number) + 1;
        const lo = col.min[i] as number;
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
