import type { EventStore, ItemStore, ItemWithVector, RecentEvent } from '../domain/types.ts';
import { itemResource } from '../domain/present.ts';
import { ValidationError } from '../errors.ts';
import { FreshRead } from '../fresh-read.ts';
import type { JobQueue } from '../jobs.ts';
import { logger } from '../observability.ts';
import type { BlobStore } from '../blob.ts';
import { unpackIndex } from './artifact.ts';
import { HashingEmbedding, normalize, type EmbeddingProvider } from './embedding.ts';
import { addDocVectors, idfOf, SearchIndex, type DocFilter, type Hit, type SearchDoc, type SearchMode } from './engine.ts';
import { PreparedDelta, rank } from './rank.ts';
import { presentExplain, runPipeline } from '../control/pipeline.ts';
import { latestFromPlan, type ServingPlan } from '../control/serving.ts';
import { trendingScores } from '../recs/trending.ts';
import { similarityIn } from './vectors.ts';
import { FacetCounter } from './facets.ts';
import { highlightDoc, type HighlightTags } from './highlight.ts';
import { decodeSortCursor, encodeSortCursor, SortedPage, type SortCursor, type SortSpec } from './sort.ts';
import { applySynonyms, type SynonymRule } from './synonyms.ts';

/** Where a tenant's current index artifact is: the builder writes it, searchers read it. */
export const indexPointerKey = (tenant: string) => `search/${tenant}/current.json`;
export const indexArtifactKey = (tenant: string, builtAt: number) => `search/${tenant}/index-${builtAt}.bin`;

export interface IndexPointer {
  key: string;
  builtAt: number;
  items: number;
  /**
   * Earlier builds whose artifacts are still stored, and when a newer build replaced each: search
   * cursors ranked on them page on through them; the builder deletes them once `retainSeconds`
   * have passed since.
   */
  superseded?: { key: string; builtAt: number; replacedAt: number }[];
}

export interface SearchDeps {
  items: ItemStore;
  events: EventStore;
  blobs: BlobStore;
  embedder: EmbeddingProvider;
}

export const SEARCH_SETTINGS = {
  /** How often a container looks for a newer index artifact. */
  pointerCheckMs: Number(process.env.INDEX_CHECK_SECONDS ?? 30) * 1000,
  /**
   * How long a container may reuse the delta it read. 0 (default): every search reads the
   * changes since the build, so a deactivated or deleted item is gone from the very next search.
   */
  deltaTtlMs: Number(process.env.SEARCH_DELTA_TTL_MS ?? 0),
  /** Above this many changes since the build, the maintenance sweep requests a rebuild. */
  rebuildAfterChanges: Number(process.env.INDEX_REBUILD_AFTER_CHANGES ?? 500),
  /** Changes older than this are folded into a new index by the sweep. */
  maxIndexAgeSeconds: Number(process.env.INDEX_MAX_AGE_SECONDS ?? 600),
  /** Changes read per page when bringing the delta up to date (it pages on until complete). */
  deltaPage: 5000,
  /** Clock skew allowance when reading changes since the build. */
  skewSeconds: 2,
  /**
   * How long a container keeps the index build a cursor was ranked on once a newer build serves
   * (since the last page that asked for it): later pages of that result list rank on it too.
   */
  pinnedTtlMs: Number(process.env.SEARCH_CURSOR_PIN_SECONDS ?? 300) * 1000,
  /**
   * How long a replaced build's artifact stays stored (for cursors ranked on it); the next build
   * after that deletes it, so storage holds a few builds, not one per rebuild forever.
   */
  retainSeconds: Number(process.env.INDEX_RETAIN_SECONDS ?? 3600),
};

interface TenantState {
  index: SearchIndex;
  pointerCheckedAt: number;
  delta: PreparedDelta;
  /** When the delta was last brought up to date, and the latest change time it has seen. */
  readAt: number;
  latest: number;
  /** Brings the delta up to date; concurrent searches share a read that began after they arrived. */
  refresh: FreshRead<void>;
  /** Keys of the changes inside the clock-skew margin already applied (re-listed, not re-read). */
  seen: Set<string>;
}

