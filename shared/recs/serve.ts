import type { BlobStore } from '../blob.ts';
import type { ConsoleStore } from '../data/console.ts';
import { pickEndpoint, type Endpoint, type EventType, type ModelVersion } from '../domain/console.ts';
import { freshReads } from '../fresh-read.ts';
import { itemResource } from '../domain/present.ts';
import type { EventStore, RecentEvent } from '../domain/types.ts';
import { ItemNotFound, NotFoundError, ParameterMissing } from '../errors.ts';
import type { RecommendationsQuery } from '../schemas/recs.ts';
import { addDocVectors, type SearchDoc, type SearchIndex } from '../search/engine.ts';
import { cosine, normalize } from '../search/embedding.ts';
import { kthLargest, type PreparedDelta } from '../search/rank.ts';
import { historyOf, unpackModel, type ModelArtifact } from './artifact.ts';
import type { History } from './models.ts';
import { topK } from './evaluate.ts';
import { trendingScores } from './trending.ts';
import { similarityIn } from '../search/vectors.ts';
import { planAndRecord, type ExposureStore } from '../control/exposures.ts';
import { presentExplain, runPipeline, type Candidate, type Explanation } from '../control/pipeline.ts';
import { afterFromPlan, type ControlDeps } from '../control/serving.ts';
import { nowSeconds } from '../domain/items.ts';
import { artifactPredatesErasure, erasedUntil } from '../domain/erasure.ts';

/** With a context, the candidates its rules and rerank controls choose from (before `limit`). */
const CONTEXT_POOL = 200;

export interface RecsDeps {
  console: ConsoleStore;
  /** The control plane (contexts) and experiment counting: needed only by requests that name a context. */
  control?: ControlDeps;
  exposures?: ExposureStore;
  events: EventStore;
  blobs: BlobStore;
  /** The tenant's live catalog (search index + fresh changes): existence, activity, vectors. */
  catalog: (tenant: string) => Promise<{ index: SearchIndex; delta: PreparedDelta }>;
  /** How many of the tenant's latest events popularity without a model counts (default TRENDING_EVENTS, trending.ts). */
  trendingEvents?: number;
}

/**
 * How many of the user's latest events a request reads (one Query). The model's artifact holds
 * each user's history up to its `eventsThrough` id; a request reads only the events after it
 * (and all of a user's latest events without a model).
 */
const HISTORY_LIMIT = 100;

/**
 * Per tenant and endpoint, the event id the last request read after (its model's
 * `eventsThrough`): the next request's read starts there at once, beside the endpoint's config,
 * and is narrowed, or made again, once the request knows which model serves it.
 */
const readAfter = new Map<string, number>();

/** A loaded model with what every request derives from it, computed once. */
type ServedModel = ModelArtifact & { itemIndex: Map<number, number>; popular: Map<number, number> };
const models = new Map<string, ServedModel>();

/** The endpoint's artifact, loaded once per container and version. */
async function loadModel(deps: RecsDeps, tenant: string, version: number) {
  const key = `${tenant}/${version}`;
  let m = models.get(key);
  if (!m) {
    const rec = await deps.console.get<ModelVersion>(tenant, 'model', version);
    const bytes = rec ? await deps.blobs.get(rec.artifact) : undefined;
    if (!bytes) return undefined;
    const a = unpackModel(bytes);
    m = { ...a, itemIndex: new Map(a.items.map((id, i) => [id, i])), popular: modelPopularity(a) };
    if (models.size > 20) models.clear();
    models.set(key, m);
  }
  return m;
}

/**
 * The tenant's endpoints and event types (one read), read for every request (a promotion serves
 * at once) but shared by concurrent requests: each gets a read that began after it arrived.
 * The same read has the tenant's erased users (shared/domain/erasure.ts).
 */
const servingReads = new WeakMap<ConsoleStore, (tenant: string) => Promise<{ endpoints: Endpoint[]; eventTypes: EventType[]; erased: ReadonlyMap<string, number> }>>();
function servingConfig(c: ConsoleStore, tenant: string) {
  let read = servingReads.get(c);
  if (!read) {
    read = freshReads(async (t) => {
      const cfg = await c.servingConfig(t);
      return { endpoints: cfg.endpoint as Endpoint[], eventTypes: cfg.event_type as EventType[], erased: erasedUntil(cfg.erased_user) };
    });
    servingReads.set(c, read);
  }
  return read(tenant);
}

