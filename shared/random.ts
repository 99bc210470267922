/** A seeded pseudo-random generator in [0, 1) (32-bit LCG): repeatable splits, samples and inits. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