const states = new Map<string, TenantState>();
/** A pointer check (and index load) in flight per tenant: concurrent requests share it. */
const loading = new Map<string, Promise<TenantState>>();
/**
 * Per tenant, the older builds that cursors still page through (at most PINNED_PER_TENANT, the
 * least recently used let go first), loaded when a later page asks for one and kept while pages
 * do: memory for another index only while someone pages across a build. A build found missing is
 * remembered as such for a while (`state` settles to undefined), so its cursors do not look again
 * on every page.
 */
interface PinnedBuild {
  state: Promise<TenantState | undefined>;
  usedAt: number;
  /** Settled: whether the build was found missing (undefined while it loads). */
  missing?: boolean;
}
const pinned = new Map<string, Map<number, PinnedBuild>>();
const PINNED_PER_TENANT = 2;
/** Builds found missing remembered per tenant (each costs a blob read to find out). */
const MISSING_PER_TENANT = 16;
const queryVectors = new Map<string, Float32Array>();

const toDoc = (i: ItemWithVector): SearchDoc => ({ ...i, vector: i.vector });

async function loadIndex(deps: SearchDeps, tenant: string, current: SearchIndex | undefined): Promise<SearchIndex> {
  const raw = await deps.blobs.get(indexPointerKey(tenant));
  if (!raw) return current ?? emptyIndex(deps);
  const pointer = JSON.parse(new TextDecoder().decode(raw)) as IndexPointer;
  if (current && current.builtAt === pointer.builtAt) return current;
  return (await loadArtifact(deps, tenant, pointer.key)) ?? current ?? emptyIndex(deps);
}

/** The index of a tenant with no build yet (`builtAt` 0). */
const emptyIndex = (deps: SearchDeps) => SearchIndex.build([], deps.embedder.dimensions, 0);

/** The index stored under `key`, or undefined when there is none. */
async function loadArtifact(deps: SearchDeps, tenant: string, key: string): Promise<SearchIndex | undefined> {
  const bytes = await deps.blobs.get(key);
  if (!bytes) return undefined;
  const parts = unpackIndex(bytes);
  if (parts.dims !== deps.embedder.dimensions) {
    logger.warn('index dimensions differ from the embedding provider; vectors ignored until rebuilt', { tenant, index: parts.dims, provider: deps.embedder.dimensions });
  }
  return new SearchIndex(parts);
}

/** Brings the delta up to date with the changes committed since the previous read (with a clock-skew margin). */
async function readDelta(items: ItemStore, tenant: string, st: TenantState): Promise<void> {
  const startedAt = Date.now();
  // Anything committed before the previous read began was read then; anything after carries a
  // time no earlier than that start minus the clock-skew margin. So the window to look at again
  // starts there, not at the latest change seen, which may be long settled.
  const since = Math.max(0, Math.max(st.latest, Math.floor(st.readAt / 1000)) - SEARCH_SETTINGS.skewSeconds);
  // The changes inside the skew margin were mostly applied already: list their keys (cheap) and
  // read items only from the first key not seen yet.
  const listed = await items.changeKeysSince(tenant, since);
  const firstNew = listed.findIndex((k) => !st.seen.has(k.state));
  if (firstNew < 0) {
    st.readAt = startedAt;
    return;
  }
  // Page on from the last change read, not from a time: a burst of more changes than a page
  // inside the skew margin would otherwise be read again and again.
  let cursor: string | undefined = firstNew > 0 ? listed[firstNew - 1]?.cursor : undefined;
  let latest = st.latest;
  do {
    const changes = await items.changedSince(tenant, since, SEARCH_SETTINGS.deltaPage, cursor);
    // Changes the build already holds (read again inside the clock-skew margin of its start) stay
    // out of the delta: there they would hide the index's copy and be scored on every request.
    st.delta.apply(changes.items.map(toDoc).filter((d) => !st.index.holds(d)), changes.deleted.map((d) => d.id));
    for (const i of changes.items) latest = Math.max(latest, i.updated_at, i.embedding_updated_at ?? 0);
    for (const d of changes.deleted) latest = Math.max(latest, d.at);
    cursor = changes.cursor;
  } while (cursor);
  st.latest = latest;
  // Only once applied: a failed read leaves them unseen, to be read again.
  st.seen = new Set(listed.map((k) => k.state));
  // A delta that keeps growing is folded into a new build by the maintenance sweep (every
  // minute), not from here: searches send no messages, so they need no queue at all.
  st.readAt = startedAt;
}

