/**
 * A tenant's view of its catalog for search: the current index build (loaded once per container
 * from the index store, replaced when a newer build appears) and its delta, brought up to date
 * for each request by reading only the changes committed since the previous read; and the older
 * builds cursors were ranked on, while their pages are asked for.
 */
import { nowMs } from '../clock.ts';
import { nextTurn, SharedCalls, settledWithin } from '../concurrency.ts';
import type { EventStore, ItemChanges, ItemStore, ItemWithVector } from '../domain/types.ts';
import { FreshRead } from '../fresh-read.ts';
import { Lru } from '../lru.ts';
import { logger } from '../observability.ts';
import type { BlobStore } from '../blob.ts';
import { PreparedDelta } from './delta.ts';
import type { EmbeddingProvider } from './embedding.ts';
import type { SearchIndex } from './engine.ts';
import type { PopularitySnapshots } from '../recs/trending.ts';
import { emptyIndex, loadBuild, loadBuildAt, readPointer, UnreadableBuild } from './index-store.ts';
import { SEARCH_SETTINGS } from './settings.ts';
import type { SearchDoc } from './types.ts';
import { SearchView } from './catalog.ts';

export interface SearchDeps {
  items: ItemStore;
  events: EventStore;
  blobs: BlobStore;
  embedder: EmbeddingProvider;
  /** Tenants' stored popularity counts (a context's popularity weight): read instead of counted by a container with none. */
  popularSnapshots?: PopularitySnapshots;
}

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
  /** Whether the last search was served before this state's read ended (`refreshed`: logged once each time it falls behind). */
  behind: boolean;
}

/**
 * Cache: each tenant's current build and delta, the least recently served first. Bound: what
 * `SEARCH_SETTINGS.memoryBytes` holds by `heldBytes` (`fitBudget`), and always the tenant being
 * served.
 */
const states = new Map<string, TenantState>();
/** A pointer check (and index load) in flight per tenant: concurrent requests share it. Bound: one per tenant, removed when settled. */
const loading = new SharedCalls<string, TenantState>();
/**
 * Per tenant, the older builds that cursors still page through (at most PINNED_PER_TENANT, the
 * least recently used let go first), loaded when a later page asks for one and kept while pages
 * do: memory for another index only while someone pages across a build. A build found missing is
 * remembered as such for a while (`state` settles to undefined), so its cursors do not look again
 * on every page.
 */
interface PinnedBuild {
  state: Promise<TenantState | undefined>;
  /** The state, once loaded (what the memory budget counts). */
  loaded?: TenantState;
  usedAt: number;
  /** Settled: whether the build was found missing (undefined while it loads). */
  missing?: boolean;
}
/**
 * Cache: builds cursors were ranked on, per tenant. Bound: PINNED_PER_TENANT loaded and
 * MISSING_PER_TENANT missing builds per tenant, each let go after `pinnedTtlMs` unused.
 */
const pinned = new Map<string, Map<number, PinnedBuild>>();
const PINNED_PER_TENANT = 2;
/** Builds found missing remembered per tenant (each costs a blob read to find out). */
const MISSING_PER_TENANT = 16;

const toDoc = (i: ItemWithVector): SearchDoc => ({ ...i, vector: i.vector });

/**
 * Cache: per tenant, the key of the current build this code found it cannot read
 * (`UnreadableBuild`), so that each pointer check does not download it again while the pointer
 * names it. Bound: UNREADABLE_BUILDS_KEPT tenants, the least recently checked let go (until 2026-12-07 emptied
 * whole when full: every tenant's unreadable build downloaded again).
 */
export const UNREADABLE_BUILDS_KEPT = 1001;
const unreadable = new Lru<string, string>(UNREADABLE_BUILDS_KEPT);
const UNREADABLE = Symbol('unreadable');

/** The build under `key`; undefined when it is not stored, UNREADABLE when this code cannot read it (logged). */
async function readableBuild(deps: SearchDeps, tenant: string, key: string): Promise<SearchIndex | undefined | typeof UNREADABLE> {
  try {
    return await loadBuild(deps.blobs, tenant, key, deps.embedder.dimensions);
  } catch (e) {
    if (!(e instanceof UnreadableBuild)) throw e;
    logger.warn('an index build this code cannot read (made by a newer version of the service, or damaged); serving an older build and the changes since it', { tenant, key, error: e.message });
    return UNREADABLE;
  }
}

