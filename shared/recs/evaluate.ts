import type { Dataset, Interaction } from './dataset.ts';
import type { Model } from './models.ts';

export interface Metrics {
  ndcg_at_10: number;
  precision_at_10: number;
  recall_at_10: number;
  map_at_10: number;
  coverage: number;
  users: number;
}

/** Top-k item indexes of a score vector, skipping `exclude`. */
export function topK(scores: Float32Array, k: number, exclude: ReadonlySet<number>): number[] {
  const out: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < scores.length; i++) {
    const v = scores[i] as number;
    if (exclude.has(i) || !(v > -Infinity)) continue;
    if (out.length === k && v <= (vals[k - 1] as number)) continue;
    let p = out.length;
    while (p > 0 && (vals[p - 1] as number) < v) p--;
    out.splice(p, 0, i);
    vals.splice(p, 0, v);
    if (out.length > k) {
      out.pop();
      vals.pop();
    }
  }
  return out;
}

/**
 * Binary-relevance metrics at 10 on held-out interactions: for every user with test items,
 * recommend 10 items with the training items removed. Coverage: distinct items recommended
 * over the catalog size.
 */
export function evaluate(model: Model, train: Dataset, test: Interaction[], k = 10): Metrics {
  const relevant = new Map<number, Set<number>>();
  for (const x of test) {
    const u = train.userIndex.get(x.user);
    const i = train.itemIndex.get(x.item);
    if (u === undefined || i === undefined) continue;
    let s = relevant.get(u);
    if (!s) relevant.set(u, (s = new Set()));
    s.add(i);
  }
  let ndcg = 0;
  let prec = 0;
  let rec = 0;
  let map = 0;
  const shown = new Set<number>();
  for (const [u, rel] of relevant) {
    const row = train.row(u);
    const seen = new Set<number>(row.items);
    const top = topK(model.score(row), k, seen);
    let dcg = 0;
    let hits = 0;
    let ap = 0;
    top.forEach((i, r) => {
      shown.add(i);
      if (rel.has(i)) {
        dcg += 1 / Math.log2(r + 2);
        hits += 1;
        ap += hits / (r + 1);
      }
    });
    let idcg = 0;
    for (let r = 0; r < Math.min(k, rel.size); r++) idcg += 1 / Math.log2(r + 2);
    ndcg += dcg / idcg;
    prec += hits / k;
    rec += hits / rel.size;
    map += ap / Math.min(k, rel.size);
  }
  const n = relevant.size || 1;
  return {
    ndcg_at_10: ndcg / n,
    precision_at_10: prec / n,
    recall_at_10: rec / n,
    map_at_10: map / n,
    coverage: shown.size / train.items.length,
    users: relevant.size,
  };
}
