/**
 * `GET /v1/recommendations` through the serving pipeline (shared/serving/pipeline.ts):
 * candidates (the model's, content similarity, popularity: candidates.ts) over the catalog port
 * (shared/domain/catalog.ts), then a context's rules and rerank controls, its experiment, and the
 * answer.
 */
import type { BlobStore } from '../blob.ts';
import { nowSeconds } from '../clock.ts';
import { deadlineSignal } from '../deadline.ts';
import { logger } from '../observability.ts';
import type { ConsoleStore } from '../domain/console-records.ts';
import type { Catalog } from '../domain/catalog.ts';
import { pickEndpoint } from '../domain/endpoints.ts';
import { artifactPredatesErasure, eventsAfterErasure, withoutErased } from '../domain/erased-users.ts';
import { fitting } from '../domain/answer-size.ts';
import { coreList, itemResource } from '../domain/present.ts';
import type { EventStore, ItemRecord, ItemWithVector, RecentEvent } from '../domain/types.ts';
import { ItemNotFound, MissingInput, NotFound } from '../domain/errors.ts';
import { catalogItemId } from '../domain/item-ids.ts';
import type { RecommendationsQuery } from '../schemas/recs.ts';
import { planAndRecord, type ExposureStore } from '../control/exposures.ts';
import { afterFromPlan, contextNumber, type ControlDeps, type ServingPlan } from '../control/serving.ts';
import { ruleMatches, withinCategoryCap } from '../control/pipeline.ts';
import { experimentOf, order, orderAfter, presentExplanation, presentScore, type Ordered } from '../serving/pipeline.ts';
import { holdsNfc, nfc } from '../domain/nfc.ts';
import { bestEligible, personalCandidates, withNewestFill, withPopularFill } from './candidates.ts';
import { requestHistory, type RequestHistory } from './history.ts';
import { erasedUser, loadModel, popularity, servingConfig, type ServedModel } from './served-model.ts';
import type { PopularitySnapshots } from './trending.ts';
import { Lru } from '../lru.ts';

export { ScoreTable } from './score-table.ts';
export { topPositive } from './candidates.ts';

/** With a context, the candidates its rules and rerank controls choose from (before `limit`). */
const CONTEXT_POOL = 200;
/**
 * How many pools below the first a context's recommendations read at most (4 x larger each: 800,
 * then 3,200 candidates) to make up what its rules and controls leave out of the first.
 */
const REFILLS = 2;

export interface RecsDeps {
  console: ConsoleStore;
  /** The control plane (contexts) and experiment counting: needed only by requests that name a context. */
  control?: ControlDeps;
  exposures?: ExposureStore;
  events: EventStore;
  blobs: BlobStore;
  /**
   * The tenant's live catalog (the catalog port, which search offers): existence, activity,
   * vectors. `bounded`: served after waiting for its container's read of the changes since the
   * index build at most SEARCH_READ_WAIT_MS, so possibly `behind`; otherwise after all of it.
   */
  catalog: (tenant: string, bounded?: boolean) => Promise<Catalog>;
  /** How many of the tenant's latest events popularity without a model counts (default TRENDING_EVENTS, trending.ts). */
  trendingEvents?: number;
  /** Tenants' stored popularity counts: a container's first popularity without a model is read there instead of counted. */
  popularSnapshots?: PopularitySnapshots;
}

/**
 * How many of the user's latest events a request reads (a Query page or more: 100 events of
 * 32 KB take 4). The model's artifact holds
 * each user's history up to its `eventsThrough` id; a request reads only the events after it
 * (and all of a user's latest events without a model).
 */
const HISTORY_LIMIT = 100;
/**
 * A user with more events than that since the model's artifact: the items of their latest this
 * many are seen too (left out unless include_seen), read (id, item, type, time) only then.
 * Without it, an item interacted with more than 100 events ago, after training, came back.
 */
const SEEN_LIMIT = 5000;
/**
 * The Query pages (each at most 1 MB of whole events) that read reads at most: 5,000 events of up
 * to some 800 bytes each as stored. Larger events are read that far only: unbounded, 5,000 events
 * of 32 KB each were 160 pages (160 MB, some 20,000 read units, several seconds one page after
 * another, past the request's deadline) on every request of that user.
 */
const SEEN_PAGES = 4;

/**
 * Cache: per tenant and endpoint, the event id the last request read after (its model's
 * `eventsThrough`): the next request's read starts there at once, beside the endpoint's config,
 * and is narrowed, or made again, once the request knows which model serves it. Bound: READ_AFTER_KEPT
 * entries, the least recently used let go (until 2026-12-07 emptied whole when full: every
 * endpoint's next request read the user's events from the start again).
 */
