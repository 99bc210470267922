/**
 * `POST /v1/search` and the Platform's item search: one request ranked over the tenant's view
 * (views.ts) and served through the serving pipeline (shared/serving/pipeline.ts), in one of
 * three ways: by relevance (keyset pages), sorted by a field (sort.ts), or ordered by a context's
 * plan (offset pages over its pool).
 */
import { canonicalJson } from '../canonical-json.ts';
import { nextTurn } from '../concurrency.ts';
import { fittingBeside } from '../domain/answer-size.ts';
import { itemResource, platformList } from '../domain/present.ts';
import { InvalidInput } from '../domain/errors.ts';
import { latestFromPlan, type ServingPlan } from '../control/serving.ts';
import type { ErasedUser } from '../domain/console-records.ts';
import { withoutErased } from '../domain/erased-users.ts';
import type { RecentEvent } from '../domain/types.ts';
import { trendingPopularity, trendingScoresAsOf, type Popularity } from '../recs/trending.ts';
import { experimentOf, order, orderAfter, presentExplanation, presentScore, type ServedExperiment } from '../serving/pipeline.ts';
import { type Cursor, cursorDigest, decodeCursor, encodeCursor, encodeOffsetCursor, hitVersion, sameList } from './cursor.ts';
import type { PreparedDelta } from './delta.ts';
import { NO_FILTER, type SearchIndex } from './engine.ts';
import { type DisjunctiveFacet, SearchFacets, withinBytes } from './facets.ts';
import { platformFilter } from './filters.ts';
import { highlightDoc, snippetScan, stopWordsAsked, withPhrasesHeld, type HighlightTags } from './highlight.ts';
import { PROFILE_EVENTS, profileOf, queryVector } from './profiles.ts';
import { rank, rankingQuery, type RankRequest } from './rank.ts';
import { decodeSortCursor, encodeSortCursor, SortedPage, type SortCursor, type SortSpec } from './sort.ts';
import { synonymsIn, synonymText, type SynonymRule, type WithSynonyms } from './synonyms.ts';
import { phraseTerms } from './text.ts';
import type { DocFilter, SearchDoc, SearchMode } from './types.ts';
import type { SearchView } from './catalog.ts';
import { pagedView, type SearchDeps } from './views.ts';
import { similarityIn } from './vectors.ts';
import type { FilterClause } from '../schemas/search.ts';
import type { Explanation } from '../control/pipeline.ts';
import { catalogItemId } from '../domain/item-ids.ts';
import { logger } from '../observability.ts';

export interface SearchRequest {
  query: string;
  mode: SearchMode;
  filter: DocFilter;
  limit: number;
  cursor?: string | undefined;
  /** The user a search is personalised for (their taste, a context's `exclude_seen`). */
  user?: SearchUser | undefined;
  includeInactive?: boolean;
  /** A context's plan (rules, rerank controls, experiment variant): the pipeline orders the best matches. */
  plan?: ServingPlan | undefined;
  /** Each hit says why it is there. */
  explain?: boolean | undefined;
  /** Metadata keys counted over every match (the answer's `facets`). */
  facets?: readonly string[] | undefined;
  /** Of those, the keys counted without the filters on themselves (disjunctive), each with that filter. */
  disjunctive?: readonly DisjunctiveFacet[] | undefined;
  /** Each hit's name and a snippet of its description with the matched words marked by these tags. */
  highlight?: HighlightTags | undefined;
  /** A numeric field's order instead of relevance (not with a plan: its pipeline orders). */
  sort?: SortSpec | undefined;
  /** The tenant's synonym sets, applied to the query before ranking. */
  synonyms?: readonly SynonymRule[] | undefined;
  /**
   * What orders a relevance list besides the catalog (the query, mode, filters and user as sent):
   * its cursors carry a digest of it, and one sent with another is refused (a cursor of a hybrid
   * list sent with mode semantic repeated four of five hits).
   */
  listOf?: string | undefined;
  /** Called once the request is valid (its cursor too) and its view read, before ranking: search analytics records it meanwhile. */
  accepted?: (() => void) | undefined;
}