/**
 * The build the pointer names, loaded unless it is `current`'s. When this code cannot read it (a
 * newer version of the service published it while a deploy replaces this one's containers), the
 * container keeps serving the build it has, or, with none yet, the newest of the replaced builds
 * still stored (`superseded`) that it can read, else none: the changes since that build are read
 * beside it, so every item is searched either way, at the cost of a larger delta.
 */
async function loadIndex(deps: SearchDeps, tenant: string, current: SearchIndex | undefined): Promise<SearchIndex> {
  const empty = () => emptyIndex(deps.embedder.dimensions);
  const pointer = await readPointer(deps.blobs, tenant);
  if (!pointer) return current ?? empty();
  if (current && current.builtAt === pointer.builtAt) return current;
  if (unreadable.get(tenant) !== pointer.key) {
    const loaded = await readableBuild(deps, tenant, pointer.key);
    if (loaded !== UNREADABLE) return loaded ?? current ?? empty();
    unreadable.set(tenant, pointer.key);
  }
  if (current) return current;
  for (const older of [...(pointer.superseded ?? [])].sort((a, b) => b.builtAt - a.builtAt)) {
    const loaded = await readableBuild(deps, tenant, older.key);
    if (loaded && loaded !== UNREADABLE) return loaded;
  }
  return empty();
}

/**
 * Where a listing of the changes after time `after` (s) starts when an earlier one began at
 * `readAtMs` (0: none): anything committed before that listing began was seen by it, anything
 * after carries a time no earlier than its start less the clock-skew margin.
 */
export const rereadFrom = (after: number, readAtMs: number): number => Math.max(0, Math.max(after, Math.floor(readAtMs / 1000)) - SEARCH_SETTINGS.skewSeconds);

/**
 * Where a first read of the changes from `since` splits: the time from its first change to its
 * last cut into `firstReadRanges` equal parts (fewer when it spans fewer seconds; none when there
 * is no change, or all are in one second).
 */
async function cutsOf(items: ItemStore, tenant: string, since: number): Promise<number[]> {
  const span = await items.changeSpanSince(tenant, since);
  const cuts: number[] = [];
  if (span === undefined) return cuts;
  const parts = SEARCH_SETTINGS.firstReadRanges;
  for (let i = 1; i < parts; i++) {
    const at = Math.ceil(span.first + ((span.last - span.first) * i) / parts);
    if (at > (cuts[cuts.length - 1] ?? span.first)) cuts.push(at);
  }
  return cuts;
}