export const READ_AFTER_KEPT = 1001;
const readAfter = new Lru<string, number>(READ_AFTER_KEPT);

/**
 * `GET /v1/recommendations`: the endpoint's promoted model scores items from the user's latest
 * events (no retraining: a new event changes the next answer), or from one item (similar items);
 * content vectors reach items the model has never seen; popular items stand in for users without
 * history and tenants without a model. Seen items are left out unless asked; inactive and
 * deleted items never appear.
 */
export async function recommend(deps: RecsDeps, tenant: string, q: RecommendationsQuery, requestId: string, authorized: Promise<unknown> = Promise.resolve()) {
  if (q.user_id === undefined && q.item_id === undefined) {
    throw new MissingInput('Send user_id (personalised), item_id (similar items) or both.', { user_id: ['Required unless item_id is sent.'] });
  }
  const userId = q.user_id;
  const now = nowSeconds();
  // The context's plan: its rules and controls, and (unless the request names an endpoint) the
  // variant of its running experiment, whose endpoint then serves.
  // Its experiment's exposure is counted once the caller is confirmed, while the request is
  // ranked; answered only once counted.
  const contextId = q.context_id !== undefined ? contextNumber(q.context_id) : undefined;
  // The catalog, the serving config and the user's erasure marker do not depend on the plan: read
  // while it is made. The plan decides segments on the user's events without those an erasure
  // covers: by this read's marker (no second read).
  const catalogRead = deps.catalog(tenant, true);
  const serving = servingConfig(deps.console, tenant);
  const markerRead = userId !== undefined ? erasedUser(deps.console, tenant, userId) : Promise.resolve(undefined);
  for (const p of [catalogRead, serving, markerRead]) p.catch(() => undefined);
  const planned =
    contextId !== undefined
      ? planAndRecord(required(deps.control), required(deps.exposures), tenant, contextId, userId, now, q.endpoint === undefined ? { requestId, authorized } : undefined, markerRead)
      : undefined;
  try {
    const plan = planned ? await planned.plan : undefined;
    const assignment = q.endpoint === undefined && userId !== undefined ? (plan?.assignment ?? null) : null;
    const endpointName = q.endpoint ?? assignment?.endpoint;
    const recentAfter = (id: number) => (userId !== undefined ? deps.events.recentByUser(tenant, userId, HISTORY_LIMIT, id) : Promise.resolve([] as RecentEvent[]));
    const readKey = `${tenant}\u0000${endpointName ?? ''}`;
    const guess = readAfter.get(readKey) ?? 0;
    // The request's independent reads, at once; the user's latest events not when the plan read
    // them (segments): they likely hold every event the model has not seen.
    const [served, { endpoints, eventTypes }, marker, guessed] = await Promise.all([catalogRead, serving, markerRead, plan?.userEvents ? undefined : recentAfter(guess)]);
    const anchorId = q.item_id !== undefined ? catalogItemId(q.item_id) : undefined;
    const catalog = q.item_id !== undefined ? await anchoredCatalog(deps, tenant, served, q.item_id, anchorId) : served;
    // Valid: its exposure may be counted (a request naming its own endpoint records none).
    planned?.accept();

    // A variant names an existing endpoint (checked when it is set), and endpoints are never deleted
    // or renamed; should it still be missing, the default serves rather than nothing.
    const endpoint = pickEndpoint(endpoints, endpointName) ?? (q.endpoint === undefined ? pickEndpoint(endpoints, undefined) : undefined);
    if (q.endpoint !== undefined && !endpoint) throw new NotFound('endpoint_not_found', `No serving endpoint ${q.endpoint}.`);
    const version = endpoint?.model_version ?? null;
    const model = version !== null ? await loadModel(deps.console, deps.blobs, tenant, version) : undefined;
    // Erasure (DELETE /api/users/{user_id}, shared/domain/erasure.ts): an erased user is not
    // personalised from the events it erased, nor from a model artifact trained before its end
    // (it may hold their history, or none of it: left out); only from the events they send
    // once it began, which such an artifact does not hold either, so they are read from the table.
    const historyErased = marker !== undefined && model?.histories !== undefined && artifactPredatesErasure(model.histories.trainedBefore, marker.completed_at ?? Infinity);
    const sinceErasure = withoutErased(marker);

    // The events the model's artifact does not hold. Read after a lower id, they are the newest of
    // those read; after a higher one (another model serves now), they are read again.
    const modelThrough = model?.histories?.eventsThrough ?? 0;
    const through = historyErased ? Math.min(modelThrough, eventsAfterErasure(marker)) : modelThrough;
    readAfter.set(readKey, modelThrough);
    const recentRead = afterFromPlan(plan, through, HISTORY_LIMIT) ?? (guessed && guess <= through ? guessed.filter((e) => e.id > through) : await recentAfter(through));
    const recent = sinceErasure(recentRead);
    // More events since the artifact than the taste reads: the rest are seen too.
    const alsoSeen = userId !== undefined && recentRead.length >= HISTORY_LIMIT ? sinceErasure(await deps.events.recentByUser(tenant, userId, SEEN_LIMIT, through, undefined, SEEN_PAGES)) : [];

    // A served model weighs the latest events as it was trained (a weight change takes effect at
    // the next run); the current weights only for types it does not know, or when it stored none
    // (older artifacts), or without a model.
    const currentWeights = new Map(eventTypes.map((e) => [e.name, e.weight]));
    const trainedWeights = model?.typeWeights;
    const weightOf = (type: string) => trainedWeights?.get(type) ?? currentWeights.get(type) ?? 1;
    const history = requestHistory({ catalog, model, anchorId, userId, recent, alsoSeen, historyErased, weightOf });

    const request: Scoring = { deps, tenant, q, catalog, model, history, anchorId, plan };
    const found = await candidates(request);
    const experiment = experimentOf(assignment);
    // The catalog's read of the changes goes on while the request ranks (the rest of it, when the
    // catalog is `behind`; another request's, otherwise): an item deleted or deactivated by a page
    // applied while candidates awaited (popularity's read) is left out, not ranked without its item.
    // The last wait (a context's popularity) before the items are checked against the catalog, and
    // nothing awaited from that check to the answer: an item deactivated, deleted or moved out of the
    // category asked for while the request waited is left out (until 2026-12-05 one changed while
    // popularity was counted was served as it was before).
    const popularity = plan?.controls.popularity_weight ? await popularHelper(request) : {};
    const current = (ranked: readonly [number, number][]) =>
      ranked.flatMap(([id, score]) => {
        const doc = catalog.get(id);
        return doc?.active && inCategory(doc, q.category) ? [{ id, score, doc }] : [];
      });
    const helpers = { now, depth: q.limit, seen: history.isSeen, ...popularity, similarity: catalog.similarity };
    let ordered = order(current(found.ranked), plan, helpers, experiment);
    // Each candidate says why it is there as the pool it came from does.
    const from = new Map(found.ranked.map(([id]) => [id, found]));
    // A context's rules (boost 0), `exclude_seen` or `max_per_category` left fewer than `limit` of a
    // pool that was cut: the candidates below it, from pools four times as large, until `limit`, the
    // candidates run out, or REFILLS pools (until 2026-12-05 the answer was short, or empty, while
    // eligible items remained past the pool; then, for a day, the pools grew until the catalog ran
    // out: a context that can never fill, such as max_per_category 1 over 3 categories, read the
    // whole catalog's candidates, 400 ms at 60,000 items).
    for (let pool = found.ranked.length, refills = 0; plan && ordered.length < q.limit && pool >= found.pool && refills < REFILLS; refills++) {
      deadlineSignal()?.throwIfAborted();
      const more = await candidates({ ...request, pool: pool * 4 });
      const below = more.ranked.filter(([id]) => !from.has(id));
      if (below.length === 0) break;
      for (const [id] of below) from.set(id, more);
      ordered = [...ordered, ...orderAfter(ordered, current(below), plan, helpers, experiment)];
      if (more.ranked.length < more.pool) break;
      pool = more.pool;
    }
    // The exposure's write (begun once the request was accepted) ends first: the page is checked
    // against the catalog after the request's last wait, and nothing is awaited from that check to
    // the answer (an item deactivated while the write or a deeper pool's popularity was awaited
    // was served until 2026-12-07).
    await planned?.recorded;
    const eligible = await stillEligible(catalog, ordered, q.limit, q.category, plan);
    const listed = eligible.map(({ r, item }, k) => ({
      object: 'recommendation' as const,
      item_id: String(r.id),
      rank: k + 1,
      score: presentScore(r.score),
      reason: (from.get(r.id) ?? found).reason(r.id),
      item: itemResource(item),
      ...(q.explain ? { explain: presentExplanation(r, experiment) } : {}),
    }));
    // Each embeds its whole item: as many as fit Lambda's answer (answer-size.ts; one at least),
    // the best first. The list has no cursor and holds at most `limit`: those past the cut are not
    // served (until 2026-12-06 100 large items answered 11 MB, API Gateway's own 500 on AWS).
    const n = fitting(listed);
    const data = listed.slice(0, n);
    const shown = eligible.slice(0, n);
    const personal = (id: number) => from.get(id)?.personal(id) === true;
    // `popular` when nothing personal is shown (a context's rules may have left out every personal
    // candidate); personal when a personal candidate of any pool is (until 2026-12-05 the first
    // pool's strategy, popular when only a deeper pool held personal candidates). Of those answered.
    const strategy = shown.some(({ r }) => personal(r.id)) ? (anchorId !== undefined ? 'similar' : 'personalized') : 'popular';
    // Ranked after the deadline, which answered 503 already: not served either.
    deadlineSignal()?.throwIfAborted();
    return coreList(
      '/v1/recommendations',
      data,
      { hasMore: false, cursor: null },
      {
        request_id: requestId,
        model: model && version !== null && endpoint ? { endpoint: endpoint.endpoint_name, version } : null,
        ...(experiment ? { experiment } : {}),
        strategy,
      },
    );
  } catch (e) {
    // Not served once accepted (a read or ranking failed, the deadline passed): not counted in its experiment.
    await planned?.failed().catch((err: unknown) => logger.warn("failed recommendation's exposure not taken back", { tenant, error: String(err) }));
    throw e;
  }
}

