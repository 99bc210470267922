import type { Json } from '../domain/types.ts';
import type { SearchDoc } from './engine.ts';

/**
 * Facets of a search: for each requested metadata key, over every match of the query and
 * filters (the same matches as `total`, not only the page), the count of each string (or
 * boolean) value, and for numbers their min and max. A list value counts each of its distinct
 * elements. Fed by ranking's visitor (`PageRequest.visit`), so the cost is a property read and a
 * map update per match and key, on top of the matches ranking already goes through.
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

interface Acc {
  key: string;
  count: number;
  strings: Map<string, number>;
  trues: number;
  falses: number;
  min: number;
  max: number;
}

export class FacetCounter {
  private readonly accs: Acc[];

  constructor(keys: readonly string[]) {
    this.accs = [...new Set(keys)].map((key) => ({ key, count: 0, strings: new Map(), trues: 0, falses: 0, min: Infinity, max: -Infinity }));
  }

  /** Counts one match. */
  readonly visit = (doc: SearchDoc): void => {
    const m = doc.metadata;
    for (const a of this.accs) {
      if (!Object.hasOwn(m, a.key)) continue;
      const v = m[a.key] as Json;
      if (v === null || v === undefined) continue;
      a.count += 1;
      if (Array.isArray(v)) {
        // Each distinct element once per match.
        const seen = new Set<Json>();
        for (const x of v) {
          if (seen.has(x)) continue;
          seen.add(x);
          countValue(a, x);
        }
      } else countValue(a, v);
    }
  };

  result(): Record<string, FacetResult> {
    const out: Record<string, FacetResult> = {};
    for (const a of this.accs) {
      const values: { value: string | boolean; count: number }[] = [...a.strings].map(([value, count]) => ({ value, count }));
      if (a.trues) values.push({ value: true, count: a.trues });
      if (a.falses) values.push({ value: false, count: a.falses });
      values.sort((x, y) => y.count - x.count || (String(x.value) < String(y.value) ? -1 : String(x.value) > String(y.value) ? 1 : 0));
      out[a.key] = {
        count: a.count,
        values: values.slice(0, FACET_VALUES),
        values_truncated: values.length > FACET_VALUES,
        min: a.min === Infinity ? null : a.min,
        max: a.max === -Infinity ? null : a.max,
      };
    }
    return out;
  }
}

function countValue(a: Acc, v: Json): void {
  if (typeof v === 'string') a.strings.set(v, (a.strings.get(v) ?? 0) + 1);
  else if (typeof v === 'number') {
    if (v < a.min) a.min = v;
    if (v > a.max) a.max = v;
  } else if (v === true) a.trues += 1;
  else if (v === false) a.falses += 1;
}