/** The tenant's state with an index no older than the pointer check interval. */
async function stateOf(deps: SearchDeps, tenant: string): Promise<TenantState> {
  const st = states.get(tenant);
  if (st && Date.now() - st.pointerCheckedAt <= SEARCH_SETTINGS.pointerCheckMs) return st;
  let p = loading.get(tenant);
  if (!p) {
    p = (async () => {
      const index = await loadIndex(deps, tenant, st?.index);
      const checkedAt = Date.now();
      if (st && st.index === index) {
        st.pointerCheckedAt = checkedAt;
        return st;
      }
      const fresh = newState(deps, tenant, index, checkedAt);
      states.set(tenant, fresh);
      return fresh;
    })().finally(() => loading.delete(tenant));
    loading.set(tenant, p);
  }
  return p;
}

function newState(deps: SearchDeps, tenant: string, index: SearchIndex, checkedAt: number): TenantState {
  const st: TenantState = { index, pointerCheckedAt: checkedAt, delta: new PreparedDelta(undefined, index), readAt: 0, latest: index.builtAt, refresh: new FreshRead(() => readDelta(deps.items, tenant, st)), seen: new Set() };
  return st;
}

/**
 * The state of the build a cursor was ranked on, when it is not the current one (this container
 * has moved on since, or the cursor came from another container): loaded from its artifact once
 * and kept while pages ask for it. Undefined when that build is gone or cannot be read now: the
 * page is ranked on the current build then.
 */
async function pinnedState(deps: SearchDeps, tenant: string, builtAt: number): Promise<TenantState | undefined> {
  const now = Date.now();
  let builds = pinned.get(tenant);
  if (!builds) pinned.set(tenant, (builds = new Map()));
  let p = builds.get(builtAt);
  if (!p) {
    const tenantBuilds = builds;
    const entry: PinnedBuild = { state: Promise.resolve(undefined), usedAt: now };
    /** Lets go of the least recently used of these builds (other than this one) beyond the first `keep`. */
    const keepNewest = (which: (e: PinnedBuild) => boolean, keep: number) => {
      const some = [...tenantBuilds].filter(([b, e]) => b !== builtAt && which(e)).sort(([, x], [, y]) => y.usedAt - x.usedAt);
      for (const [b] of some.slice(keep)) tenantBuilds.delete(b);
    };
    const current = () => tenantBuilds.get(builtAt) === entry;
    entry.state = (async () => {
      let index: SearchIndex | undefined;
      try {
        index = builtAt === 0 ? emptyIndex(deps) : await loadArtifact(deps, tenant, indexArtifactKey(tenant, builtAt));
      } catch (e) {
        // Not known to be missing: not remembered, the next page tries again.
        logger.warn('could not load the index build a cursor was ranked on; ranking on the current one', { tenant, builtAt, error: String(e) });
        if (current()) tenantBuilds.delete(builtAt);
        return undefined;
      }
      if (!index || index.builtAt !== builtAt) {
        entry.missing = true;
        // Builds found missing hold no memory, but a client can name any number of them.
        keepNewest((e) => e.missing === true, MISSING_PER_TENANT - 1);
        return undefined;
      }
      // Loaded: over the limit, the least recently used other loaded build is let go.
      if (current()) keepNewest((e) => e.missing === false, PINNED_PER_TENANT - 1);
      entry.missing = false;
      return newState(deps, tenant, index, now);
    })();
    p = entry;
    builds.set(builtAt, entry);
  }
  p.usedAt = now;
  return p.state;
}

/** Lets go of a tenant's pinned builds (and builds found missing) once no page has asked for them for a while. */
function dropStalePins(tenant: string): void {
  const builds = pinned.get(tenant);
  if (!builds) return;
  const now = Date.now();
  for (const [b, e] of builds) if (now - e.usedAt > SEARCH_SETTINGS.pinnedTtlMs) builds.delete(b);
  if (builds.size === 0) pinned.delete(tenant);
}

