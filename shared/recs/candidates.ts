/** The candidates of a recommendation and their scores: the model's best, content similarity, popularity; the best eligible of them. */
import type { Catalog } from '../domain/catalog.ts';
import { normalize } from '../search/embedding.ts';
import { TopK } from '../top-k.ts';
import type { RequestHistory } from './history.ts';
import { ScoreTable } from './score-table.ts';
import { scoreSimilar } from './similar.ts';
import type { ServedModel } from './served-model.ts';

/**
 * Cache: the container's one score table, reused by every request (a ranking fills and reads
 * it without awaiting). Bound: grows to the most candidates of one request (16 bytes per slot,
 * at most twice that many slots), as requests have at most 500 + history model candidates plus
 * 200 + changed items by content; a context's deepest pool (serve.ts REFILLS) 3,200 + history
 * and 3,200 (about 200 KB).
 */
const table = new ScoreTable();

/**
 * Cache: the container's working arrays for a model's scores (and, for similar items for a user,
 * the anchor's alone), grown to the largest model and reused (read without awaiting). Bound: 8
 * bytes per item of the largest model served.
 */
const scratch = { scores: new Float32Array(0), anchor: new Float32Array(0) };
function scratchScores(n: number, key: keyof typeof scratch = 'scores'): Float32Array {
  if (scratch[key].length < n) scratch[key] = new Float32Array(n);
  return scratch[key].subarray(0, n);
}

/**
 * The indexes of the `k` highest positive scores, in no particular order (ties at the cut go to
 * lower indexes): the one top-k over the positive scores, since most scores are usually zero.
 * The answer is a view, valid until the selection is used again.
 */
export function topPositive(s: Float32Array, k: number): Float64Array {
  const top = new TopK(k);
  for (let i = 0; i < s.length; i++) if ((s[i] as number) > 0) top.push(i, s[i] as number);
  return top.keyView();
}

/**
 * Personal candidates, scored into the container's table (valid until the next request's
 * `clear`): the model's 500 best items besides the history's own (ranked by the model alone, as
 * training validated and evaluated it: content added to their scores served a different, weaker
 * ranking, issue 20), then content similarity of the history's taste vector for items the model
 * never saw (new since training; on the same 0-1 scale as the model's scores) and, below every
 * candidate of the model (or, when it has none, a little), items it knows. With `depth` (a context's
 * larger pools, when its rules and controls left out too many), as many of each where that is more.
 */
