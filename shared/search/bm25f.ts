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
  /**
   * What names the list among those scored with the same norms, for keeping its postings'
   * saturated frequencies with them (`FieldNorms.saturated`): a build's list its `start` (its
   * arrays never change), a delta's list its entry (it only grows, and a new posting comes with a
   * new slot, which makes new norms). Absent: not kept.
   */
  keepAs?: number | object;
}

/**
 * Per document, each field's weight of one occurrence of a term: boost / (1 − b + b × len /
 * avgLen). A term's BM25F pseudo-frequency in a document is the sum over fields of its
 * frequency times this. Depends on the collection's average lengths only, so it is computed once
 * per statistics (`FieldNorms.of`) and shared by every request until they change, instead of
 * three divisions per posting.
 */
export class FieldNorms {
  /**
   * Per posting list (by its `keepAs`), each posting's saturated frequency under these norms. A
   * build's norms are its own (`SearchIndex.norms`), so starts name the lists of one build; a
   * delta's are its own too (`PreparedDelta.norms`).
   */
  private readonly kept = new Map<number | object, Float32Array>();

  private constructor(
    readonly avgLen: readonly number[],
    readonly count: number,
    readonly w: readonly [Float64Array, Float64Array, Float64Array],
  ) {}

  /**
   * Each posting's saturated BM25F frequency of a list under these norms, once a query has
   * scored the list (`scorePostings` fills it on the list's first use), kept while the statistics
   * do not change (a new `FieldNorms` starts empty): a broad query's common words are then one
   * read and one multiply a posting instead of three norm reads and a division (0.86 x the
   * ranking time of queries of 3 words or more on the 100K catalog; docs/benchmarks.md).
   * Bound: 4 bytes a posting of the build or the delta.
   */
  saturated(p: Postings): Float32Array | undefined {
    if (p.keepAs === undefined) return undefined;
    const kept = this.kept.get(p.keepAs);
    return kept && kept.length === p.end - p.start ? kept : undefined;
  }

  /** Room for a list's saturated frequencies, kept from now on (`saturated`); undefined for a list that is not kept. */
  keep(p: Postings): Float32Array | undefined {
    if (p.keepAs === undefined) return undefined;
    const out = new Float32Array(p.end - p.start);
    this.kept.set(p.keepAs, out);
    return out;
  }

  /**
   * The norms of the first `count` documents of `lens` under `avgLen`: `previous` when it was
   * made for the same (the caller keeps it while its lengths do not change).
   */
  static of(lens: readonly ArrayLike<number>[], count: number, avgLen: readonly number[], previous?: FieldNorms): FieldNorms {
    if (previous && previous.count === count && previous.avgLen.every((a, k) => a === avgLen[k])) return previous;
    const { fields } = RANKING;
    const w = FIELD_NAMES.map((f, k) => {
      const { boost, b } = fields[f as Field];
      const C = 1 - b;
      const Nk = b / (avgLen[k] as number);
      const l = lens[k] as ArrayLike<number>;
      const out = new Float64Array(count);
      for (let i = 0; i < count; i++) out[i] = boost / (C + Nk * (l[i] as number));
      return out;
    }) as [Float64Array, Float64Array, Float64Array];
    return new FieldNorms([...avgLen], count, w);
  }
}

/**
 * A posting's saturated BM25F frequency, tf / (k1 + tf) with tf the sum over fields of its term
 * frequency times the field's norm, rounded to a float32 (as `FieldNorms.saturated` keeps it).
 */
function saturation(p: Postings, j: number, norms: FieldNorms): number {
  const [w0, w1, w2] = norms.w;
  const { docs, tfs } = p;
  const i = docs[j] as number;
  // Branch-free: a field without the term adds exactly 0.
  const tf = (tfs[j * 3] as number) * (w0[i] as number) + (tfs[j * 3 + 1] as number) * (w1[i] as number) + (tfs[j * 3 + 2] as number) * (w2[i] as number);
  return Math.fround(tf / (RANKING.k1 + tf));
}

/**
 * Adds `weightedIdf` × BM25F of one term to `target` for each document of a posting list (key =
 * `base` + its position), or keeps the larger of the two when `max` (an expansion competing with
 * its word). The one formula the build and the delta are scored with (norms made by
 * `FieldNorms.of` from the same statistics, the saturated frequency rounded alike whether kept or
 * not), so that an item scores the same to the last bit in either. `live` (the delta's) skips
 * replaced documents.
 */
export function scorePostings(p: Postings, norms: FieldNorms, base: number, weightedIdf: number, target: Float32Array, touched: IntList, max: boolean, live?: ArrayLike<number>): void {
  const { docs, start } = p;
  const kept = norms.saturated(p);
  // A list scored for the first time under these norms: its values are kept as computed (those
  // of a delta's replaced documents stay 0, skipped here as they are: a slot never comes back).
  const keep = kept ? undefined : norms.keep(p);
  if (kept && !live) {
    // The common case, a build's list scored before under these norms: the same values without
    // the general loop's per-posting branches (0.88-0.89 x the ranking time of the 100K catalog's
    // build by band, docs/benchmarks.md).
    // New keys go straight into the list's buffer (room for every posting made first).
    const out = touched.room(p.end - start);
    let n = touched.length;
    if (max) {
      for (let j = start; j < p.end; j++) {
        const key = base + (docs[j] as number);
        const before = target[key] as number;
        out[n] = key;
        n += ((before === 0) as unknown as number) | 0;
        target[key] = Math.max(before, weightedIdf * (kept[j - start] as number));
      }
    } else {
      for (let j = start; j < p.end; j++) {
        const key = base + (docs[j] as number);
        const before = target[key] as number;
        out[n] = key;
        n += ((before === 0) as unknown as number) | 0;
        target[key] = before + weightedIdf * (kept[j - start] as number);
      }
    }
    touched.length = n;
    return;
  }
  for (let j = start; j < p.end; j++) {
    const i = docs[j] as number;
    if (live && !live[i]) continue;
    let sat: number;
    if (kept) sat = kept[j - start] as number;
    else {
      sat = saturation(p, j, norms);
      if (keep) keep[j - start] = sat;
    }
    const c = weightedIdf * sat;
    const key = base + i;
    const before = target[key] as number;
    if (before === 0) touched.push(key);
    target[key] = max ? Math.max(before, c) : before + c;
  }
}

/**
 * The position of document (or delta slot) `i` in a posting list, or -1. A list holds its
 * documents in ascending order: a build's in index order, a delta's in slot order (slots only
 * grow, and are renumbered in order).
 */
export function postingOf(p: Postings, i: number): number {
  let lo = p.start;
  let hi = p.end;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((p.docs[mid] as number) < i) lo = mid + 1;
    else hi = mid;
  }
  return lo < p.end && p.docs[lo] === i ? lo : -1;
}

/** `weightedIdf` × the saturated BM25F frequency of posting `j`: what `scorePostings` adds for it, to the bit. */
export function postingScore(p: Postings, j: number, norms: FieldNorms, weightedIdf: number): number {
  const kept = norms.saturated(p);
  return weightedIdf * (kept ? (kept[j - p.start] as number) : saturation(p, j, norms));
}