/** Live view of the catalog by id (active or not; deleted ids absent), without copying it. */
function liveDocs(index: SearchIndex, delta: PreparedDelta): { get(id: number): SearchDoc | undefined; has(id: number): boolean } {
  const get = (id: number): SearchDoc | undefined => {
    const fresh = delta.get(id);
    if (fresh) return fresh;
    if (delta.masked.has(id)) return undefined;
    const i = index.byId.get(id);
    return i === undefined ? undefined : index.docs[i];
  };
  return { get, has: (id) => get(id) !== undefined };
}

/**
 * `GET /v1/recommendations`: the endpoint's promoted model scores items from the user's latest
 * events (no retraining: a new event changes the next answer), or from one item (similar items);
 * content vectors reach items the model has never seen; popular items stand in for users without
 * history and tenants without a model. Seen items are left out unless asked; inactive and
 * deleted items never appear.
 */
export async function recommend(deps: RecsDeps, tenant: string, q: RecommendationsQuery, requestId: string, authorized: Promise<unknown> = Promise.resolve()) {
  if (q.user_id === undefined && q.item_id === undefined) {
    throw new ParameterMissing('Send user_id (personalised), item_id (similar items) or both.', { user_id: ['Required unless item_id is sent.'] });
  }
  const userId = q.user_id;
  const now = nowSeconds();
  // The context's plan: its rules and controls, and (unless the request names an endpoint) the
  // variant of its running experiment, whose endpoint then serves.
  // Its experiment's exposure is counted once the caller is confirmed, while the request is
  // ranked; answered only once counted.
  const planned =
    q.context_id !== undefined
      ? planAndRecord(required(deps.control), required(deps.exposures), tenant, Number(q.context_id), userId, now, q.endpoint === undefined ? { requestId, authorized } : undefined)
      : undefined;
  // The catalog and the serving config do not depend on the plan: read while it is made.
  const catalog = deps.catalog(tenant);
  const serving = servingConfig(deps.console, tenant);
  for (const p of [catalog, serving]) p.catch(() => undefined);
  const plan = planned ? await planned.plan : undefined;
  const assignment = q.endpoint === undefined && userId !== undefined ? (plan?.assignment ?? null) : null;
  const endpointName = q.endpoint ?? assignment?.endpoint;
  const recentAfter = (id: number) => (userId !== undefined ? deps.events.recentByUser(tenant, userId, HISTORY_LIMIT, id) : Promise.resolve([] as RecentEvent[]));
  const readKey = `${tenant}\u0000${endpointName ?? ''}`;
  const guess = readAfter.get(readKey) ?? 0;
  // The request's independent reads, at once; the user's latest events not when the plan read
  // them (segments): they likely hold every event the model has not seen.
  const [{ index, delta }, { endpoints, eventTypes, erased }, guessed] = await Promise.all([catalog, serving, plan?.userEvents ? undefined : recentAfter(guess)]);
  const docs = liveDocs(index, delta);
  const anchorId = q.item_id !== undefined ? Number(q.item_id) : undefined;
  if (q.item_id !== undefined && (!/^[1-9][0-9]*$/.test(q.item_id) || !docs.has(anchorId as number))) throw new ItemNotFound(q.item_id);

  // A variant's endpoint removed since the experiment started: the default serves.
  const endpoint = pickEndpoint(endpoints, endpointName) ?? (q.endpoint === undefined ? pickEndpoint(endpoints, undefined) : undefined);
  if (q.endpoint !== undefined && !endpoint) throw new NotFoundError('endpoint_not_found', `No serving endpoint ${q.endpoint}.`);
  const version = endpoint?.model_version ?? null;
  const model = version !== null ? await loadModel(deps, tenant, version) : undefined;
  // The events the model's artifact does not hold. Read after a lower id, they are the newest of
  // those read; after a higher one (another model serves now), they are read again.
  const through = model?.histories?.eventsThrough ?? 0;
  if (readAfter.size > 1000) readAfter.clear();
  readAfter.set(readKey, through);
  const recentRead = afterFromPlan(plan, through, HISTORY_LIMIT) ?? (guessed && guess <= through ? guessed.filter((e) => e.id > through) : await recentAfter(through));

  // Erasure (DELETE /api/users/{user_id}, shared/domain/erasure.ts): an erased user is not
  // personalised from their events up to the erasure's end, nor from a model artifact trained
  // before it (it holds their history); only from the events they send afterwards.
  const erasedTo = userId !== undefined ? erased.get(userId) : undefined;
  const recent = erasedTo === undefined ? recentRead : recentRead.filter((e) => e.created > erasedTo);
  const historyErased = erasedTo !== undefined && model?.histories !== undefined && artifactPredatesErasure(model.histories.trainedBefore, erasedTo);

  // A served model weighs the latest events as it was trained (a weight change takes effect at
  // the next run); the current weights only for types it does not know, or when it stored none
  // (older artifacts), or without a model.
  const currentWeights = new Map(eventTypes.map((e) => [e.name, e.weight]));
  const trainedWeights = model?.typeWeights;
  const weightOf = (type: string) => trainedWeights?.get(type) ?? currentWeights.get(type) ?? 1;
  // The history the model reads: the anchor item and the user's interactions, weighted by event
  // type (and, for the latest events, recency): those training saw, from the artifact, plus the
  // latest events it did not see. Kept as parallel lists (model indexes for the model, documents
  // for the taste vector), not merged by item: both are sums, so an item listed twice counts the
  // same, and a request builds no map of the user's whole history.
  const modelItems: number[] = [];
  const modelWeights: number[] = [];
  const historyDocs: SearchDoc[] = [];
  const historyWeights: number[] = [];
  const include = (id: number, w: number, modelIndex: number | undefined) => {
    const d = docs.get(id);
    if (!d) return;
    historyDocs.push(d);
    historyWeights.push(w);
    if (modelIndex !== undefined) modelItems.push(modelIndex), modelWeights.push(w);
  };
  const userScale = anchorId !== undefined ? 0.3 : 1;
  if (anchorId !== undefined) include(anchorId, 1, model?.itemIndex.get(anchorId));
  const trainedOn = model?.histories;
  const trained = trainedOn && q.user_id !== undefined && !historyErased ? historyOf(trainedOn, q.user_id) : undefined;
  if (model && trained) for (let k = 0; k < trained.items.length; k++) include(model.items[trained.items[k] as number] as number, userScale * (trained.weights[k] as number), trained.items[k]);
  // Everything the user interacted with counts as seen: the trained history (by model index, its
  // rows ascending) and the latest events.
  const recentSeen = new Set<number>();
  const trainedTypes = new Set(trainedOn?.trainedTypes);
  recent.forEach((e, k) => {
    const id = Number(e.item_id);
    recentSeen.add(id);
    if (trainedOn && e.created < trainedOn.trainedBefore && trainedTypes.has(e.type)) return;
    include(id, userScale * (weightOf(e.type) / (1 + k / 25)), model?.itemIndex.get(id));
  });
  const isSeen = (id: number) => {
    if (recentSeen.has(id)) return true;
    const i = trained ? model?.itemIndex.get(id) : undefined;
    return i !== undefined && sortedHas((trained as History).items, i);
  };

  // Every candidate's score, in the container's one table: from here to `best` nothing awaits.
  const scores = candidates;
  scores.clear();
  let strategy: string;
  let reason: string;
  if (historyDocs.length > 0) {
    strategy = anchorId !== undefined ? 'similar' : 'personalized';
    reason = anchorId !== undefined ? `similar to item ${anchorId}` : 'from your recent activity';
    // The model's candidates, and the lowest of their scores.
    const fromModel = new Set<number>();
    let floor = 0;
    if (model && modelItems.length) {
      const s = model.model.score({ items: modelItems, weights: modelWeights }, scratchScores(model.model.itemCount));
      let max = 1e-9;
      for (let i = 0; i < s.length; i++) if ((s[i] as number) > max) max = s[i] as number;
      // The model's 500 best items besides the history's own (seen items are left out below,
      // unless asked for): however long the history, as many candidates of the model remain.
      for (const i of topPositive(s, 500 + (q.include_seen ? 0 : modelItems.length))) {
        const id = model.items[i] as number;
        const v = (s[i] as number) / max;
        scores.add(id, v);
        fromModel.add(id);
        floor = floor === 0 ? v : Math.min(floor, v);
      }
    }
    // Content similarity reaches items the model never saw (new since training) and serves
    // tenants without a model: the history's taste vector against the catalog's vectors.
    const taste = new Float32Array(index.dims);
    if (addDocVectors(index, historyDocs, historyWeights, taste)) {
      normalize(taste);
      // The model's candidates are ranked by the model alone, as training validated and
      // evaluated it (content added to their scores served a different, weaker ranking: issue
      // 20). Items it never saw (new since training) are ranked by content, on the same 0-1 scale
      // as the model's scores. Other items it knows come after every candidate of the model (by
      // content, below its lowest score) or, when it has none, by a little content.
      const contentWeight = (id: number) => (!model || !model.itemIndex.has(id) ? 1 : fromModel.has(id) ? 0 : floor > 0 ? 0.5 * floor : 0.15);
      const accept = delta.masked.size === 0 ? () => true : (i: number) => !delta.masked.has(index.ids[i] as number);
      index.nearest(taste, 200, accept).forEach((i, s) => {
        const id = index.ids[i] as number;
        if (s > 0 && contentWeight(id) > 0) scores.add(id, contentWeight(id) * s);
      });
      for (const d of delta.docs) {
        const s = cosine(d.vector, taste);
        if (s > 0 && contentWeight(d.id) > 0) scores.add(d.id, contentWeight(d.id) * s);
      }
    }
  } else {
    strategy = 'popular';
    reason = 'popular right now';
  }
  const eligible = (id: number) => {
    const d = docs.get(id);
    if (!d || !d.active) return false;
    if (id === anchorId) return false;
    if (!q.include_seen && isSeen(id)) return false;
    if (q.category !== undefined && d.metadata.category !== q.category) return false;
    return true;
  };
  // With a context, its rules and controls choose from a wider pool of candidates.
  const want = plan ? Math.max(CONTEXT_POOL, q.limit) : q.limit;
  let ranked: [number, number][];
  if (scores.size > 0) ranked = best(scores, want, eligible);
  else {
    strategy = 'popular';
    reason = 'popular right now';
    ranked = best(await popularity(deps, tenant, model), want, eligible);
  }
  if (ranked.length < want && strategy !== 'popular') {
    // Not enough personal candidates after filtering: fill with popular items.
    const have = new Set(ranked.map(([id]) => id));
    const fill = [...(await popularity(deps, tenant, model))].filter(([id]) => !have.has(id) && eligible(id));
    ranked = [...ranked, ...fill.slice(0, want - ranked.length).map(([id, s]): [number, number] => [id, s * 1e-3])];
  }
  const experiment = assignment ? { id: assignment.experiment.id, variant: assignment.variant } : null;
  let served: { id: number; score: number; explain?: Explanation }[];
  if (plan) {
    const candidates: Candidate[] = ranked.map(([id, score]) => ({ id, score, doc: docs.get(id) as SearchDoc }));
    const popular = plan.controls.popularity_weight ? await popularity(deps, tenant, model) : undefined;
    served = runPipeline(candidates, plan.rules, plan.controls, {
      now,
      depth: q.limit,
      seen: isSeen,
      ...(popular ? { popularity: (id: number) => popular.get(id) ?? 0 } : {}),
      similarity: similarityIn(index, delta),
    }, experiment);
  } else served = ranked.map(([id, score]) => ({ id, score }));
  const data = served.slice(0, q.limit).map((r, k) => ({
    object: 'recommendation' as const,
    item_id: String(r.id),
    rank: k + 1,
    score: Number(r.score.toFixed(6)),
    reason,
    item: itemResource(docs.get(r.id) as SearchDoc),
    ...(q.explain ? { explain: presentExplain(r.explain ?? { base_score: r.score, rules: [], score_after_rules: r.score, rerank: [], final_score: r.score, experiment }) } : {}),
  }));
  await planned?.recorded;
  return {
    object: 'list' as const,
    data,
    has_more: false,
    next_cursor: null,
    url: '/v1/recommendations',
    request_id: requestId,
    model: version !== null && endpoint ? { endpoint: endpoint.endpoint_name, version } : null,
    ...(experiment ? { experiment } : {}),
    strategy,
  };
}