export function personalCandidates(catalog: Catalog, model: ServedModel | undefined, h: RequestHistory, includeSeen: boolean, depth = 0): ScoreTable {
  table.clear();
  const fromModel = new Set<number>();
  // The lowest of the model's candidates' scores.
  let floor = 0;
  if (model && h.modelItems.length) {
    const scores = scratchScores(model.model.itemCount);
    const all = { items: h.modelItems, weights: h.modelWeights, ...(h.modelRow !== undefined ? { row: h.modelRow } : {}) };
    // Similar items for a user: in each part of the model the user's history tilts the anchor's
    // neighbours, at most by its share of the anchor's best score there (similar.ts).
    const similar = h.anchored && h.modelItems.length > 1;
    const anchorScores = similar ? scratchScores(model.model.itemCount, 'anchor') : undefined;
    const s = similar ? scoreSimilar(model.model, { items: h.modelItems.slice(0, 1), weights: h.modelWeights.slice(0, 1) }, all, scores, anchorScores) : model.model.score(all, scores);
    let max = 1e-9;
    for (let i = 0; i < s.length; i++) if ((s[i] as number) > max) max = s[i] as number;
    // However long the history, as many candidates of the model remain (seen items are left out
    // later, unless asked for).
    for (const i of topPositive(s, Math.max(500, depth) + (includeSeen ? 0 : h.modelItems.length))) {
      // Similar items for a user: an item only the user's history brought (the anchor alone does
      // not score it, in any part) is no neighbour of the anchor, and no candidate of the model:
      // scored at most 0.3 of the anchor's best, such items set the floor the anchor's neighbours
      // by content go below and, an anchor with few neighbours, were the answer (the user's own
      // list). Like any item the model does not rank, it may come by content.
      if (anchorScores && !((anchorScores[i] as number) > 0)) continue;
      const id = model.items[i] as number;
      const v = (s[i] as number) / max;
      table.add(id, v);
      fromModel.add(id);
      floor = floor === 0 ? v : Math.min(floor, v);
    }
  }
  const taste = new Float32Array(catalog.dims);
  // Similar items for a user, the anchor without a vector (not embedded yet): the taste would be
  // the user's history alone, its neighbours the user's own taste, not the anchor's: none.
  const anchorUnembedded = h.anchored && h.docs.length > 1 && !catalog.addVectors(h.docs.slice(0, 1), h.weights.slice(0, 1), new Float32Array(catalog.dims));
  if (!anchorUnembedded && catalog.addVectors(h.docs, h.weights, taste)) {
    normalize(taste);
    const contentWeight = (id: number) => (!model?.itemIndex.has(id) ? 1 : fromModel.has(id) ? 0 : floor > 0 ? 0.5 * floor : 0.15);
    catalog.nearest(taste, Math.max(200, depth), (id, s) => {
      if (s > 0 && contentWeight(id) > 0) table.add(id, contentWeight(id) * s);
    });
  }
  return table;
}

/** The `limit` best eligible (id, score) pairs: score descending, then id ascending. */
export function bestEligible(scores: { forEach(fn: (score: number, id: number) => void): void }, limit: number, eligible: (id: number) => boolean): [number, number][] {
  const top = new TopK(limit);
  // Eligibility (a catalog read) only for pairs that would enter.
  scores.forEach((score, id) => {
    if (top.admits(score, id) && eligible(id)) top.push(id, score);
  });
  const out: [number, number][] = [];
  top.forEachBest((id, score) => out.push([id, score]));
  return out;
}

/** A score below every one of `ranked`, where the items filling it up start (they go down from it). */
function belowAll(ranked: [number, number][]): number {
  const floor = ranked.reduce((m, [, s]) => Math.min(m, s), 1);
  return floor > 0 ? floor * 1e-3 : floor - 1;
}

/**
 * The newest eligible items after `ranked` (not already in it) to fill it up to `want`, each
 * scored below every item before it: popularity's last resort, when the events are too few.
 */
export function withNewestFill(ranked: [number, number][], catalog: Pick<Catalog, 'newest'>, want: number, eligible: (id: number) => boolean): [number, number][] {
  const have = new Set(ranked.map(([id]) => id));
  // Below the lowest score so far, descending, newest first.
  const base = belowAll(ranked);
  const fill = catalog.newest(want - ranked.length, (id) => !have.has(id) && eligible(id));
  return [...ranked, ...fill.map((id, k): [number, number] => [id, base - k * Math.abs(base) * 1e-3])];
}

/**
 * Popular items after `ranked` to fill it up to `want` (eligible, not already in it), most
 * popular first, each scored below every item before it (a fill outranking a weak personal
 * candidate would break the order scores give).
 */
export function withPopularFill(ranked: [number, number][], popular: ReadonlyMap<number, number>, want: number, eligible: (id: number) => boolean): [number, number][] {
  const have = new Set(ranked.map(([id]) => id));
  const fill = [...popular].filter(([id]) => !have.has(id) && eligible(id)).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  // Below the lowest score so far: popularity (0-1) spreads the fill over the next half of its scale.
  const base = belowAll(ranked);
  return [...ranked, ...fill.slice(0, want - ranked.length).map(([id, s]): [number, number] => [id, base - (1 - Math.min(1, Math.max(0, s))) * Math.abs(base) * 0.5])];
}
