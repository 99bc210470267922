/**
 * What a context does to one request: its rules in force for this user, its rerank controls, and
 * the variant of its running experiment the user is assigned to. The tenant's control records
 * come from one small Query, cached per container for CONTROL_CACHE_MS (the staleness bound:
 * a change made in the Platform API serves within 5 s); a user's segment membership is decided
 * from their latest events, read once per request and only when a segment is involved, without
 * those an erasure of the user covers (its marker, read for that request as recommendations
 * read it: an erased user stops being a member at once, not once the deletion has ended).
 */
import { nowMs } from '../clock.ts';
import { Lru } from '../lru.ts';
import { config } from '../config.ts';
import type { ErasedUser } from '../domain/console-records.ts';
import { withoutErased } from '../domain/erased-users.ts';
import type { RecentEvent } from '../domain/types.ts';
import { NotFound } from '../domain/errors.ts';
import { inForce } from './pipeline.ts';
import { variantFor } from './stats.ts';
import { STARTING_SECONDS, type ControlConfig, type Experiment, type RerankControls, type Rule, type SegmentDefinition } from './types.ts';

/** How long a container reuses a tenant's control records (CONTROL_CACHE_MS; the tests of serving set 0). */
export const CONTROL_CACHE_MS = config().control.cacheMs;
/** How many of a user's latest events segment membership is decided on. */
export const SEGMENT_EVENTS = 500;
/**
 * Membership is first decided on the latest few events: 4 x the largest `min_count` of the
 * segments involved, at least 10 and at most this many (what search reuses for taste and
 * `exclude_seen`); only a segment those cannot decide (too few events of its type in them, and
 * older ones may still be in its window) reads SEGMENT_EVENTS.
 */
export const SEGMENT_FIRST_READ = 100;
/**
 * The Query pages (each at most 1 MB of whole events) each read of a user's events for segments
 * reads at most: the latest SEGMENT_EVENTS of up to some 4 KB each as stored, at most 2 MB a read
 * and 4 MB an evaluation (the first read and SEGMENT_EVENTS). A user whose events are larger has
 * membership decided on those 2 MB of them. Until 2026-12-07 unbounded: 500 events of 32 KB were
 * 16 pages (16 MB, some 2,000 read units) read one after another on every request of that user
 * naming a context with a segment, and 100 of them 4 more.
 */
export const SEGMENT_PAGES = 2;

/** The largest `min_count` of a definition. */
const maxCount = (def: SegmentDefinition): number => ('all' in def ? Math.max(...def.all.map(maxCount)) : 'any' in def ? Math.max(...def.any.map(maxCount)) : def.min_count);

export interface ControlDeps {
  /** The tenant's rules, segments, experiments, rerank controls and context ids (one Query). */
  config(tenant: string): Promise<ControlConfig>;
  /** Whether the tenant has this context (contexts made before the control plane have no marker in the config). */
  contextExists(tenant: string, id: number): Promise<boolean>;
  /**
   * The user's latest events, newest first (`below`: only those with a smaller id), of at most
   * `pages` Query pages; `cut`: it stopped there, fewer than `limit` read though the user may have more.
   */
  userEvents(tenant: string, userId: string, limit: number, below: number | undefined, pages: number): Promise<{ events: RecentEvent[]; cut: boolean }>;
  /**
   * The user's erasure marker (shared/domain/erasure.ts), or undefined when never erased, as
   * recommendations read it (`erasedUser`: a read that began after the call, shared by concurrent
   * requests). Read only when a segment is decided and the caller has no read of its own.
   */
  erasedUser(tenant: string, userId: string): Promise<ErasedUser | undefined>;
}

export interface Assignment {
  experiment: Experiment;
  index: number;
  variant: string;
  endpoint: string;
}

export interface ServingPlan {
  contextId: number;
  /** When (Unix seconds) its rule windows and segments were decided: freshness is measured from then too. */
  at: number;
  rules: Rule[];
  controls: RerankControls;
  assignment: Assignment | null;
  /** The user's latest events, when segment membership read them: the caller may reuse them (latestFromPlan, afterFromPlan). */
  userEvents?: UserEventsRead;
}