function required<T>(dep: T | undefined): T {
  if (dep === undefined) throw new Error('a request naming a context needs the control-plane dependencies');
  return dep;
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

/**
 * Scores by item id for one ranking at a time, in typed arrays (open addressing) that every
 * request of the container reuses: a ranking fills it after `clear()` and reads it without
 * awaiting in between, and allocates no map of its candidates. Ids are positive integers.
 */
export class ScoreTable {
  private ids = new Float64Array(1024);
  private values = new Float64Array(1024);
  /** Filled slots in the order their ids were added. */
  private filled = new Int32Array(512);
  private shift = 22;
  size = 0;

  clear(): void {
    for (let k = 0; k < this.size; k++) this.ids[this.filled[k] as number] = 0;
    this.size = 0;
  }

  /** Adds `value` to the score of `id` (0 before its first add). */
  add(id: number, value: number): void {
    if (2 * (this.size + 1) > this.ids.length) this.grow();
    const { ids } = this;
    const mask = ids.length - 1;
    let h = Math.imul((id >>> 0) ^ Math.floor(id / 4294967296), 0x9e3779b1) >>> this.shift;
    while (ids[h] !== 0 && ids[h] !== id) h = (h + 1) & mask;
    if (ids[h] === 0) {
      ids[h] = id;
      this.values[h] = value;
      this.filled[this.size++] = h;
    } else this.values[h] = (this.values[h] as number) + value;
  }

  forEach(fn: (score: number, id: number) => void): void {
    for (let k = 0; k < this.size; k++) {
      const h = this.filled[k] as number;
      fn(this.values[h] as number, this.ids[h] as number);
    }
  }

  private grow(): void {
    const { ids, values, filled, size } = this;
    this.ids = new Float64Array(ids.length * 2);
    this.values = new Float64Array(ids.length * 2);
    this.filled = new Int32Array(ids.length);
    this.shift -= 1;
    this.size = 0;
    for (let k = 0; k < size; k++) this.add(ids[filled[k] as number] as number, values[filled[k] as number] as number);
  }
}
const candidates = new ScoreTable();

/** The `limit` best eligible (id, score) pairs: score descending, then id ascending. */
function best(scores: { forEach(fn: (score: number, id: number) => void): void }, limit: number, eligible: (id: number) => boolean): [number, number][] {
  const out: [number, number][] = [];
  // Whether (id, score) ranks before pair b. forEach, unlike for-of, makes no entry arrays.
  const before = (id: number, score: number, b: [number, number]) => score > b[1] || (score === b[1] && id < b[0]);
  scores.forEach((score, id) => {
    if (out.length >= limit && !before(id, score, out[out.length - 1] as [number, number])) return;
    if (!eligible(id)) return;
    let p = out.length;
    while (p > 0 && before(id, score, out[p - 1] as [number, number])) p--;
    out.splice(p, 0, [id, score]);
    if (out.length > limit) out.pop();
  });
  return out;
}

/**
 * Working arrays of a container's rankings, grown to the largest model and reused (a ranking
 * reads them without awaiting): a request allocates no array the size of the catalog.
 */
const scratch = { scores: new Float32Array(0), positive: new Int32Array(0), values: new Float32Array(0) };
function scratchScores(n: number): Float32Array {
  if (scratch.scores.length < n) scratch.scores = new Float32Array(n);
  return scratch.scores.subarray(0, n);
}

/**
 * The indexes of the `k` highest positive scores, in no particular order (ties at the cut go to
 * lower indexes, as in `topK`): a linear selection, since most scores are usually zero. The
 * answer is a view of working memory, valid until the next call.
 */
export function topPositive(s: Float32Array, k: number): Int32Array {
  if (scratch.positive.length < s.length) {
    scratch.positive = new Int32Array(s.length);
    scratch.values = new Float32Array(s.length);
  }
  const { positive, values } = scratch;
  let n = 0;
  for (let i = 0; i < s.length; i++) if ((s[i] as number) > 0) positive[n++] = i;
  if (n <= k) return positive.subarray(0, n);
  // The k-th highest value (quickselect on a copy), then everything above it and ties by index,
  // compacted in place at the front.
  for (let j = 0; j < n; j++) values[j] = s[positive[j] as number] as number;
  const cut = kthLargest(values.subarray(0, n), k);
  let out = 0;
  let ties = 0;
  for (let j = 0; j < n; j++) {
    const v = s[positive[j] as number] as number;
    if (v > cut) positive[out++] = positive[j] as number;
    else if (v === cut) ties++;
  }
  // Then ties at the cut (all positive), lowest indexes first, while room is left.
  const room = Math.min(k - out, ties);
  if (room > 0) {
    let taken = 0;
    for (let i = 0; i < s.length && taken < room; i++) if ((s[i] as number) === cut) positive[out + taken++] = i;
    out += taken;
  }
  return positive.subarray(0, out);
}

/** The model's 1,000 most popular items in training, scaled to 0-1. */
function modelPopularity(a: ModelArtifact): Map<number, number> {
  const out = new Map<number, number>();
  let max = 1e-9;
  for (const v of a.popularity) if (v > max) max = v;
  for (const i of topK(a.popularity, 1000, new Set())) out.set(a.items[i] as number, (a.popularity[i] as number) / max);
  return out;
}

/** Popular items: the model's training popularity, else the tenant's latest events. */
async function popularity(deps: RecsDeps, tenant: string, model: ServedModel | undefined): Promise<Map<number, number>> {
  return model ? model.popular : trendingScores(deps.events, tenant, deps.trendingEvents);
}
