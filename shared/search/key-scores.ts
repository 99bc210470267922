import { IntList } from './int-list.ts';

/**
 * Scores of some keys (small non-negative integers: a ranking's documents) in scratch memory
 * reused by every request: a typed array indexed by key, NaN where a key has none, and the keys
 * in the order they were first given a score. In place of a Map<number, number> on the ranking's
 * hot path, where the strongest few hundred keyword matches are scored twice per request
 * (measured: docs/benchmarks.md, 2026-11-26). `clear` leaves it empty for the next request.
 * Scores are finite (a NaN would read as no score).
 */
export class KeyScores {
  private score = new Float64Array(0);
  private readonly list = new IntList();

  /** Room for keys below `size`; call before the first `set` of a request. */
  reserve(size: number): void {
    if (this.score.length >= size) return;
    const grown = new Float64Array(Math.max(size, Math.ceil(this.score.length * 1.5))).fill(Number.NaN);
    for (const key of this.list.view()) grown[key] = this.score[key] as number;
    this.score = grown;
  }

  set(key: number, value: number): void {
    if (Number.isNaN(this.score[key])) this.list.push(key);
    this.score[key] = value;
  }

  /** The key's score, or undefined without one. */
  get(key: number): number | undefined {
    const v = this.score[key];
    return v === undefined || Number.isNaN(v) ? undefined : v;
  }

  /**
   * The key's score, or NaN without one: always a number, so a hot loop reading it allocates
   * nothing (a number-or-undefined answer boxes the number when the call is not inlined).
   */
  scoreOf(key: number): number {
    const v = this.score[key];
    return v === undefined ? Number.NaN : v;
  }

  has(key: number): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    return this.list.length;
  }

  /** The keys with a score, in the order they got it (a view: valid until the next new key or `clear`). */
  keys(): Int32Array {
    return this.list.view();
  }

  /** The highest score, at least `floor`. */
  max(floor: number): number {
    let max = floor;
    for (const key of this.list.view()) if ((this.score[key] as number) > max) max = this.score[key] as number;
    return max;
  }

  clear(): void {
    for (const key of this.list.view()) this.score[key] = Number.NaN;
    this.list.clear();
  }
}
