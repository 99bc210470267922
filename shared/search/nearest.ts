/** Nearest neighbours by cosine over int8 rows: the build's (through its IVF) and the delta's alike. */
import { TopK } from '../top-k.ts';
import type { Similarities } from './int8-vectors.ts';

/**
 * Whether nearest neighbours among this many candidates are found with a coarse pass on a quarter
 * of the dimensions first (over 10,000: an IVF's probed lists, or a large delta); exact below.
 */
export const coarsePass = (candidates: number, k: number): boolean => candidates > 10_000 && candidates > k * 8;

/** The dimensions a coarse pass scores (`nearestOf`): the first quarter, at least 32. */
export const coarseDimsOf = (dims: number): number => Math.min(dims, Math.max(32, dims >> 2));

/**
 * The k candidates most similar to a query. `firstPass(n, top)` pushes every candidate key (with
 * a vector, accepted) into `top` with its similarity on its first n dimensions (it may skip those
 * `top` would not admit); `similarities` scores keys on all of them. When the candidates are
 * many (`coarsePass`), the first pass scores their first quarter of dimensions (a random
 * projection of its own, for the hashing embedding) and the best 4k are rescored exactly.
 */
export function nearestOf(candidates: number, dims: number, k: number, firstPass: (n: number, top: TopK) => void, similarities: Similarities): TopK {
  const coarseDims = coarsePass(candidates, k) ? coarseDimsOf(dims) : dims;
  const coarse = new TopK(coarseDims === dims ? k : k * 4);
  firstPass(coarseDims, coarse);
  if (coarseDims === dims) return coarse;
  const top = new TopK(k);
  const keys = coarse.keyView();
  const exact = new Float64Array(keys.length);
  similarities(keys, keys.length, exact);
  for (let j = 0; j < keys.length; j++) top.push(keys[j] as number, exact[j] as number);
  return top;
}
