/** A recommendation request's history: the anchor item and the user's interactions, as the model and the taste vector read them. */
import type { Catalog } from '../domain/catalog.ts';
import type { ItemWithVector, RecentEvent } from '../domain/types.ts';
import { normalize } from '../search/embedding.ts';
import { historyOf, unreadOf } from './artifact.ts';
import type { History } from './models.ts';
import type { ServedModel } from './served-model.ts';
import { catalogItemId } from '../domain/item-ids.ts';

/**
 * The history as parallel lists (model indexes for the model, items for the taste vector), not
 * merged by item: both are sums, so an item listed twice counts the same, and a request builds
 * no map of the user's whole history.
 */
export interface RequestHistory {
  modelItems: number[];
  modelWeights: number[];
  /** The artifact's user row the model's items and weights are, exactly (nothing added or left out): see History.row. */
  modelRow?: number;
  docs: ItemWithVector[];
  weights: number[];
  /**
   * A similar-items request's: `docs[0]` is the anchor item at weight 1 and so is `modelItems[0]`
   * when `modelItems` has any (the anchor is then known to the model); the rest is the user's history.
   */
  anchored: boolean;
  /** Whether the user interacted with the item: the trained history or the latest events. */
  isSeen(id: number): boolean;
}

export interface HistoryInput {
  catalog: Catalog;
  model: ServedModel | undefined;
  /** The item of a similar-items request. */
  anchorId: number | undefined;
  userId: string | undefined;
  /** The user's events the model's artifact does not hold, newest first. */
  recent: readonly RecentEvent[];
  /** More such events, whose items are seen (not part of the taste). */
  alsoSeen?: readonly RecentEvent[];
  /** The user's history in the artifact is left out (erased after the model was trained). */
  historyErased: boolean;
  /** The weight of an event type (the model's as trained, else the current one). */
  weightOf(type: string): number;
}

/** With an anchor, the share of its weight the user's whole history weighs at most. */
const USER_SHARE = 0.3;
/**
 * The model's items that stand in for the user's latest events on items it never saw (created
 * since its training): the nearest by content it knows, this many, among this many nearest of the
 * catalog. A count of stand-ins, not fitted: no benchmark protocol has such events (every test
 * item was known at training), so no figure of bench:recs depends on it.
 */
const STAND_INS = 5;
const STAND_IN_SEARCH = 50;

/**
 * The anchor item and the user's interactions, weighted by event type (and, for the latest
 * events, recency): those training saw, from the artifact, plus the latest events it did not
 * see. Items no longer in the catalog are left out.
 */