/**
 * A search's user, with their erasure marker (`ControlDeps.erasedUser`, read for the request):
 * the events an erasure of the user covers make no taste and are not seen.
 */
export interface SearchUser {
  id: string;
  erased: Promise<ErasedUser | undefined>;
}

/**
 * The user's latest `n` events that may personalise, newest first (with `below`, those with a
 * lower id): read beside the user's erasure marker, without those the user's erasure covers
 * (`withoutErased`, as recommendations leave them out), from the moment its marker is stored.
 */
async function userEvents(deps: SearchDeps, tenant: string, user: SearchUser, n: number, below?: number): Promise<readonly RecentEvent[]> {
  const [events, marker] = await Promise.all([deps.events.recentByUser(tenant, user.id, n, undefined, below), user.erased]);
  return withoutErased(marker)(events);
}

/*
 * Presentation of a search (facets, highlighting, sort by a field, synonyms): shared/search/
 * facets.ts, highlight.ts, sort.ts and synonyms.ts; ranking hands every match to `visit`.
 */

/**
 * The query ranking sees: the request's without its request words (a long query's "papers
 * about", rankingQuery), with the words of its synonyms the vocabulary (index or delta) holds.
 */
function queryOf(req: SearchRequest, delta: PreparedDelta): WithSynonyms {
  const query = rankingQuery(req.query);
  return req.synonyms?.length ? synonymsIn(delta, query, req.synonyms) : { query, phrases: [], alternatives: [] };
}

/** The largest item id a view ranks: a first page's cursor holds it (`Cursor.upTo`; item ids only grow). */
const largestItemId = (index: SearchIndex, delta: PreparedDelta): number => Math.max(index.largestId, delta.largestId);

/** What ranking is asked for this request (its query vector only when of the index's size). */
function rankRequest(
  req: SearchRequest,
  query: WithSynonyms,
  qv: Float32Array | null,
  index: SearchIndex,
  profile: Float32Array | null,
  after: Pick<Cursor, 'upTo' | 'vectorsAsOf'> | undefined,
): RankRequest {
  return {
    query: query.query,
    // Names first compares names with the query as asked: the synonyms' words go before `query`.
    asked: req.query,
    phrases: query.phrases,
    alternatives: query.alternatives,
    mode: req.mode,
    filter: req.filter,
    queryVector: qv && qv.length === index.dims ? qv : null,
    profile,
    includeInactive: req.includeInactive ?? false,
    upTo: after?.upTo,
    vectorsAsOf: after?.vectorsAsOf,
  };
}

/** What a page's hits gain besides the item: highlighting. */
function hitExtras(req: SearchRequest, query: WithSynonyms, index: SearchIndex, delta: PreparedDelta): (doc: SearchDoc) => { highlight?: ReturnType<typeof highlightDoc> } {
  if (!req.highlight) return () => ({});
  const terms = new Set(index.expand(query.query, delta).keys());
  const phrases = query.phrases.map(phraseTerms);
  const tags = req.highlight;
  const scanned = snippetScan(req.limit);
  // A query of stop words only: the names that begin with its words are its matches (ranking's query, synonyms and all).
  const opening = stopWordsAsked(query.query);
  return (doc) => ({ highlight: highlightDoc(doc, withPhrasesHeld(terms, doc, phrases, scanned), tags, scanned, opening) });
}

/** Facets, when asked for: a counter for ranking's visitor and the answer's `facets`. */
const facetCounter = (req: SearchRequest) => (req.facets?.length ? new SearchFacets(req.facets, req.disjunctive ?? []) : undefined);

/**
 * The disjunctive facets of a search ranked as `request`: each counted over the matches of the
 * same ranking with its own filter instead (every match visited, as the search's own facets are).
 */