/** Brings a state's delta up to date (unless the container may reuse what it read). */
async function refreshed(st: TenantState): Promise<{ index: SearchIndex; delta: PreparedDelta }> {
  if (st.readAt === 0 || Date.now() - st.readAt >= SEARCH_SETTINGS.deltaTtlMs) await st.refresh.get();
  return { index: st.index, delta: st.delta };
}

/**
 * The tenant's index (loaded once per container, refreshed when a newer build appears) and its
 * delta: the changes since the build, brought up to date for each request by reading only the
 * changes committed since the previous read.
 */
export async function tenantView(deps: SearchDeps, tenant: string): Promise<{ index: SearchIndex; delta: PreparedDelta }> {
  dropStalePins(tenant);
  return refreshed(await stateOf(deps, tenant));
}

/**
 * The view a later page of a result list is ranked on: the build its first page was ranked on
 * (scores depend on the index's statistics, and a cursor is a score), with the changes since it.
 */
async function pagedView(deps: SearchDeps, tenant: string, builtAt: number | undefined): Promise<{ index: SearchIndex; delta: PreparedDelta }> {
  dropStalePins(tenant);
  let st = await stateOf(deps, tenant);
  if (builtAt === undefined || st.index.builtAt === builtAt) return refreshed(st);
  if (builtAt > st.index.builtAt) {
    // Ranked on a build this container has not seen yet: look for it now.
    st.pointerCheckedAt = 0;
    st = await stateOf(deps, tenant);
    if (st.index.builtAt === builtAt) return refreshed(st);
  }
  const old = await pinnedState(deps, tenant, builtAt);
  return refreshed(old ?? st);
}

async function queryVector(deps: SearchDeps, index: SearchIndex, query: string, delta?: PreparedDelta): Promise<Float32Array | null> {
  if (!query.trim()) return null;
  // The local embedding weighs query words by their IDF (tf-idf instead of tf), over the build
  // and the delta together: the same vector before and after the next build.
  if (deps.embedder instanceof HashingEmbedding) {
    delta?.bind(index);
    const stats = delta ? delta.stats() : index.stats;
    return deps.embedder.embedOne(query, (t) => idfOf(stats.n, stats.df(t)));
  }
  const cached = queryVectors.get(query);
  if (cached) return cached;
  const [v] = await deps.embedder.embed([query]);
  if (queryVectors.size > 1000) queryVectors.clear();
  if (v) queryVectors.set(query, v);
  return v ?? null;
}

/** How many of the user's latest events make their taste. */
const PROFILE_EVENTS = 50;

/** The user's taste: recency-weighted mean vector of the items of their latest events (read, or `known`, newest first). */
async function profileOf(deps: SearchDeps, tenant: string, userId: string, index: SearchIndex, delta: PreparedDelta, known?: readonly RecentEvent[]): Promise<Float32Array | null> {
  const recent = known ? known.slice(0, PROFILE_EVENTS) : await deps.events.recentByUser(tenant, userId, PROFILE_EVENTS);
  if (recent.length === 0) return null;
  const sum = new Float32Array(index.dims);
  const docs = recent.map((e) => {
    const id = Number(e.item_id);
    const fresh = delta.get(id);
    const i = index.byId.get(id);
    return fresh?.vector ? fresh : i === undefined ? undefined : index.docs[i];
  });
  return addDocVectors(index, docs, recent.map((_, k) => 1 / (1 + k / 10)), sum) ? normalize(sum) : null;
}

/** A cursor: the last hit's score and id, and the index build the list is ranked on. */
interface Cursor {
  score: number;
  id: number;
  builtAt?: number | undefined;
  /** A cursor of a context's list: the position to go on from. */
  offset?: number;
}
const encodeCursor = (h: Hit, builtAt: number) => Buffer.from(JSON.stringify([h.score, h.doc.id, builtAt])).toString('base64url');
function decodeCursor(c: string, field: string): Cursor {
  try {
    const v = JSON.parse(Buffer.from(c, 'base64url').toString()) as unknown;
    if (Array.isArray(v) && v.length === 3 && v[0] === 'o' && Number.isSafeInteger(v[1]) && (v[1] as number) > 0 && Number.isSafeInteger(v[2]) && (v[2] as number) >= 0) {
      return { score: 0, id: 0, offset: v[1] as number, builtAt: v[2] as number };
    }
    // Cursors issued before they named their build (two elements) page on the current one.
    if (Array.isArray(v) && (v.length === 2 || v.length === 3) && typeof v[0] === 'number' && Number.isFinite(v[0]) && Number.isSafeInteger(v[1])) {
      const builtAt = v[2] as unknown;
      if (builtAt === undefined || (Number.isSafeInteger(builtAt) && (builtAt as number) >= 0)) return { score: v[0], id: v[1] as number, builtAt: builtAt as number | undefined };
    }
  } catch {
    /* fall through */
  }
  throw new ValidationError('Invalid cursor.', { [field]: ['Not a cursor returned by this API.'] });
}