export function requestHistory(x: HistoryInput): RequestHistory {
  const { catalog, model, anchorId } = x;
  const h: RequestHistory = { modelItems: [], modelWeights: [], docs: [], weights: [], anchored: false, isSeen: () => false };
  /** Adds the item (when still in the catalog) to the history; answers its current version. */
  const include = (id: number, w: number, modelIndex: number | undefined): ItemWithVector | undefined => {
    const d = catalog.get(id);
    if (!d) return undefined;
    h.docs.push(d);
    h.weights.push(w);
    if (modelIndex !== undefined) h.modelItems.push(modelIndex), h.modelWeights.push(w);
    return d;
  };
  if (anchorId !== undefined) include(anchorId, 1, model?.itemIndex.get(anchorId));
  h.anchored = h.docs.length > 0;
  // The user's entries start here: with an anchor they are scaled down together below.
  const userDocs = h.docs.length;
  const userModelItems = h.modelItems.length;
  const trainedOn = model?.histories;
  const trained = trainedOn && x.userId !== undefined && !x.historyErased ? historyOf(trainedOn, x.userId) : undefined;
  if (model && trained) for (let k = 0; k < trained.items.length; k++) include(model.items[trained.items[k] as number] as number, trained.weights[k] as number, trained.items[k]);
  const fromTrained = h.modelItems.length;
  // Everything the user interacted with counts as seen: the trained history (by model index, its
  // rows ascending), the events on items training did not read and the latest events.
  const recentSeen = new Set<number>();
  const trainedTypes = new Set(trainedOn?.trainedTypes);
  // The latest events on items the model never saw: content stands in for them in the model (below).
  const unseenDocs: ItemWithVector[] = [];
  const unseenWeights: number[] = [];
  // The user's events up to the artifact's `eventsThrough` on items its training did not read
  // (not read from the table: UnreadItems): seen, and in the taste as a latest event on an item
  // the model never saw is (until 2026-12-06 they were in neither).
  const unread = trainedOn && x.userId !== undefined && !x.historyErased ? unreadOf(trainedOn, x.userId) : undefined;
  unread?.items.forEach((id, k) => {
    const w = unread.weights[k] as number;
    recentSeen.add(id);
    const modelIndex = model?.itemIndex.get(id);
    const d = include(id, w, modelIndex);
    if (model && modelIndex === undefined && d && catalog.hasVector(d)) unseenDocs.push(d), unseenWeights.push(w);
  });
  x.recent.forEach((e, k) => {
    const id = catalogItemId(e.item_id);
    if (id === undefined) return;
    recentSeen.add(id);
    // In the trained history already (unless that is not read: the user's erasure came after), when
    // the model knows its item: training leaves out events on items it did not read (created just
    // before it read the catalog), which until 2026-12-05 were dropped here too.
    if (trainedOn && !x.historyErased && e.created < trainedOn.trainedBefore && trainedTypes.has(e.type) && model?.itemIndex.has(id)) return;
    const w = x.weightOf(e.type) / (1 + k / 25);
    const modelIndex = model?.itemIndex.get(id);
    const d = include(id, w, modelIndex);
    // (An item not embedded yet has no neighbours by content: nothing stands in for it. Asked of
    // the catalog, which keeps a build's vectors as rows, not on its documents.)
    if (model && modelIndex === undefined && d && catalog.hasVector(d)) unseenDocs.push(d), unseenWeights.push(w);
  });
  // An event on an item the model never saw changed nothing the model scores, so for a user it
  // knows the next recommendations were its own as before (only items new since training moved,
  // by content). The model's items nearest by content to those items stand in for them, with
  // their weight shared by cosine: the model then weighs the event as it weighs one on an item it
  // knows, on its own scale. The stand-ins are not seen (they may be recommended).
  if (model && unseenDocs.length) standIns(catalog, model, unseenDocs, unseenWeights, (i, w) => (h.modelItems.push(i), h.modelWeights.push(w)));
  for (const e of x.alsoSeen ?? []) {
    const id = catalogItemId(e.item_id);
    if (id !== undefined) recentSeen.add(id);
  }
  // Similar items for a user (an anchor and a user): the user's history tilts the anchor's
  // neighbours, never outweighs them. Its weights together are at most USER_SHARE of the anchor's
  // (each event at most that share), however long the history: weighed per event, a user's
  // whole history (tens of events, purchases at 10) buried the anchor, and the answer was the
  // user's own recommendations, each "similar to item <anchor>". That bounds the weights; the
  // scores of each part of the model are bounded alike where it is scored (similar.ts).
  if (anchorId !== undefined) {
    let sum = 0;
    for (let i = userDocs; i < h.weights.length; i++) sum += h.weights[i] as number;
    const scale = USER_SHARE / Math.max(1, sum);
    for (let i = userDocs; i < h.weights.length; i++) h.weights[i] = (h.weights[i] as number) * scale;
    for (let i = userModelItems; i < h.modelWeights.length; i++) h.modelWeights[i] = (h.modelWeights[i] as number) * scale;
    // An anchor the model never saw (created after training) has no neighbours there: the
    // model would score the user's history alone, its best scaled to 1 however little it
    // weighs, and answer the user's own recommendations. Its neighbours are then content's, the
    // user's history tilting the taste vector only.
    if (userModelItems === 0) (h.modelItems.length = 0), (h.modelWeights.length = 0);
  }
  // Exactly the trained row: no anchor, every item of it still in the catalog, no latest event added.
  if (trained?.row !== undefined && anchorId === undefined && fromTrained === trained.items.length && h.docs.length === fromTrained) h.modelRow = trained.row;
  h.isSeen = (id: number) => {
    if (recentSeen.has(id)) return true;
    const i = trained ? model?.itemIndex.get(id) : undefined;
    return i !== undefined && sortedHas((trained as History).items, i);
  };
  return h;
}

/**
 * The model's STAND_INS items nearest by content to the weighted mean of `docs` (items it never
 * saw), each with the docs' total weight times its share of their cosines; none when the docs
 * have no vectors or nothing the model knows is near.
 */
function standIns(catalog: Catalog, model: ServedModel, docs: readonly ItemWithVector[], weights: readonly number[], add: (modelIndex: number, weight: number) => void): void {
  const mean = new Float32Array(catalog.dims);
  if (!catalog.addVectors(docs, weights, mean)) return;
  normalize(mean);
  const found: [number, number][] = [];
  catalog.nearest(mean, STAND_IN_SEARCH, (id, cosine) => {
    const i = model.itemIndex.get(id);
    if (i !== undefined && cosine > 0 && found.length < STAND_INS) found.push([i, cosine]);
  });
  let cosines = 0;
  for (const [, c] of found) cosines += c;
  let total = 0;
  for (const w of weights) total += w;
  for (const [i, c] of found) add(i, (total * c) / cosines);
}

/** Whether ascending `xs` holds `x` (binary search). */
function sortedHas(xs: ArrayLike<number>, x: number): boolean {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = xs[mid] as number;
    if (v === x) return true;
    if (v < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