/** Brings the delta up to date with the changes committed since the previous read (with a clock-skew margin). */
async function readDelta(items: ItemStore, tenant: string, st: TenantState): Promise<void> {
  const startedAt = nowMs();
  // The window to look at again starts at the previous read's start less the skew margin
  // (`rereadFrom`), not at the latest change seen, which may be long settled.
  const since = rereadFrom(st.latest, st.readAt);
  // The changes inside the skew margin were mostly applied already: list their keys (cheap) and
  // read items only from the first key not seen yet. The first read of a state has seen nothing,
  // so it reads every change at once (listing them first would read the change index twice:
  // after a bulk import, every item of the catalog).
  const first = st.readAt === 0;
  const listed = first ? [] : await items.changeKeysSince(tenant, since, { besideReads: true });
  const firstNew = listed.findIndex((k) => !st.seen.has(k.state));
  if (!first && firstNew < 0) {
    st.readAt = startedAt;
    return;
  }
  let latest = st.latest;
  const read: string[] = [];
  const applyPage = async (changes: ItemChanges) => {
    if (first) read.push(...changes.states);
    // Changes the build already holds (read again inside the clock-skew margin of its start) stay
    // out of the delta: there they would hide the index's copy and be scored on every request.
    const docs = changes.items.map(toDoc).filter((d) => !st.index.holds(d));
    // A few changes at a time, the thread's other requests served in between: a page of a bulk
    // import (1 MB: about 430 items of 512 dimensions) took 40-80 ms to analyse, which held
    // every request of the container, whatever its tenant, as long, page after page.
    // So is the delta's inverted file when the changes make it due (from 20,000 vectors, and again
    // as they double: 0.4-1.9 s in one go), trained in turns after the chunk that does.
    const chunk = SEARCH_SETTINGS.applyChunk;
    let at = 0;
    for (; docs.length - at > chunk; at += chunk) {
      st.delta.apply(docs.slice(at, at + chunk), [], true);
      await st.delta.keepIvfInTurns();
      await nextTurn();
    }
    st.delta.apply(
      docs.slice(at),
      changes.deleted.map((d) => d.id),
      true,
    );
    await st.delta.keepIvfInTurns();
    for (const i of changes.items) latest = Math.max(latest, i.updated_at, i.embedding_updated_at ?? 0);
    for (const d of changes.deleted) latest = Math.max(latest, d.at);
  };
  // Pages are applied one after another, in the order they are handed over (`applying`).
  let applying: Promise<void> = Promise.resolve();
  const apply = (changes: ItemChanges) => {
    applying = applying.then(() => applyPage(changes));
  };
  /**
   * Reads the changes from time `from` (before `before`, when given) page by page, `onPage`
   * called in their order; each next page is asked for as soon as the one before it arrives, so
   * the database (or the network) works on it while that one is applied.
   */
  const readRange = async (from: number, before: number | undefined, cursor: string | undefined, onPage: (c: ItemChanges) => void): Promise<void> => {
    const pageAfter = (c: string | undefined): Promise<ItemChanges> => {
      const p = items.changedSince(tenant, from, SEARCH_SETTINGS.deltaPage, c, before);
      // Awaited on the next turn; a failure meanwhile is not unhandled.
      p.catch(() => undefined);
      return p;
    };
    let next: Promise<ItemChanges> | undefined = pageAfter(cursor);
    while (next) {
      const changes: ItemChanges = await next;
      next = changes.cursor ? pageAfter(changes.cursor) : undefined;
      onPage(changes);
    }
  };
  try {
    if (!first) {
      // Page on from the last change read, not from a time: a burst of more changes than a page
      // inside the skew margin would otherwise be read again and again.
      await readRange(since, undefined, firstNew > 0 ? listed[firstNew - 1]?.cursor : undefined, apply);
    } else {
      // A first read may be a whole catalog (a bulk import not built yet): its ranges in time are
      // read at once, so the database answers some while the pages of others are decoded and
      // applied. They are applied in order of time, a range's pages kept until the ranges before
      // it are in: an item that moved to a later range meanwhile ends as its later version.
      const cuts = await cutsOf(items, tenant, since);
      const starts = [since, ...cuts];
      const kept = starts.map((): ItemChanges[] => []);
      let current = 0;
      const reads = starts.map((from, i) => readRange(from, cuts[i], undefined, (c) => (i === current ? apply(c) : kept[i]?.push(c))));
      for (const r of reads) r.catch(() => undefined);
      for (let i = 0; i < reads.length; i++) {
        await reads[i];
        current = i + 1;
        for (const c of kept[current]?.splice(0) ?? []) apply(c);
      }
    }
  } finally {
    // Every page handed over is applied before the read ends, or fails: the next read (a failed
    // one's again) must not apply its pages while older ones still are.
    await applying.catch(() => undefined);
  }
  await applying;
  st.latest = latest;
  // Only once applied: a failed read leaves them unseen, to be read again. A first read marks
  // what it read (it listed nothing).
  st.seen = new Set(first ? read : listed.map((k) => k.state));
  // A delta that keeps growing is folded into a new build by the maintenance sweep (every
  // minute), not from here: searches send no messages, so they need no queue at all.
  st.readAt = startedAt;
  // An update moves its row in the change index: the old entry is deleted and the new one put,
  // two writes that DynamoDB propagates to the index asynchronously (DynamoDB Local, and the
  // local stack's dynalite, apply them at once: local/dynalite-indexes.mjs), so a read on AWS
  // may find the row at neither key. A later read finds it at its new key, and meanwhile the
  // delta keeps what earlier reads found of it. A first read has no earlier one: an item created
  // after the build and updated during that read (its embedding saved) would be missing from the
  // view, then back on the next request (a page would miss it, and the next pages rank it in).
  // So a first read is followed at once by an ordinary one, which lists the skew window and
  // reads what moved meanwhile.
  if (first) await readDelta(items, tenant, st);
}

/** The tenant's current index build (no older than the pointer check interval), without its delta. */
export async function currentIndex(deps: SearchDeps, tenant: string): Promise<SearchIndex> {
  return (await currentState(deps, tenant, true)).index;
}

/**
 * The tenant's state, its index no older than the pointer check interval. A container that
 * serves the tenant already goes on serving the build it has (with the changes since it, which
 * every request reads) while it looks for a newer one and loads it, unless `wait`: the two rank
 * alike, and a 100,000-item build is a 113 MB download and 1.1-1.2 s of decoding, which every
 * request of the tenant waited for at each container's first pointer check after a build. A
 * look that fails is logged and tried again at the next check.
 */