export interface SearchRequest {
  query: string;
  mode: SearchMode;
  filter: DocFilter;
  limit: number;
  cursor?: string | undefined;
  userId?: string | undefined;
  includeInactive?: boolean;
  /** A context's plan (rules, rerank controls, experiment variant): the pipeline orders the best matches. */
  plan?: ServingPlan | undefined;
  /** Each hit says why it is there. */
  explain?: boolean | undefined;
  /** Metadata keys counted over every match (the answer's `facets`). */
  facets?: readonly string[] | undefined;
  /** Each hit's name and a snippet of its description with the matched words marked by these tags. */
  highlight?: HighlightTags | undefined;
  /** A numeric field's order instead of relevance (not with a plan: its pipeline orders). */
  sort?: SortSpec | undefined;
  /** The tenant's synonym sets, applied to the query before ranking. */
  synonyms?: readonly SynonymRule[] | undefined;
  /** Called once the request is valid (its cursor too), before ranking: search analytics records it meanwhile. */
  accepted?: (() => void) | undefined;
}

/*
 * Presentation of a search (facets, highlighting, sort by a field, synonyms): shared/search/
 * facets.ts, highlight.ts, sort.ts and synonyms.ts; ranking hands every match to `visit`.
 */

/** The query ranking sees: the request's, with the words of its synonyms the vocabulary (index or delta) holds. */
function queryOf(req: SearchRequest, index: SearchIndex, delta: PreparedDelta): string {
  return req.synonyms?.length ? applySynonyms(req.query, req.synonyms, (t) => index.has(t) || delta.terms.has(t)) : req.query;
}

/** What a page's hits gain besides the item: highlighting. */
function hitExtras(req: SearchRequest, query: string, index: SearchIndex, delta: PreparedDelta): (doc: SearchDoc) => { highlight?: ReturnType<typeof highlightDoc> } {
  if (!req.highlight) return () => ({});
  const terms = new Set(index.expand(query, delta).keys());
  const tags = req.highlight;
  return (doc) => ({ highlight: highlightDoc(doc, terms, tags) });
}

/** Facets, when asked for: a counter for ranking's visitor and the answer's `facets`. */
const facetCounter = (req: SearchRequest) => (req.facets?.length ? new FacetCounter(req.facets) : undefined);

/**
 * A search sorted by a field: every match goes by (ranking's visitor) and the page after the
 * cursor is kept, in the field's order; the same build and delta page after page (the cursor
 * names the build, as relevance cursors do).
 */
async function sortedSearch(deps: SearchDeps, tenant: string, req: SearchRequest & { sort: SortSpec }, after: SortCursor | undefined) {
  const { index, delta } = await pagedView(deps, tenant, after?.builtAt);
  const query = queryOf(req, index, delta);
  const qv = req.mode === 'keyword' ? null : await queryVector(deps, index, query, delta);
  const profile = req.userId ? await profileOf(deps, tenant, req.userId, index, delta) : null;
  const page = new SortedPage(req.sort, req.limit, after);
  const facets = facetCounter(req);
  const visit = facets ? (d: SearchDoc, score: number) => (page.visit(d, score), facets.visit(d)) : page.visit;
  const ranked = rank(
    index,
    delta,
    { query, mode: req.mode, filter: req.filter, queryVector: qv && qv.length === index.dims ? qv : null, profile, includeInactive: req.includeInactive ?? false },
    { limit: 1, after: undefined, visit },
  );
  const extras = hitExtras(req, query, index, delta);
  const slice = page.hits.slice(0, req.limit);
  const hasMore = page.hits.length > req.limit;
  const last = slice[slice.length - 1];
  return {
    data: slice.map((h) => {
      const score = Number(h.score.toFixed(6));
      return { ...itemResource(h.doc), score, ...(req.explain ? { explain: { base_score: score, rules: [], score_after_rules: score, rerank: [], final_score: score, experiment: null } } : {}), ...extras(h.doc) };
    }),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeSortCursor(req.sort, last, index.builtAt) : null,
    total: ranked.total,
    experiment: null,
    ...(facets ? { facets: facets.result() } : {}),
  };
}

