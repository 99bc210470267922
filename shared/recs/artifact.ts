import { packSections, unpackSections, type Typed } from '../sections.ts';
import type { Dataset } from './dataset.ts';
import { FactorModel, ItemItemModel, popularityModel, type History, type Model } from './models.ts';

/** A trained model as stored: algorithm and item ids in the header, the model's arrays as sections. */
interface Header {
  format: 'recsearch-model-v1';
  algorithm: string;
  items: number[];
  factors?: number;
  /** Present when the artifact carries the users' training histories (see UserHistories). */
  users?: string[];
  trainedBefore?: number;
  trainedTypes?: string[];
  eventsThrough?: number;
  /** Present when the artifact carries the event type weights it was trained with: [name, weight] pairs. */
  typeWeights?: [string, number][];
}

/**
 * Each user's interactions as training read them, so serving reads from the table only the
 * events that came after: a user's whole history counts, not just the latest events a request
 * can afford to read. The events of trained types as the model saw them, and up to
 * `eventsThrough` those of other types with their event type's weight, as serving weighs them.
 * Users sorted (binary search, no per-container map); CSR rows of item indexes (ascending, as
 * Dataset keeps them: serving looks items up in a row by binary search) and summed weights.
 */
export interface UserHistories {
  users: string[];
  rowStart: Uint32Array;
  items: Uint32Array;
  weights: Float32Array;
  /**
   * Every event created (ingest time, seconds) before this was read by training: serving adds
   * only the events at or after it. Events of the last minute before training are in both, which
   * counts them twice for a while; missing one would be worse.
   */
  trainedBefore: number;
  /** The event types training used: events of other types are in these histories only up to `eventsThrough`. */
  trainedTypes: string[];
  /**
   * Every event with an id up to this one was read by training and is in these histories, so
   * serving reads only the events after it (0: read the latest events, whatever their id).
   */
  eventsThrough: number;
}

/** What serving needs: the model, the item ids of its indexes, and popularity for fallbacks. */
export interface ModelArtifact {
  model: Model;
  items: number[];
  popularity: Float32Array;
  histories?: UserHistories;
  /**
   * The weight of each event type as this model was trained (a trained type's: its event type's
   * weight times the template's; any other type's: its event type's weight then): serving weighs
   * a user's latest events by these, so a weight change takes effect at the next run. Absent in
   * artifacts trained before they were stored.
   */
  typeWeights?: Map<string, number>;
}

/** The histories of a training data set, users sorted. */
export function historiesOf(ds: Dataset, trainedBefore: number, trainedTypes: string[], eventsThrough: number): UserHistories {
  const order = ds.users.map((_, u) => u).sort((a, b) => ((ds.users[a] as string) < (ds.users[b] as string) ? -1 : 1));
  const rowStart = new Uint32Array(order.length + 1);
  const items = new Uint32Array(ds.nnz);
  const weights = new Float32Array(ds.nnz);
  let k = 0;
  order.forEach((u, r) => {
    rowStart[r] = k;
    const row = ds.row(u);
    items.set(row.items, k);
    weights.set(row.weights, k);
    k += row.items.length;
  });
  rowStart[order.length] = k;
  return { users: order.map((u) => ds.users[u] as string), rowStart, items, weights, trainedBefore, trainedTypes, eventsThrough };
}

/** A user's training history (item indexes of the model, weights), if training saw the user. */
export function historyOf(h: UserHistories, user: string): History | undefined {
  let lo = 0;
  let hi = h.users.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const u = h.users[mid] as string;
    if (u === user) {
      const s = h.rowStart[mid] as number;
      const e = h.rowStart[mid + 1] as number;
      return { items: h.items.subarray(s, e), weights: h.weights.subarray(s, e) };
    }
    if (u < user) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

export function packModel(a: ModelArtifact): Uint8Array {
  const m = a.model;
  const arrays: [string, Typed][] = [['popularity', a.popularity]];
  let factors: number | undefined;
  if (m instanceof ItemItemModel) arrays.push(['off', m.off], ['nbr', m.nbr], ['w', m.w]);
  else if (m instanceof FactorModel) {
    arrays.push(['q', m.q], ['bias', m.bias]);
    factors = m.factors;
  }
  const h = a.histories;
  if (h) arrays.push(['user_rows', h.rowStart], ['user_items', h.items], ['user_weights', h.weights]);
  const header: Header = {
    format: 'recsearch-model-v1',
    algorithm: m.algorithm,
    items: a.items,
    ...(factors ? { factors } : {}),
    ...(h ? { users: h.users, trainedBefore: h.trainedBefore, trainedTypes: h.trainedTypes, eventsThrough: h.eventsThrough } : {}),
    ...(a.typeWeights ? { typeWeights: [...a.typeWeights] } : {}),
  };
  return packSections(header, arrays);
}

export function unpackModel(bytes: Uint8Array): ModelArtifact {
  const { header: h, get } = unpackSections<Header>(bytes);
  if (h.format !== 'recsearch-model-v1') throw new Error('Unknown model format');
  const popularity = get<Float32Array>('popularity');
  const n = h.items.length;
  let model: Model;
  if (h.algorithm === 'popularity') model = popularityModel(popularity);
  else if (h.factors) model = new FactorModel(h.algorithm, n, h.factors, get('q'), get('bias'));
  else model = new ItemItemModel(h.algorithm, n, get('off'), get('nbr'), get('w'));
  // Artifacts trained before histories were stored have none: serving reads the latest events only.
  const histories: UserHistories | undefined = h.users
    ? { users: h.users, rowStart: get('user_rows'), items: get('user_items'), weights: get('user_weights'), trainedBefore: h.trainedBefore ?? 0, trainedTypes: h.trainedTypes ?? [], eventsThrough: h.eventsThrough ?? 0 }
    : undefined;
  // Pairs, not an object: a type may be called `constructor`.
  return { model, items: h.items, popularity, ...(histories ? { histories } : {}), ...(h.typeWeights ? { typeWeights: new Map(h.typeWeights) } : {}) };
}