/**
 * The catalog a similar-items request ranks on, once its item (`anchorId`, of `itemId` as sent) is
 * known to exist: the one served within the bounded wait, checked against the table when it is
 * `behind` (it may hold an item deleted since); or, when it is behind and lacks the item (created
 * since the build, not read yet), the catalog once its container's whole read ended.
 */
async function anchoredCatalog(deps: RecsDeps, tenant: string, served: Catalog, itemId: string, anchorId: number | undefined): Promise<Catalog> {
  if (anchorId === undefined) throw new ItemNotFound(itemId);
  if (!served.behind) {
    if (!served.isLive(anchorId)) throw new ItemNotFound(itemId);
    return served;
  }
  // Behind, the table says whether it exists: one it does not hold (deleted since, or never
  // created) is not found at once, not after the container's whole read.
  if ((await served.current([anchorId]))[0] === undefined) throw new ItemNotFound(itemId);
  if (served.isLive(anchorId)) return served;
  const catalog = await deps.catalog(tenant);
  if (!catalog.isLive(anchorId)) throw new ItemNotFound(itemId);
  return catalog;
}

/**
 * The first `limit` of the ordered candidates still eligible, with the versions of their items
 * shown, leaving out items deleted, deactivated or moved out of the category asked for since they
 * were ranked, which recommendations never show: the catalog's versions now (the catalog's read
 * of the changes goes on while a request waits: a context's deeper pool awaits popularity after
 * the pools before it were ranked, and until 2026-12-07 an item of those deactivated meanwhile was
 * served); or, when it is `behind` (served before its container read every change since the index
 * build), the table's, read for the first `limit` only, so that page may then hold fewer.
 */
