/**
 * Counts keyed by a name a client chose, such as an event type (`^[a-z][a-z0-9_]{0,63}$`, which
 * `constructor` matches): read and added as the object's own properties, never the ones an object
 * inherits (`counts.constructor` is Object, and `Object + 1` a string).
 */
export const countOf = (counts: Readonly<Record<string, number>>, key: string): number => (Object.hasOwn(counts, key) ? (counts[key] as number) : 0);

/** Adds `n` to the count of `key` in `counts` (see countOf). */
export function addCount(counts: Record<string, number>, key: string, n: number): void {
  counts[key] = countOf(counts, key) + n;
}