/**
 * A user's latest events as one read found them, newest first; `all`: the user has no others
 * (`below`: when the read was of those before that id, no others before it).
 */
export interface UserEventsRead {
  events: RecentEvent[];
  all: boolean;
  below?: number | undefined;
}

/**
 * The user's latest `n` events (before id `below`, when given) from the plan's read, when it read
 * at least that many or all there are, and under the same bound.
 */
export function latestFromPlan(plan: ServingPlan | undefined, n: number, below?: number): RecentEvent[] | undefined {
  const r = plan?.userEvents;
  return r && r.below === below && (r.all || r.events.length >= n) ? r.events.slice(0, n) : undefined;
}

/**
 * The user's events after event `id` (newest first, at most `n`) from the plan's read, when it
 * holds all of them: it read all there are, or its oldest is not after `id` (ids grow with time).
 */
export function afterFromPlan(plan: ServingPlan | undefined, id: number, n: number): RecentEvent[] | undefined {
  const r = plan?.userEvents;
  if (!r || r.below !== undefined) return undefined;
  const oldest = r.events[r.events.length - 1];
  if (!r.all && (oldest === undefined || oldest.id > id)) return undefined;
  return r.events.filter((e) => e.id > id).slice(0, n);
}

interface Cached {
  at: number;
  value: Promise<ControlConfig>;
  /** Context ids found (or not) by a direct read, for contexts without a marker. */
  known: Map<number, Known>;
}

/** A direct read of whether a context exists; `missingAt`: when it answered no. */
interface Known {
  exists: Promise<boolean>;
  missingAt?: number;
}

/**
 * How long a container answers 404 for a context it found missing before it reads again (at most
 * CONTROL_CACHE_MS). A client that keeps naming a context the tenant lacks costs the table at
 * most two reads a second per container; a context created after such a request serves within
 * this, not within CONTROL_CACHE_MS (until 2026-12-05 the 404 stood for the cache's lifetime).
 */
export const MISSING_CONTEXT_MS = Math.min(1000, CONTROL_CACHE_MS);

/** The entry's read of whether context `id` exists, unless it answered no more than MISSING_CONTEXT_MS ago. */
function knownOf(entry: Cached, id: number): Known | undefined {
  const k = entry.known.get(id);
  if (k?.missingAt !== undefined && nowMs() - k.missingAt >= MISSING_CONTEXT_MS) {
    entry.known.delete(id);
    return undefined;
  }
  return k;
}
/**
 * Cache: each tenant's control records, for CONTROL_CACHE_MS. Bound: CONTROL_CACHE_TENANTS
 * tenants; past it the least recently used is dropped (`Lru`). Until 2026-12-07 it was emptied
 * whole when a read was stored in it full (1,001 tenants held: a new tenant's, or a tenant's read
 * again after CONTROL_CACHE_MS): a container serving more tenants than that dropped every
 * tenant's read, fresh or not, again and again, and its busy tenants were read again with each
 * few one-off ones.
 */
export const CONTROL_CACHE_TENANTS = 1001;
const cache = new Lru<string, Cached>(CONTROL_CACHE_TENANTS);

function cachedConfig(deps: ControlDeps, tenant: string, fresh = false): Cached {
  const hit = cache.get(tenant);
  if (hit && !fresh && nowMs() - hit.at < CONTROL_CACHE_MS) return hit;
  const entry: Cached = { at: nowMs(), value: deps.config(tenant), known: new Map() };
  // A failed read is not kept: the next request reads again.
  entry.value.catch(() => {
    if (cache.peek(tenant) === entry) cache.delete(tenant);
  });
  cache.set(tenant, entry);
  return entry;
}