async function stillEligible(catalog: Catalog, ordered: readonly Ordered[], limit: number, category: string | undefined, plan: ServingPlan | undefined): Promise<{ r: Ordered; item: ItemRecord }[]> {
  const page = catalog.behind ? ordered.slice(0, limit) : ordered;
  const now = catalog.behind ? await catalog.current(page.map((r) => r.id)) : undefined;
  // A context's rules ran on the versions ranked: one of boost 0 (an exclusion) that matches the
  // version shown leaves it out too, and `max_per_category` counts the categories shown.
  const exclusions = plan?.rules.filter((rule) => rule.boost === 0) ?? [];
  const excluded = (doc: ItemWithVector) => exclusions.some((rule) => ruleMatches(rule, doc));
  const cap = plan?.controls.max_per_category;
  // In order, until `limit` are shown: a candidate's place depends only on those before it.
  const shown: { r: Ordered; item: ItemRecord; doc: ItemWithVector }[] = [];
  for (let i = 0; i < page.length && shown.length < limit; i++) {
    const r = page[i] as Ordered;
    const item = now ? now[i] : catalog.get(r.id);
    if (!item?.active || !inCategory(item, category)) continue;
    const doc: ItemWithVector = { ...item, vector: null };
    if (excluded(doc)) continue;
    const entry = { r, item, doc };
    if (cap === undefined || withinCategoryCap([entry], cap, shown).length === 1) shown.push(entry);
  }
  return shown;
}

