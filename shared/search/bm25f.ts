/** BM25F scoring: the one formula the build and the delta are scored with. */
import { FIELD_NAMES, type Field } from './analyze.ts';
import { RANKING } from './constants.ts';
import type { IntList } from './int-list.ts';

/** Collection statistics BM25F scores with: a build's own, or a build's and its delta's together. */
export interface CollectionStats {
  /** Documents (active or not). */
  n: number;
  /** Average length of each field over them. */
  avgLen: readonly number[];
  df(term: string): number;
}

/** BM25's IDF (never negative). */
export const idfOf = (n: number, df: number): number => Math.log(1 + (n - df + 0.5) / (df + 0.5));

/** A posting list: documents (index positions or delta slots) and their 3 field term frequencies each. */
export interface Postings {
  docs: ArrayLike<number>;
  tfs: ArrayLike<number>;
  start: number;
  end: number;
}

/**
 * Adds `weightedIdf` × BM25F of one term to `target` for each document of a posting list (key =
 * `base` + its position), or keeps the larger of the two when `max` (an expansion competing with
 * its word). The one formula the build and the delta are scored with, so that an item scores the
 * same to the last bit in either. `live` (the delta's) skips replaced documents.
 */
export function scorePostings(
  p: Postings,
  lens: readonly ArrayLike<number>[],
  base: number,
  weightedIdf: number,
  stats: CollectionStats,
  target: Float64Array,
  touched: IntList,
  max: boolean,
  live?: ArrayLike<number>,
): void {
  const { k1, fields } = RANKING;
  const fb = FIELD_NAMES.map((f) => fields[f as Field]);
  const [B0, B1, B2] = fb.map((f) => f.boost) as [number, number, number];
  const [C0, C1, C2] = fb.map((f) => 1 - f.b) as [number, number, number];
  const [N0, N1, N2] = fb.map((f, k) => f.b / (stats.avgLen[k] as number)) as [number, number, number];
  const [l0, l1, l2] = lens as [ArrayLike<number>, ArrayLike<number>, ArrayLike<number>];
  const { docs, tfs } = p;
  for (let j = p.start; j < p.end; j++) {
    const i = docs[j] as number;
    if (live && !live[i]) continue;
    const t0 = tfs[j * 3] as number;
    const t1 = tfs[j * 3 + 1] as number;
    const t2 = tfs[j * 3 + 2] as number;
    let tf = 0;
    if (t0) tf += (B0 * t0) / (C0 + N0 * (l0[i] as number));
    if (t1) tf += (B1 * t1) / (C1 + N1 * (l1[i] as number));
    if (t2) tf += (B2 * t2) / (C2 + N2 * (l2[i] as number));
    const c = (weightedIdf * tf) / (k1 + tf);
    const key = base + i;
    const before = target[key] as number;
    if (before === 0) touched.push(key);
    target[key] = max ? Math.max(before, c) : before + c;
  }
}
