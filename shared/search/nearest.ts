/** Nearest neighbours by cosine over int8 rows: the build's (through its IVF) and the delta's alike. */
import { TopK } from '../top-k.ts';

/**
 * Whether nearest neighbours among this many candidates are found with a coarse pass on a quarter
 * of the dimensions first (over 10,000: an IVF's probed lists, or a large delta); exact below.
 */
export const coarsePass = (candidates: number, k: number): boolean => candidates > 10_000 && candidates > k * 8;

/** The dimensions a coarse pass scores (`nearestOf`): the first quarter, at least 32. */
export const coarseDimsOf = (dims: number): number => Math.min(dims, Math.max(32, dims >> 2));

/**
 * The k candidates most similar to a query. `forEachCandidate` hands over every candidate key
 * (with a vector, accepted); `similarity(key, n)` scores one on its first n dimensions (all when
 * n is absent). When the candidates are many (`coarsePass`), they are scored on their first
 * quarter of dimensions (a random projection of its own, for the hashing embedding) and the best
 * 4k rescored exactly. `coarseScan`, when given, does the coarse pass instead: it pushes the same
 * candidates with their similarity on the first quarter (what `similarity(key, coarseDims)` gives)
 * into the TopK it is handed (it may skip those the TopK would not admit).
 */
export function nearestOf(
  candidates: number,
  dims: number,
  k: number,
  forEachCandidate: (visit: (key: number) => void) => void,
  similarity: (key: number, n?: number) => number,
  coarseScan?: (into: TopK) => void,
): TopK {
  const coarseDims = coarsePass(candidates, k) ? coarseDimsOf(dims) : dims;
  const coarse = new TopK(coarseDims === dims ? k : k * 4);
  if (coarseDims !== dims && coarseScan) coarseScan(coarse);
  else forEachCandidate((key) => coarse.push(key, similarity(key, coarseDims)));
  if (coarseDims === dims) return coarse;
  const top = new TopK(k);
  coarse.forEach((key) => top.push(key, similarity(key)));
  return top;
}