/**
 * Whether an item is in the category a request asks for (any, without one): its `metadata.category`
 * is that string, or a list holding it, as search's `filters.category` matches and as
 * `max_per_category` counts a list's categories, compared in NFC as search's filters compare
 * (shared/domain/nfc.ts). Until 2026-12-07 only a string category matched: an item whose category
 * was a list was never recommended under `category`; and the strings were compared as sent, so
 * "Café" asked with e and U+0301 missed the items holding a composed é, which search's filter matched.
 */
const inCategory = (item: ItemRecord, category: string | undefined): boolean => category === undefined || holdsNfc(item.metadata.category, nfc(category));

/** What scoring a request's candidates reads. */
interface Scoring {
  deps: RecsDeps;
  tenant: string;
  q: RecommendationsQuery;
  catalog: Catalog;
  model: ServedModel | undefined;
  history: RequestHistory;
  anchorId: number | undefined;
  plan: ServingPlan | undefined;
  /** How many candidates a context's pool holds (CONTEXT_POOL, or `limit` when larger). */
  pool?: number;
}

const POPULAR_REASON = 'popular right now';
const NEWEST_REASON = 'new in the catalog';

/**
 * The candidates and score stages: personal candidates when the request has a history
 * (`personalCandidates`), popular items otherwise or when none is left; the best eligible
 * (active, not the anchor, unseen unless asked, in the category), filled up with popular items.
 * With a context, its rules and controls choose from a wider pool.
 */
async function candidates(r: Scoring): Promise<{ ranked: [number, number][]; pool: number; strategy: string; reason: (id: number) => string; personal: (id: number) => boolean }> {
  const { q, catalog, history, anchorId } = r;
  const eligible = (id: number) => {
    const d = catalog.get(id);
    if (!d?.active) return false;
    if (id === anchorId) return false;
    if (!q.include_seen && history.isSeen(id)) return false;
    if (!inCategory(d, q.category)) return false;
    return true;
  };
  const want = r.plan ? Math.max(r.pool ?? CONTEXT_POOL, q.limit) : q.limit;
  const popular = () => popularity(r.deps.events, r.tenant, r.model, r.deps.trendingEvents, r.deps.popularSnapshots);
  // From the personal candidates to their best, nothing awaits (the score table is shared).
  const scores = history.docs.length > 0 ? personalCandidates(catalog, r.model, history, q.include_seen === true, r.pool) : undefined;
  // Too few popular items (a tenant with few or no events yet): the newest fill the rest, so a
  // catalog with eligible items never answers an empty list.
  const filled = (ranked: [number, number][]) => (ranked.length < want ? withNewestFill(ranked, catalog, want, eligible) : ranked);
  const personalReason = anchorId !== undefined ? `similar to item ${anchorId}` : 'from your recent activity';
  const ranked = scores && scores.size > 0 ? bestEligible(scores, want, eligible) : [];
  if (ranked.length >= want) return { ranked, pool: want, strategy: anchorId !== undefined ? 'similar' : 'personalized', reason: () => personalReason, personal: () => true };
  const personal = new Set(ranked.map(([id]) => id));
  // Not enough personal candidates after filtering (or none): popular items fill up after them.
  const popularScores = await popular();
  const withPopular = ranked.length ? withPopularFill(ranked, popularScores, want, eligible) : bestEligible(popularScores, want, eligible);
  const popularIds = new Set(withPopular.filter(([id]) => !personal.has(id)).map(([id]) => id));
  // Nothing personal left after the filters: the popular strategy.
  const strategy = !ranked.length ? 'popular' : anchorId !== undefined ? 'similar' : 'personalized';
  // Each says why it is there: a personal candidate, a popular item, or one of the newest filling up.
  const reason = (id: number) => (personal.has(id) ? personalReason : popularIds.has(id) ? POPULAR_REASON : NEWEST_REASON);
  return { ranked: filled(withPopular), pool: want, strategy, reason, personal: (id) => personal.has(id) };
}

/** The pipeline's popularity (only when the plan weighs it). */
async function popularHelper(r: Scoring): Promise<{ popularity: (id: number) => number }> {
  const popular = await popularity(r.deps.events, r.tenant, r.model, r.deps.trendingEvents, r.deps.popularSnapshots);
  return { popularity: (id: number) => popular.get(id) ?? 0 };
}

function required<T>(dep: T | undefined): T {
  if (dep === undefined) throw new Error('a request naming a context needs the control-plane dependencies');
  return dep;
}