function countApart(facets: SearchFacets | undefined, index: SearchIndex, delta: PreparedDelta, request: RankRequest): void {
  facets?.countApart({ index, delta }, (filter, visit) => {
    rank(index, delta, { ...request, filter }, { limit: 1, after: undefined, visit });
  });
}

/** The present stage of a search: a served hit as the answer shows it. */
function presentHits(req: SearchRequest, hits: readonly { doc: SearchDoc; score: number; explain?: Explanation }[], extras: ReturnType<typeof hitExtras>, experiment: ServedExperiment) {
  return hits.map((h) => ({ ...itemResource(h.doc), score: presentScore(h.score), ...(req.explain ? { explain: presentExplanation(h, experiment) } : {}), ...extras(h.doc) }));
}

/**
 * A page's hits whose items the table still holds (active, unless the request includes inactive
 * ones), when the view was served before its read of the changes since the build ended
 * (`SearchView.behind`): its build may still hold items deleted or deactivated since, which a
 * search never shows. The page may then hold fewer hits than asked for; its cursor is its last
 * ranked hit's as usual. Otherwise the hits as they are (no read).
 */
async function stillLive<T extends { doc: SearchDoc }>(req: SearchRequest, view: SearchView, hits: readonly T[]): Promise<readonly T[]> {
  if (!view.behind) return hits;
  const live = await view.current(hits.map((h) => h.doc.id));
  return hits.filter((_, i) => {
    const item = live[i];
    return item !== undefined && (req.includeInactive === true || item.active);
  });
}

/**
 * A search's answer around its page of hits, within ANSWER_BYTES (answer-size.ts): its facets
 * within FACET_BYTES, its hits within what the rest leaves. A page whose hits would take more ends
 * before the first that does not fit (one at least), `has_more` true and its cursor after the
 * last hit kept (`cutAfter(n)`: after the first n of `data`), so that the next page goes on from
 * there, nothing repeated or skipped. Until 2026-12-06 a page of 100 large items took up to 18 MB,
 * over Lambda's 6 MB: API Gateway's own 500.
 */
function answer<T>(data: T[], page: { hasMore: boolean; next: string | null; cutAfter: (n: number) => string }, total: number, experiment: ServedExperiment, facets: SearchFacets | undefined) {
  const counted = facets ? { facets: withinBytes(facets.result()) } : {};
  // The Platform list (the Core search handler wraps it in the Core envelope); `next` is null unless hasMore.
  const n = fittingBeside(data, { ...platformList([], { hasMore: page.hasMore, cursor: page.next }), total, experiment, ...counted });
  const cut = n < data.length;
  const listed = cut ? platformList(data.slice(0, n), { hasMore: true, cursor: page.cutAfter(n) }) : platformList(data, { hasMore: page.hasMore, cursor: page.next });
  return { ...listed, total, experiment, ...counted };
}

/**
 * A search sorted by a field: every match goes by (ranking's visitor) and the page after the
 * cursor is kept, in the field's order; the same build and delta page after page (the cursor
 * names the build, as relevance cursors do).
 */
async function sortedSearch(deps: SearchDeps, tenant: string, req: SearchRequest & { sort: SortSpec }, after: SortCursor | undefined, list: string | undefined) {
  const view = await acceptedView(deps, tenant, req, after?.builtAt);
  const { index, delta } = view;
  const query = queryOf(req, delta);
  const qv = req.mode === 'keyword' ? null : await queryVector(deps, index, synonymText(query), delta);
  const profile = req.user ? profileOf(index, delta, await userEvents(deps, tenant, req.user, PROFILE_EVENTS)) : null;
  const page = new SortedPage(req.sort, req.limit, after);
  const sorted = page.over({ index, delta });
  const facets = facetCounter(req);
  const counted = facets?.over({ index, delta });
  const visit = counted ? (key: number, score: number) => (sorted(key, score), counted(key)) : sorted;
  const request = rankRequest(req, query, qv, index, profile, undefined);
  const ranked = rank(index, delta, request, { limit: 1, after: undefined, visit });
  countApart(facets, index, delta, request);
  const slice = page.hits.slice(0, req.limit);
  const last = slice[slice.length - 1];
  const hasMore = page.hits.length > req.limit;
  const next = hasMore && last ? encodeSortCursor(req.sort, last, index.builtAt, list) : null;
  const live = await stillLive(req, view, slice);
  const cutAfter = (n: number) => encodeSortCursor(req.sort, live[n - 1] as (typeof live)[number], index.builtAt, list);
  return answer(presentHits(req, live, hitExtras(req, query, index, delta), null), { hasMore, next, cutAfter }, ranked.total, null, facets);
}