/**
 * With a context, the best matches its rules and rerank controls order, max(60, 3 × limit) (at
 * most 300): its pages page through them (the same pool page after page at one limit). Ranking
 * a longer list costs every match's taste boost and tail score (see `rank`).
 */
const contextPool = (limit: number) => Math.min(300, Math.max(60, 3 * limit));

/** A cursor into a list a context ordered: the position after the last hit, and the build it was ranked on. */
const encodeOffsetCursor = (offset: number, builtAt: number) => Buffer.from(JSON.stringify(['o', offset, builtAt])).toString('base64url');

/**
 * A search naming a context: its best `contextPool` matches (relevance scaled so the best is 1)
 * go through the context's pipeline (shared/control/pipeline.ts), and pages are positions in
 * the order that comes out, ranked on the same build page after page.
 */
async function plannedSearch(deps: SearchDeps, tenant: string, req: SearchRequest & { plan: ServingPlan }, offset: number, builtAt: number | undefined) {
  const { index, delta } = await pagedView(deps, tenant, builtAt);
  const query = queryOf(req, index, delta);
  const qv = req.mode === 'keyword' ? null : await queryVector(deps, index, query, delta);
  const { controls } = req.plan;
  const needSeen = controls.exclude_seen === true && req.userId !== undefined;
  // The user's latest events, when the plan read them already (segments), serve the taste and `exclude_seen`.
  const [profile, recent, popular] = await Promise.all([
    req.userId ? profileOf(deps, tenant, req.userId, index, delta, latestFromPlan(req.plan, PROFILE_EVENTS)) : null,
    needSeen ? (latestFromPlan(req.plan, SEEN_EVENTS) ?? deps.events.recentByUser(tenant, req.userId as string, SEEN_EVENTS)) : [],
    controls.popularity_weight ? trendingScores(deps.events, tenant) : undefined,
  ]);
  const facets = facetCounter(req);
  const ranked = rank(
    index,
    delta,
    { query, mode: req.mode, filter: req.filter, queryVector: qv && qv.length === index.dims ? qv : null, profile, includeInactive: req.includeInactive ?? false },
    { limit: contextPool(req.limit), after: undefined, visit: facets?.visit },
  );
  const top = ranked.hits[0]?.score ?? 0;
  const scale = top > 0 ? 1 / top : 1;
  const seen = new Set(recent.map((e) => Number(e.item_id)));
  const a = req.plan.assignment;
  const experiment = a ? { id: a.experiment.id, variant: a.variant } : null;
  const served = runPipeline(
    ranked.hits.slice(0, contextPool(req.limit)).map((h) => ({ id: h.doc.id, score: h.score * scale, doc: h.doc })),
    req.plan.rules,
    controls,
    {
      now: Math.floor(Date.now() / 1000),
      depth: offset + req.limit,
      seen: (id) => seen.has(id),
      ...(popular ? { popularity: (id: number) => popular.get(id) ?? 0 } : {}),
      similarity: similarityIn(index, delta),
    },
    experiment,
  );
  const slice = served.slice(offset, offset + req.limit);
  const hasMore = served.length > offset + req.limit;
  const extras = hitExtras(req, query, index, delta);
  return {
    data: slice.map((h) => ({ ...itemResource(h.doc), score: Number(h.score.toFixed(6)), ...(req.explain ? { explain: presentExplain(h.explain) } : {}), ...extras(h.doc) })),
    has_more: hasMore,
    next_cursor: hasMore ? encodeOffsetCursor(offset + req.limit, index.builtAt) : null,
    total: ranked.total,
    experiment,
    ...(facets ? { facets: facets.result() } : {}),
  };
}

/** How many of the user's latest events `exclude_seen` leaves out of a search. */
const SEEN_EVENTS = 100;