async function currentState(deps: SearchDeps, tenant: string, wait = false): Promise<TenantState> {
  const st = states.get(tenant);
  if (st && nowMs() - st.pointerCheckedAt <= SEARCH_SETTINGS.pointerCheckMs) return st;
  const p = loading.run(tenant, () => {
    const looking = (async () => {
      const index = await loadIndex(deps, tenant, st?.index);
      const checkedAt = nowMs();
      if (st && st.index === index) {
        st.pointerCheckedAt = checkedAt;
        return st;
      }
      const fresh = newState(deps, tenant, index, checkedAt);
      states.set(tenant, fresh);
      return fresh;
    })();
    if (st)
      looking.catch((e: unknown) => {
        st.pointerCheckedAt = nowMs();
        logger.warn('could not look for a newer index build; serving the one loaded', { tenant, builtAt: st.index.builtAt, error: String(e) });
      });
    return looking;
  });
  return st && !wait ? st : p;
}

function newState(deps: SearchDeps, tenant: string, index: SearchIndex, checkedAt: number): TenantState {
  const st: TenantState = {
    index,
    pointerCheckedAt: checkedAt,
    delta: new PreparedDelta(undefined, index),
    readAt: 0,
    latest: index.builtAt,
    refresh: new FreshRead(() => readDelta(deps.items, tenant, st)),
    seen: new Set(),
    behind: false,
  };
  return st;
}

/**
 * The state of the build a cursor was ranked on, when it is not the current one (this container
 * has moved on since, or the cursor came from another container): loaded from its artifact once
 * and kept while pages ask for it. Undefined when that build is gone or cannot be read now: the
 * page is ranked on the current build then.
 */
async function pinnedState(deps: SearchDeps, tenant: string, builtAt: number): Promise<TenantState | undefined> {
  const now = nowMs();
  let builds = pinned.get(tenant);
  if (!builds) pinned.set(tenant, (builds = new Map()));
  let p = builds.get(builtAt);
  if (!p) {
    p = pinBuild(deps, tenant, builtAt, builds, now);
    builds.set(builtAt, p);
  }
  p.usedAt = now;
  return p.state;
}

/** Starts loading a pinned build into `tenantBuilds` (its entry, to be set under `builtAt`). */
function pinBuild(deps: SearchDeps, tenant: string, builtAt: number, tenantBuilds: Map<number, PinnedBuild>, now: number): PinnedBuild {
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
      index = builtAt === 0 ? emptyIndex(deps.embedder.dimensions) : await loadBuildAt(deps.blobs, tenant, builtAt, deps.embedder.dimensions);
    } catch (e) {
      // One this code cannot read is as good as missing (remembered below); after another error,
      // not known to be missing: not remembered, the next page tries again.
      logger.warn('could not load the index build a cursor was ranked on; ranking on the current one', { tenant, builtAt, error: String(e) });
      if (!(e instanceof UnreadableBuild)) {
        if (current()) tenantBuilds.delete(builtAt);
        return undefined;
      }
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
    entry.loaded = newState(deps, tenant, index, now);
    return entry.loaded;
  })();
  return entry;
}

/** Lets go of a tenant's pinned builds (and builds found missing) once no page has asked for them for a while. */
function dropStalePins(tenant: string): void {
  const builds = pinned.get(tenant);
  if (!builds) return;
  const now = nowMs();
  for (const [b, e] of builds) if (now - e.usedAt > SEARCH_SETTINGS.pinnedTtlMs) builds.delete(b);
  if (builds.size === 0) pinned.delete(tenant);
}

/**
 * The memory a state holds, estimated: a loaded build about 1.55 x its artifact (measured at
 * 20,000 and 100,000 items of bench/synthetic.ts, 512 dimensions), counted as twice it for what
 * it makes on first use (metadata columns, names by their first word); each slot of the delta
 * its float vector and int8 row and 1 KB besides (3.4 KB measured per changed item at 512
 * dimensions, the estimate 3.6).
 */
export const heldBytes = (st: { index: SearchIndex; delta: PreparedDelta }): number => 2 * st.index.artifactBytes + st.delta.slotCount * (5 * st.index.dims + 1024);

/**
 * Marks the tenant's view as the most recently served, then keeps the views within the memory
 * budget: the least recently served tenants' (their builds, deltas and pinned builds) are let go
 * until the rest fit, and read again when next searched. The tenant being served always stays,
 * whatever its size.
 */