/**
 * With a context, the best matches its rules and rerank controls order, max(60, 3 × limit) (at
 * most 300); the matches after them follow (`orderAfter`), and pages are positions in that list
 * (the same pool page after page at one limit). Ranking a longer list costs every match's taste
 * boost and tail score (see `rank`).
 */
const contextPool = (limit: number) => Math.min(300, Math.max(60, 3 * limit));

/**
 * The popularity a context's list weighs (its controls' `popularity_weight`): on a later page, the
 * count its first page weighed (`Cursor.popularUpTo`: the tenant's latest events up to that id,
 * `trendingScoresAsOf`), else the container's (`trendingPopularity`), which its cursors then name
 * (unless it is a stored snapshot's, which names no event: the later pages of such a first page
 * weigh the count in hand, as before 2026-12-07). A later page whose count cannot be made again
 * (its read failed) weighs the container's too (logged), rather than failing.
 */
async function popularityOf(deps: SearchDeps, tenant: string, upTo: number | undefined): Promise<Popularity> {
  const now = () => trendingPopularity(deps.events, tenant, undefined, deps.popularSnapshots);
  if (upTo === undefined) return now();
  try {
    return { scores: await trendingScoresAsOf(deps.events, tenant, upTo), upTo };
  } catch (e) {
    logger.warn("popularity of a search's first page not counted again; weighing the count in hand", { tenant, error: String(e) });
    return now();
  }
}

/** How many of the user's latest events `exclude_seen` leaves out of a search. */
const SEEN_EVENTS = 100;

/**
 * A search naming a context: its best `contextPool` matches (relevance scaled so the best is 1)
 * go through the context's pipeline (shared/serving/pipeline.ts), and pages are positions in
 * the order that comes out, ranked on the same build page after page.
 */
