/** Binary-relevance ranking metrics at a cutoff. */
export function ndcgAt(ranked: readonly (number | string)[], relevant: ReadonlySet<number | string>, k = 10): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let idcg = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) idcg += 1 / Math.log2(i + 2);
  return idcg === 0 ? 0 : dcg / idcg;
}

export function precisionAt(ranked: readonly (number | string)[], relevant: ReadonlySet<number | string>, k = 10): number {
  return ranked.slice(0, k).filter((id) => relevant.has(id)).length / k;
}

export function recallAt(ranked: readonly (number | string)[], relevant: ReadonlySet<number | string>, k = 10): number {
  return relevant.size === 0 ? 0 : ranked.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size;
}

/** Average precision over the top k (MAP@k when averaged over users or queries). */
export function averagePrecisionAt(ranked: readonly (number | string)[], relevant: ReadonlySet<number | string>, k = 10): number {
  let hits = 0;
  let sum = 0;
  ranked.slice(0, k).forEach((id, i) => {
    if (relevant.has(id)) {
      hits += 1;
      sum += hits / (i + 1);
    }
  });
  return relevant.size === 0 ? 0 : sum / Math.min(k, relevant.size);
}

export const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