function fitBudget(tenant: string): void {
  const served = states.get(tenant);
  if (served) {
    states.delete(tenant);
    states.set(tenant, served);
  }
  const held = (t: string, st: TenantState) => {
    let bytes = heldBytes(st);
    for (const p of pinned.get(t)?.values() ?? []) if (p.loaded) bytes += heldBytes(p.loaded);
    return bytes;
  };
  let total = 0;
  for (const [t, st] of states) total += held(t, st);
  for (const [t, st] of states) {
    if (total <= SEARCH_SETTINGS.memoryBytes) return;
    if (t === tenant) continue;
    const bytes = held(t, st);
    states.delete(t);
    pinned.delete(t);
    total -= bytes;
    logger.info('let go of a tenant search view to stay within the memory budget (SEARCH_MEMORY_MB); its next search reads it again', {
      tenant: t,
      estimatedMb: Math.round(bytes / 1e6),
      keptMb: Math.round(total / 1e6),
      budgetMb: Math.round(SEARCH_SETTINGS.memoryBytes / 1e6),
    });
  }
}

/**
 * Brings a state's delta up to date (unless the container may reuse what it read). With
 * `waitMs` (a search's, a recommendation's), waits for that read at most that long: a read still
 * running then goes on for the requests after this one, and this one is served from the build
 * and the changes applied so far (a prefix in time: pages are applied in order), the view
 * `behind` (its `current` reads items from the table). So a request's cost is bounded whatever
 * the state of the index: a container's first read of a bulk import no build holds yet is a
 * whole catalog (12-20 s for 100,000 items locally; on AWS it could outlast API Gateway's 29 s,
 * and the read, its table calls refused past that request's deadline, started over at the
 * container's next request).
 */
async function refreshed(deps: SearchDeps, tenant: string, st: TenantState, waitMs?: number): Promise<SearchView> {
  let done = true;
  if (st.readAt === 0 || nowMs() - st.readAt >= SEARCH_SETTINGS.deltaTtlMs) {
    const read = st.refresh.get();
    if (waitMs === undefined) await read;
    else done = await settledWithin(read, waitMs);
    if (!done && !st.behind)
      logger.warn('request served before its container read every change since the index build (a large change not built yet); the read goes on', {
        tenant,
        waitedMs: waitMs,
        changesApplied: st.delta.slotCount,
      });
    st.behind = !done;
  }
  return new SearchView(st.index, st.delta, done ? undefined : { items: deps.items, tenant });
}

/**
 * The tenant's index (loaded once per container, refreshed when a newer build appears) and its
 * delta: the changes since the build, brought up to date for each request by reading only the
 * changes committed since the previous read. Also the tenant's catalog port (`SearchView`).
 * `bounded` (recommendations): waiting for that read at most SEARCH_READ_WAIT_MS (`refreshed`);
 * otherwise however long it takes (a similar-items request for an item the view served by then
 * lacks: an item imported a moment ago exists for it).
 */
export async function tenantView(deps: SearchDeps, tenant: string, bounded = false): Promise<SearchView> {
  dropStalePins(tenant);
  const view = await refreshed(deps, tenant, await currentState(deps, tenant), bounded ? SEARCH_SETTINGS.readWaitMs : undefined);
  fitBudget(tenant);
  return view;
}

/**
 * The view a search ranks on: the current build, or for a later page of a result list the build
 * its first page was ranked on (scores depend on the index's statistics, and a cursor is a
 * score), with the changes since it, waiting for their read at most SEARCH_READ_WAIT_MS
 * (`refreshed`: past it the view is `behind`).
 */
export async function pagedView(deps: SearchDeps, tenant: string, builtAt: number | undefined): Promise<SearchView> {
  dropStalePins(tenant);
  const view = await refreshed(deps, tenant, await stateFor(deps, tenant, builtAt), SEARCH_SETTINGS.readWaitMs);
  fitBudget(tenant);
  return view;
}

/** The state a page ranked on the build of `builtAt` (the current one when undefined) ranks on. */
async function stateFor(deps: SearchDeps, tenant: string, builtAt: number | undefined): Promise<TenantState> {
  let st = await currentState(deps, tenant);
  if (builtAt === undefined || st.index.builtAt === builtAt) return st;
  if (builtAt > st.index.builtAt) {
    // Ranked on a build this container has not seen yet: look for it now, and wait for it.
    st.pointerCheckedAt = 0;
    st = await currentState(deps, tenant, true);
    if (st.index.builtAt === builtAt) return st;
  }
  return (await pinnedState(deps, tenant, builtAt)) ?? st;
}