/** Whether the user's events satisfy a segment definition at `now`. */
export function isMember(def: SegmentDefinition, events: readonly RecentEvent[], now: number): boolean {
  if ('all' in def) return def.all.every((d) => isMember(d, events, now));
  if ('any' in def) return def.any.some((d) => isMember(d, events, now));
  const since = now - def.within_days * 86_400;
  let n = 0;
  for (const e of events) if (e.type === def.event_type && e.created >= since && ++n >= def.min_count) return true;
  return false;
}

/**
 * Whether the user's events decide a segment definition at `now`: true or false, or undefined when
 * older events than those read could still change it. `all` read when the user has no more.
 */
export function decides(def: SegmentDefinition, events: readonly RecentEvent[], now: number, all: boolean): boolean | undefined {
  if ('all' in def || 'any' in def) {
    const parts = 'all' in def ? def.all : def.any;
    const wanted = 'any' in def;
    let open = false;
    for (const d of parts) {
      const v = decides(d, events, now, all);
      if (v === wanted) return wanted;
      if (v === undefined) open = true;
    }
    return open ? undefined : !wanted;
  }
  const since = now - def.within_days * 86_400;
  let n = 0;
  for (const e of events) if (e.type === def.event_type && e.created >= since && ++n >= def.min_count) return true;
  // Newest first: once the oldest event read is before the window, no older one is in it.
  const oldest = events[events.length - 1];
  return all || (oldest !== undefined && oldest.created < since) ? false : undefined;
}

/**
 * The number of a Core request's `context_id` (a positive integer's digits, as its schema keeps
 * them). One past the largest id a context can have names none: 404 `context_not_found` naming the
 * digits as sent, as for any absent context, never a context looked up under a rounded id.
 */
export function contextNumber(digits: string): number {
  const id = Number(digits);
  if (!Number.isSafeInteger(id)) throw new NotFound('context_not_found', `No context ${digits}.`);
  return id;
}

/**
 * The plan for a request naming `contextId` (404 when the tenant has no such context). Without
 * a user, segment-scoped rules do not apply and no experiment assigns a variant; nor does one
 * with `experiment: false` (a recommendation request naming its own endpoint bypasses the
 * experiment, its variants' rerank controls too). `onAssigned` hears the user's variant as soon
 * as it is known: before the segments are read when the experiment is not scoped to a segment.
 * Segments are decided on the user's events without those their erasure covers (`withoutErased`),
 * by the user's erasure marker `opts.erased` when the caller reads it anyway (recommendations,
 * personalised search), else read here (`ControlDeps.erasedUser`), beside the events.
 * `opts.eventsBelow`: decide them on the user's events before that id only (a later page of a
 * context's search: those up to the newest its first page read, with `now` its first page's time).
 */