async function plannedSearch(
  deps: SearchDeps,
  tenant: string,
  req: SearchRequest & { plan: ServingPlan },
  offset: number,
  builtAt: number | undefined,
  list: string | undefined,
  asOf: number | undefined,
  after: Pick<Cursor, 'upTo' | 'vectorsAsOf' | 'lastId' | 'version' | 'popularUpTo'> | undefined,
) {
  const view = await acceptedView(deps, tenant, req, builtAt);
  const { index, delta } = view;
  const query = queryOf(req, delta);
  const qv = req.mode === 'keyword' ? null : await queryVector(deps, index, synonymText(query), delta);
  const { controls } = req.plan;
  const needSeen = controls.exclude_seen === true && req.user !== undefined;
  // The user's latest events (the plan's read, when it has them: segments) make the taste and what
  // `exclude_seen` leaves out; on a later page, those up to the newest the first page read
  // (`asOf`): the events the user sent since (a click on a hit) move nothing across the positions.
  // On the first, those up to the newest the plan read, when it read some: the events its
  // segments were decided on are those later pages decide them on. Those an erasure of the user
  // covers, neither (the plan's read is without them too).
  const planned = req.plan.userEvents;
  const below = asOf !== undefined ? asOf + 1 : planned && !planned.all && planned.events[0] ? planned.events[0].id + 1 : undefined;
  const latest = (user: SearchUser, n: number) => latestFromPlan(req.plan, n, asOf === undefined ? undefined : below) ?? userEvents(deps, tenant, user, n, below);
  const [events, popular] = await Promise.all([
    req.user ? latest(req.user, needSeen ? SEEN_EVENTS : PROFILE_EVENTS) : [],
    controls.popularity_weight ? popularityOf(deps, tenant, after?.popularUpTo) : undefined,
  ]);
  const profile = req.user ? profileOf(index, delta, events, after?.vectorsAsOf) : null;
  const recent = needSeen ? events : [];
  const tasteAsOf = req.user ? (asOf ?? events[0]?.id ?? 0) : undefined;
  const facets = facetCounter(req);
  const rankRequested = rankRequest(req, query, qv, index, profile, after);
  const pool = contextPool(req.limit);
  // One more hit than asked when there are more matches.
  const ranked = rank(index, delta, rankRequested, { limit: pool, after: undefined, visit: facets?.over({ index, delta }) });
  countApart(facets, index, delta, rankRequested);
  // Relevance 1 is the best result names first did not lift (those it lifted stay above it, and
  // a plan's popularity, freshness and diversity weigh the others as when none is there).
  const lifted = (score: number) => ranked.namedAbove !== undefined && score > ranked.namedAbove;
  const top = (ranked.hits.find((h) => !lifted(h.score)) ?? ranked.hits[0])?.score ?? 0;
  const scale = top > 0 ? 1 / top : 1;
  const candidates = (hits: readonly { doc: SearchDoc; score: number }[]) => hits.map((h) => ({ id: h.doc.id, score: h.score * scale, doc: h.doc, ...(lifted(h.score) ? { lifted: true } : {}) }));
  const seen = new Set(recent.flatMap((e) => catalogItemId(e.item_id) ?? []));
  const experiment = experimentOf(req.plan.assignment);
  const helpers = {
    // As of when the list's first page was planned (rule windows, freshness), page after page.
    now: req.plan.at,
    depth: offset + req.limit,
    // The same candidates for diversity on every page, so that each page continues the one before.
    diversityPool: pool,
    seen: (id: number) => seen.has(id),
    ...(popular ? { popularity: (id: number) => popular.scores.get(id) ?? 0 } : {}),
    // With the vectors the first page compared (`Cursor.vectorsAsOf`): a vector saved between pages
    // moved diversity's choices across the positions (until 2026-12-07: hits repeated and skipped).
    similarity: after?.vectorsAsOf === undefined ? view.similarity : similarityIn(index, delta, after.vectorsAsOf),
  };
  let served = order(candidates(ranked.hits.slice(0, pool)), req.plan, helpers, experiment);
  // Past the pool, the matches in chunks of doubling size (as many as the pool, then twice that,
  // ...), each ordered by the plan's rules on its own and served after those before it: what is at
  // a position does not depend on how deep the page asking for it is (ordering whatever a page
  // reached at once let a deeper page's boosted matches move ahead of positions served already,
  // which the next page then repeated), so pages neither repeat nor skip. As deep as the page needs,
  // with one more to tell whether there is a next; never deeper than the matches: a cursor's
  // offset is the client's to send.
  let depth = pool;
  let more = ranked.hits.length > pool && offset < ranked.total;
  while (more && served.length <= offset + req.limit) {
    const next = 2 * depth;
    const deeper = rank(index, delta, rankRequested, { limit: next, after: undefined });
    served = [...served, ...orderAfter(served, candidates(deeper.hits.slice(depth, next)), req.plan, helpers, experiment)];
    more = deeper.hits.length > next;
    depth = next;
  }
  // After the cursor's last hit where it stands now: items taken out of the list before it since
  // the page before (deleted, read by this page's view and not by that one's) moved every position.
  // Not when that hit changed since: an edit moved it by itself, past hits served already.
  const at = after?.lastId === undefined ? -1 : served.findIndex((h) => h.id === after.lastId);
  const same = at >= 0 && (after?.version === undefined || hitVersion((served[at] as (typeof served)[number]).doc) === after.version);
  const start = same && at < offset ? at + 1 : offset;
  const slice = served.slice(start, start + req.limit);
  const hasMore = served.length > start + req.limit;
  const basis = { builtAt: index.builtAt, list, asOf: tasteAsOf, upTo: after?.upTo ?? largestItemId(index, delta), vectorsAsOf: after?.vectorsAsOf ?? view.vectorsAsOf };
  const cursorAfter = (n: number) => encodeOffsetCursor(start + n, basis, req.plan.at, (slice[n - 1] as (typeof slice)[number]).doc, popular?.upTo);
  const next = hasMore ? cursorAfter(slice.length) : null;
  const live = await stillLive(req, view, slice);
  // Cut after the n-th hit shown: the next page starts at the position after it in the list (past
  // the hits `stillLive` left out before it).
  const cutAfter = (n: number) => cursorAfter(slice.indexOf(live[n - 1] as (typeof live)[number]) + 1);
  return answer(presentHits(req, live, hitExtras(req, query, index, delta), experiment), { hasMore, next, cutAfter }, ranked.total, experiment, facets);
}

