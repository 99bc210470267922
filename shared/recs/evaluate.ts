import { seededRandom } from '../random.ts';
import { topIndexes } from '../top-k.ts';
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

/**
 * Top-k item indexes of a score vector, skipping `exclude` (and NaN / -Infinity): score
 * descending, ties by index ascending (the one top-k, shared/top-k.ts).
 */
export function topK(scores: Float32Array, k: number, exclude: ReadonlySet<number>): number[] {
  return topIndexes(scores, k, exclude.size ? (i) => !exclude.has(i) : undefined);
}

/**
 * Binary-relevance metrics at 10 on held-out interactions: for every user with test items (or a
 * seeded sample of `maxUsers` of them, see `sampleUsers`), recommend 10 items with the training
 * items removed. Coverage: distinct items recommended over the catalog size.
 */
export function evaluate(model: Model, train: Dataset, test: Interaction[], k = 10, maxUsers = Infinity): Metrics {
  const relevant = sampleUsers(relevantItems(train, test), maxUsers);
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

/** The users of held-out interactions with their relevant items (indexes of `ds`; users and items `ds` lacks left out). */
export function relevantItems(ds: Dataset, held: Interaction[]): Map<number, Set<number>> {
  const rel = new Map<number, Set<number>>();
  for (const x of held) {
    const u = ds.userIndex.get(x.user);
    const i = ds.itemIndex.get(x.item);
    if (u === undefined || i === undefined) continue;
    let s = rel.get(u);
    if (!s) rel.set(u, (s = new Set()));
    s.add(i);
  }
  return rel;
}

/**
 * At most `max` of the users of `rel` (all of them, in their order, when there are no more): a
 * seeded sample, in the order of `rel`. Scoring a user costs O(items × factors) with iALS, so at
 * 50,000 items and as many users an evaluation or validation over every user would take longer
 * than the training; a few thousand users measure nDCG@10 to about ±0.005.
 */
export function sampleUsers<T>(rel: Map<number, T>, max: number, seed = 99): Map<number, T> {
  if (rel.size <= max) return rel;
  const keys = [...rel.keys()];
  const rand = seededRandom(seed);
  for (let i = 0; i < max; i++) {
    const j = i + Math.floor(rand() * (keys.length - i));
    [keys[i], keys[j]] = [keys[j] as number, keys[i] as number];
  }
  const kept = new Set(keys.slice(0, max));
  return new Map([...rel].filter(([u]) => kept.has(u)));
}