export async function planFor(
  deps: ControlDeps,
  tenant: string,
  contextId: number,
  userId: string | undefined,
  now: number,
  onAssigned?: (a: Assignment) => void,
  opts: { experiment?: boolean; erased?: Promise<ErasedUser | undefined> | undefined; eventsBelow?: number | undefined } = {},
): Promise<ServingPlan> {
  // The caller's read, awaited only when a segment is decided: its failure then fails the plan, and only then.
  opts.erased?.catch(() => undefined);
  let entry = cachedConfig(deps, tenant);
  let cfg = await entry.value;
  if (!cfg.contexts.includes(contextId) && !knownOf(entry, contextId)) {
    // A context this read does not know may be newer than it: read again at once (its rules and
    // experiment are likely just made too), rather than serve it stale for the cache's lifetime.
    entry = cachedConfig(deps, tenant, true);
    cfg = await entry.value;
  }
  if (!cfg.contexts.includes(contextId)) {
    let known = knownOf(entry, contextId);
    if (!known) {
      const k: Known = { exists: deps.contextExists(tenant, contextId) };
      k.exists.then(
        (exists) => {
          if (!exists) k.missingAt = nowMs();
        },
        // A failed read is not kept: the next request reads again.
        () => entry.known.get(contextId) === k && entry.known.delete(contextId),
      );
      entry.known.set(contextId, (known = k));
    }
    if (!(await known.exists)) throw new NotFound('context_not_found', `No context ${contextId}.`);
  }
  const rules = cfg.rules.filter((r) => r.context_id === contextId && inForce(r, now));
  // Not one whose start is still being checked (two started at once: one undoes itself, and until
  // 2026-12-05 requests served meanwhile could go to it), unless the check stopped (a crash) STARTING_SECONDS ago.
  const checking = (e: Experiment) => cfg.starting?.includes(e.id) === true && now - (e.started_at ?? 0) <= STARTING_SECONDS;
  // One whose check held before one still marked past it (its check stopped, so another may be
  // Running beside it until a start sent again settles it: updateExperiment).
  const runs = opts.experiment === false ? [] : cfg.experiments.filter((e) => e.context_id === contextId && e.status === 'Running' && !checking(e));
  const running = runs.find((e) => cfg.starting?.includes(e.id) !== true) ?? runs[0];
  const assign = (e: Experiment, user: string): Assignment => {
    const { index, variant } = variantFor(e.id, user, e.variants);
    const a = { experiment: e, index, variant: variant.name, endpoint: variant.endpoint_name };
    onAssigned?.(a);
    return a;
  };
  // Not scoped to a segment: assigned before any read.
  let assignment = running && userId !== undefined && running.segment_id === null ? assign(running, userId) : null;
  const segmentIds = new Set<number>();
  for (const r of rules) if (r.segment_id !== null) segmentIds.add(r.segment_id);
  if (running?.segment_id != null) segmentIds.add(running.segment_id);

  let members = new Set<number>();
  let events: UserEventsRead | undefined;
  if (segmentIds.size > 0 && userId !== undefined) {
    const involved = cfg.segments.filter((s) => segmentIds.has(s.id));
    const first = Math.min(SEGMENT_FIRST_READ, Math.max(10, 4 * Math.max(0, ...involved.map((s) => maxCount(s.definition)))));
    const below = opts.eventsBelow;
    const [firstRead, marker] = await Promise.all([deps.userEvents(tenant, userId, first, below, SEGMENT_PAGES), opts.erased ?? deps.erasedUser(tenant, userId)]);
    const kept = withoutErased(marker);
    let raw = firstRead;
    let read = kept(raw.events);
    let limit = first;
    // A first read cut at its pages (fewer than `first`) reads no more: a longer one would stop at the same events.
    if (raw.events.length === first && involved.some((s) => decides(s.definition, read, now, false) === undefined)) {
      raw = await deps.userEvents(tenant, userId, (limit = SEGMENT_EVENTS), below, SEGMENT_PAGES);
      read = kept(raw.events);
    }
    // All the user's events only when the read ended before `limit` at the end of them, not at its pages.
    events = { events: [...read], all: raw.events.length < limit && !raw.cut, ...(below === undefined ? {} : { below }) };
    members = new Set(involved.filter((s) => isMember(s.definition, read, now)).map((s) => s.id));
  }
  const applies = (segment: number | null) => segment === null || members.has(segment);

  if (running && userId !== undefined && running.segment_id !== null && applies(running.segment_id)) assignment = assign(running, userId);
  const own = cfg.rerank.find((r) => r.context_id === contextId);
  const override = assignment ? assignment.experiment.variants[assignment.index]?.rerank : undefined;
  return {
    contextId,
    at: now,
    rules: rules.filter((r) => applies(r.segment_id)),
    controls: { ...controlsOf(own), ...controlsOf(override) },
    assignment,
    ...(events ? { userEvents: events } : {}),
  };
}

/** The controls that are set (null or absent: unset). */
function controlsOf(r: RerankControls | undefined): RerankControls {
  const out: RerankControls = {};
  if (!r) return out;
  if (r.diversity != null) out.diversity = r.diversity;
  if (r.popularity_weight != null) out.popularity_weight = r.popularity_weight;
  if (r.freshness_weight != null) out.freshness_weight = r.freshness_weight;
  if (r.max_per_category != null) out.max_per_category = r.max_per_category;
  if (r.exclude_seen != null) out.exclude_seen = r.exclude_seen;
  return out;
}