/**
 * The view a request ranks on (`pagedView`), once read: then tells the caller the search is
 * accepted (search analytics starts its writes) and yields once, so that those writes are sent
 * before ranking holds the thread: ranking is synchronous, and a write still being prepared when
 * it starts would only be sent after it. Measured on the local stack (100K catalog, one client):
 * the median wait for the write after ranking went from 1.2-1.4 ms to 0.1 ms; on AWS the write
 * would otherwise start a round trip late.
 */
async function acceptedView(deps: SearchDeps, tenant: string, req: SearchRequest, builtAt: number | undefined) {
  const view = await pagedView(deps, tenant, builtAt);
  if (req.accepted) {
    req.accepted();
    await nextTurn();
  }
  return view;
}

/**
 * A search by relevance: keyset pages, a cursor (score, id, build, and `list`: listDigest's) after
 * the last hit when more follow. A personalised list's cursor also names the newest of the user's
 * events its taste was made of: later pages make the taste of the events up to it, so the events
 * the user sends between pages (a click on a hit) do not move hits across the cursor.
 */
async function relevanceSearch(deps: SearchDeps, tenant: string, req: SearchRequest, after: Cursor | undefined, list: string | undefined) {
  const view = await acceptedView(deps, tenant, req, after?.builtAt);
  const { index, delta } = view;
  const query = queryOf(req, delta);
  const qv = req.mode === 'keyword' ? null : await queryVector(deps, index, synonymText(query), delta);
  const events = req.user ? await userEvents(deps, tenant, req.user, PROFILE_EVENTS, after?.asOf === undefined ? undefined : after.asOf + 1) : [];
  const asOf = req.user ? (after?.asOf ?? events[0]?.id ?? 0) : undefined;
  const profile = req.user ? profileOf(index, delta, events, after?.vectorsAsOf) : null;
  const facets = facetCounter(req);
  const request = rankRequest(req, query, qv, index, profile, after);
  const ranked = rank(index, delta, request, {
    limit: req.limit,
    after: after ? { score: after.score, id: after.id, ...(after.version === undefined ? {} : { version: after.version }), prev: after.prev, next: after.next } : undefined,
    visit: facets?.over({ index, delta }),
  });
  countApart(facets, index, delta, request);
  const slice = ranked.hits.slice(0, req.limit);
  const last = slice[slice.length - 1];
  const hasMore = ranked.hits.length > req.limit;
  const basis = { builtAt: index.builtAt, list, asOf, upTo: after?.upTo ?? largestItemId(index, delta), vectorsAsOf: after?.vectorsAsOf ?? view.vectorsAsOf };
  // A page of one hit names the hit after it (the next page's first) in the hit before's stead.
  const next = hasMore && last ? encodeCursor(last, basis, slice[slice.length - 2]?.doc, ranked.hits[req.limit]?.doc) : null;
  const live = await stillLive(req, view, slice);
  const cutAfter = (n: number) => encodeCursor(live[n - 1] as (typeof live)[number], basis, live[n - 2]?.doc, live[n]?.doc);
  return answer(presentHits(req, live, hitExtras(req, query, index, delta), null), { hasMore, next, cutAfter }, ranked.total, null, facets);
}