/** Ranks a tenant's catalog for one request and returns one page of item resources with scores. */
export async function runSearch(deps: SearchDeps, tenant: string, req: SearchRequest, cursorField = 'starting_after') {
  // A cursor of a sorted list goes only with the same sort; other cursors only without one.
  const sortAfter = req.cursor ? decodeSortCursor(req.cursor, req.sort, cursorField) : undefined;
  if (req.sort && !req.plan) {
    if (req.cursor && !sortAfter) throw new ValidationError('Invalid cursor.', { [cursorField]: ['This cursor is from a search without sort; send it without sort.'] });
    req.accepted?.();
    return sortedSearch(deps, tenant, { ...req, sort: req.sort }, sortAfter);
  }
  const after = req.cursor ? decodeCursor(req.cursor, cursorField) : undefined;
  if (req.plan) {
    if (after && after.offset === undefined) throw new ValidationError('Invalid cursor.', { [cursorField]: ['This cursor is from a search without this context.'] });
    req.accepted?.();
    return plannedSearch(deps, tenant, { ...req, plan: req.plan }, after?.offset ?? 0, after?.builtAt);
  }
  if (after?.offset !== undefined) throw new ValidationError('Invalid cursor.', { [cursorField]: ['This cursor is from a search with a context; send the same context_id.'] });
  req.accepted?.();
  const { index, delta } = await pagedView(deps, tenant, after?.builtAt);
  const query = queryOf(req, index, delta);
  const qv = req.mode === 'keyword' ? null : await queryVector(deps, index, query, delta);
  const profile = req.userId ? await profileOf(deps, tenant, req.userId, index, delta) : null;
  const facets = facetCounter(req);
  const ranked = rank(
    index,
    delta,
    { query, mode: req.mode, filter: req.filter, queryVector: qv && qv.length === index.dims ? qv : null, profile, includeInactive: req.includeInactive ?? false },
    { limit: req.limit, after: after ? { score: after.score, id: after.id } : undefined, visit: facets?.visit },
  );
  // Keyset pagination: the page, and a cursor (score, id, build) after its last hit when more follow.
  const slice = ranked.hits.slice(0, req.limit);
  const hasMore = ranked.hits.length > req.limit;
  const last = slice[slice.length - 1];
  const extras = hitExtras(req, query, index, delta);
  return {
    data: slice.map((h) => {
      const score = Number(h.score.toFixed(6));
      return { ...itemResource(h.doc), score, ...(req.explain ? { explain: { base_score: score, rules: [], score_after_rules: score, rerank: [], final_score: score, experiment: null } } : {}), ...extras(h.doc) };
    }),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(last, index.builtAt) : null,
    total: ranked.total,
    experiment: null,
    ...(facets ? { facets: facets.result() } : {}),
  };
}

/**
 * `GET /api/search-index`: items searchable now, how many are embedded or waiting, and the latest
 * change search reflects. Counted from the index and a keys-only listing of the changes since its
 * build, never from the delta's items: during a bulk import those changes can be the whole
 * catalog, and a status call reads no item data.
 */
export async function indexStatus(deps: SearchDeps, tenant: string) {
  const { index } = await stateOf(deps, tenant);
  const since = Math.max(0, index.builtAt - SEARCH_SETTINGS.skewSeconds);
  const [listed, pending] = await Promise.all([deps.items.changeKeysSince(tenant, since), deps.items.pendingCount(tenant)]);
  const changed = new Map(listed.map((c) => [c.id, c]));
  let items = index.docs.length;
  let latest = index.builtAt;
  for (const c of changed.values()) {
    if (index.byId.has(c.id)) items -= 1;
    if (!c.deleted) items += 1;
    latest = Math.max(latest, c.at);
  }
  return {
    items,
    embedded: Math.max(0, items - pending),
    pending,
    updated_at: latest || null,
    index_built_at: index.builtAt || null,
    changes_since_build: changed.size,
  };
}

/** Asks the embedding worker for a new index build now (the sweep does it on its own schedule). */
export async function requestIndexBuild(queue: JobQueue, tenant: string) {
  const requested_at = Math.floor(Date.now() / 1000);
  await queue.send('embedding', [{ type: 'build-index', tenant, requested_at }]);
  return { status: 'Queued', requested_at };
}