/**
 * The digest of what orders a relevance list (`SearchRequest.listOf`) a cursor carries, if the caller
 * said, with the tenant's name: another tenant's cursor of the same search is refused, not read as a
 * position in this tenant's list.
 */
const listDigest = (tenant: string, req: SearchRequest): string | undefined => (req.listOf === undefined ? undefined : cursorDigest(JSON.stringify([tenant, req.listOf]), 12));

/**
 * Ranks a tenant's catalog for one request and returns one page of item resources with scores.
 * `madeWith`: what a cursor of another search is told to do (see `sameList`).
 */
export async function runSearch(deps: SearchDeps, tenant: string, req: SearchRequest, cursorField = 'starting_after', madeWith?: string) {
  // A cursor of another list: its page would repeat and skip hits (every kind of cursor names its list).
  const list = listDigest(tenant, req);
  // A cursor of a sorted list goes only with the same sort; other cursors only without one.
  const sortAfter = req.cursor ? decodeSortCursor(req.cursor, req.sort, cursorField, list) : undefined;
  if (req.sort && !req.plan) {
    if (req.cursor && !sortAfter) throw new InvalidInput('Invalid cursor.', { [cursorField]: ['This cursor is from a search without sort; send it without sort.'] });
    return sortedSearch(deps, tenant, { ...req, sort: req.sort }, sortAfter, list);
  }
  const after = req.cursor ? decodeCursor(req.cursor, cursorField) : undefined;
  if (req.plan) {
    if (after && after.offset === undefined) throw new InvalidInput('Invalid cursor.', { [cursorField]: ['This cursor is from a search without this context.'] });
    sameList(after?.list, list, cursorField, madeWith);
    return plannedSearch(deps, tenant, { ...req, plan: req.plan }, after?.offset ?? 0, after?.builtAt, list, after?.asOf, after);
  }
  if (after?.offset !== undefined) {
    // Platform item search (its cursor field is `cursor`) takes no context: the cursor is a Core search's.
    const why =
      cursorField === 'starting_after' ? 'This cursor is from a search with a context; send the same context_id.' : 'This cursor is from a Core search with a context, not from this item search.';
    throw new InvalidInput('Invalid cursor.', { [cursorField]: [why] });
  }
  sameList(after?.list, list, cursorField, madeWith);
  return relevanceSearch(deps, tenant, req, after, list);
}

/**
 * The Platform item search (the console's): hybrid, inactive items included, with no context,
 * so no experiment to name; its cursor parameter is `cursor`. Its GET (`via`) takes no filters:
 * a cursor of another search is told to send the query, a filtered search's paging on by POST
 * (until 2026-12-06 it was told to send the filters too, which the GET refuses as unknown).
 */
export async function platformItemSearch(
  deps: SearchDeps,
  tenant: string,
  req: Pick<SearchRequest, 'query' | 'limit' | 'cursor'> & { filters?: FilterClause[] | undefined },
  via: 'GET' | 'POST' = 'POST',
) {
  const { filters, ...rest } = req;
  // Its cursors name their list (query and filters), as Core's do: a cursor of another search is a 400, not that list's page.
  const listOf = canonicalJson(['platform', req.query, filters?.length ? filters : null]);
  const { experiment: _none, ...answer } = await runSearch(
    deps,
    tenant,
    { ...rest, filter: filters?.length ? platformFilter(filters) : NO_FILTER, mode: 'hybrid', includeInactive: true, listOf },
    'cursor',
    via === 'GET' ? 'send the query it was made with (a cursor of a search with filters pages on by POST /api/items/search).' : undefined,
  );
  return answer;
}
