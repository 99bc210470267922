import { nowMs } from '../clock.ts';
import { settledWithin } from '../concurrency.ts';
import type { EventStore, RecentEvent } from '../domain/types.ts';
import { catalogItemId } from '../domain/item-ids.ts';
import { logger } from '../observability.ts';
import { Lru } from '../lru.ts';

/** Popularity without a model counts the tenant's latest this many events. */
const TRENDING_EVENTS = 20_000;
/** Counts younger than this are served as they are; older ones are counted again meanwhile. */
const FRESH_MS = 30_000;
/** Counts older than this (a container idle that long) are counted again before they are served. */
const STALE_MS = 600_000;
/** A container stores its count as the tenant's snapshot when the one it knows is at least this old. */
const STORE_EVERY_MS = 300_000;
/** A snapshot keeps the tenant's this many most named items (12 bytes each: a 48 KB row at most). */
export const SNAPSHOT_ITEMS = 4000;
/** A snapshot read that has not answered by then is given up: the request counts as without one. */
const SNAPSHOT_READ_TIMEOUT_MS = 2_000;

/** A tenant's popularity as counted once, stored for containers that have no count of their own. */
export interface PopularitySnapshot {
  /** When it was counted (ms). */
  countedAt: number;
  /** How many of the tenant's latest events were counted. */
  events: number;
  /** The most named items, each with how many of those events named it: most first, ties by lower id; at most SNAPSHOT_ITEMS. */
  top: readonly (readonly [id: number, count: number])[];
}

/** One snapshot per tenant (shared/data/popularity.ts). */
export interface PopularitySnapshots {
  read(tenant: string): Promise<PopularitySnapshot | undefined>;
  /** Stores it unless the one stored was counted at the same time or later. */
  write(tenant: string, snapshot: PopularitySnapshot): Promise<void>;
}

/**
 * Popularity as served: the scores, and the newest event id their count read (`upTo`, 0: none;
 * undefined for a stored snapshot's scores, which name none).
 */
export interface Popularity {
  scores: Map<number, number>;
  upTo: number | undefined;
}

/**
 * A count of the tenant's latest events as a later page can make another from (`slid`): its
 * scores, the most events that named one item (`top`: a score times it is the item's count), the
 * newest and oldest event id it read (0: none), and how many events it read (fewer than it asked
 * for: the tenant's whole log).
 */
interface Tally {
  scores: Map<number, number>;
  top: number;
  upTo: number;
  oldest: number;
  counted: number;
}

interface Counted {
  at: number;
  scores: Map<number, number>;
  /** The newest event id the count read (0: none), and of how many events; undefined for a snapshot's scores. */
  upTo?: number | undefined;
  events?: number | undefined;
  /** The count itself (`Tally`); undefined for a snapshot's scores. */
  tally?: Tally | undefined;
  /** The count under way, shared by the requests that wait for it. */
  next?: Promise<Popularity> | undefined;
  /** The stored snapshot's read, made once by a container with no count of its own (concurrent requests share it). */
  restored?: Promise<void> | undefined;
  /** The scores are a snapshot's, not counted here: served whatever their age while a count runs. */
  fromSnapshot?: boolean;
  /** When the snapshot this container last read or stored was counted. */
  storedAt: number;
}

/**
 * Cache: per tenant, the latest counts. Bound: TRENDING_TENANTS tenants, the least recently served
 * let go (until 2026-12-07 emptied whole when full: every tenant, busy ones too, had its snapshot
 * read or its 20,000 events counted again, the first request waiting for it).
 */
export const TRENDING_TENANTS = 1001;
const trending = new Lru<string, Counted>(TRENDING_TENANTS);

/**
 * Items by how often the tenant's latest `n` events name them, scaled to 0-1. Counted at most
 * every 30 s per container, and not on a request's time: past 30 s the counts in hand are served
 * while a new count runs beside the requests (it reads 20,000 events: 0.7-1.2 s on the local
 * stack, which every 30 s made one request that slow); a count older than 10 minutes is waited
 * for, and concurrent requests wait for the same one. A container with no count of its own
 * (every new one) first reads the tenant's stored snapshot (`snapshots`, one row) and serves it,
 * whatever its age, counting again beside the requests when it is older than 30 s; only a tenant
 * without one (never counted) has its first count waited for. Counts are stored as the snapshot
 * when the one the container knows is 5 minutes old.
 */
export async function trendingScores(events: EventStore, tenant: string, n = TRENDING_EVENTS, snapshots?: PopularitySnapshots): Promise<Map<number, number>> {
  return (await trendingPopularity(events, tenant, n, snapshots)).scores;
}

/** `trendingScores`, with the newest event id its count read (`Popularity`): what a later page of a search asks for again (`trendingScoresAsOf`). */
export async function trendingPopularity(events: EventStore, tenant: string, n = TRENDING_EVENTS, snapshots?: PopularitySnapshots): Promise<Popularity> {
  const c = trending.get(tenant) ?? uncounted(tenant);
  if (snapshots && c.at === -Infinity) await (c.restored ??= restore(c, snapshots, tenant, n));
  const age = nowMs() - c.at;
  const inHand = (): Popularity => ({ scores: c.scores, upTo: c.upTo });
  if (age < FRESH_MS) return inHand();
  if (!c.next) {
    const next = withinTime(countLatest(events, tenant, n), COUNT_TIMEOUT_MS).then(
      (read) => {
        const at = nowMs();
        const { counts, upTo } = read;
        const tally = tallyOf(read);
        const scores = tally.scores;
        // The count it replaces, for the later pages of the searches it ranked.
        if (c.upTo !== undefined && c.events !== undefined) keep(tenant, c.events, c.upTo, Promise.resolve(c.scores));
        Object.assign(c, { at, scores, upTo, events: n, tally, next: undefined, fromSnapshot: false });
        if (snapshots && at - c.storedAt >= STORE_EVERY_MS) store(c, snapshots, tenant, { countedAt: at, events: n, top: topCounts(counts, SNAPSHOT_ITEMS) });
        return { scores, upTo };
      },
      (e: unknown) => {
        // Tried again by a later request; those waiting for it see the error.
        c.next = undefined;
        logger.warn('trending count failed', { tenant, error: e as Error });
        throw e;
      },
    );
    // Nobody may wait for it (the requests served meanwhile): not an unhandled rejection.
    next.catch(() => undefined);
    c.next = next;
  }
  return age < STALE_MS || c.fromSnapshot ? inHand() : c.next;
}

/** At most this many: a count of 20,000 events names at most as many items (a few MB). */
export const KEPT_COUNTS = 8;
/** Counts of a tenant's latest events up to an event id kept by a container (`trendingScoresAsOf`). Bound: KEPT_COUNTS, the least recently asked for let go. */
const keptCounts = new Lru<string, Promise<Map<number, number>>>(KEPT_COUNTS);

function keep(tenant: string, n: number, upTo: number, scores: Promise<Map<number, number>>): void {
  keptCounts.set(JSON.stringify([tenant, n, upTo]), scores);
}

/**
 * The scores `trendingPopularity` served with its count of the tenant's latest `n` events up to
 * event `upTo`: the container's count in hand when it is that one, a count it kept (the one in
 * hand before, or one counted here before), else made again (read consistently; waited for):
 * from the container's count in hand when the two are at most `n / 2` event ids apart, by reading
 * only the events between them and as many at the other end of the window (`slid`: another
 * container's count of a few seconds before or after reads tens or hundreds of events, not
 * 20,000), else the latest `n` events up to that id counted again. The same events, the same
 * scores, but for events stored below that id after it was counted (a write slow to commit), and
 * events erased since. A later page of a search whose context weighs popularity weighs it as its
 * first page did (`Cursor.popularUpTo`): a count between pages moved the positions, and pages
 * repeated or skipped hits (until 2026-12-07).
 */
export function trendingScoresAsOf(events: EventStore, tenant: string, upTo: number, n = TRENDING_EVENTS): Promise<Map<number, number>> {
  const c = trending.get(tenant);
  if (c && c.upTo === upTo && c.events === n) return Promise.resolve(c.scores);
  const key = JSON.stringify([tenant, n, upTo]);
  // A hit is a use: kept the longer.
  const kept = keptCounts.get(key);
  if (kept) return kept;
  // A first page's count of no events (up to event 0) is made again by reading nothing (below event 1).
  const base = upTo > 0 && c?.tally !== undefined && c.events === n && Math.abs(upTo - c.tally.upTo) <= n / 2 ? c.tally : undefined;
  const counted = withinTime(base ? slid(events, tenant, n, base, upTo) : countLatest(events, tenant, n, upTo + 1).then(tallyOf), COUNT_TIMEOUT_MS).then((t) => t.scores);
  keep(tenant, n, upTo, counted);
  // A failed count is not kept: the next page counts again (those waiting for it see the error).
  counted.catch(() => {
    if (keptCounts.peek(key) === counted) keptCounts.delete(key);
  });
  return counted;
}

/** A tenant's entry before its first count (never fresh, so that count is waited for). */
function uncounted(tenant: string): Counted {
  const c: Counted = { at: -Infinity, scores: new Map(), storedAt: -Infinity };
  trending.set(tenant, c);
  return c;
}

/** The tenant's stored snapshot (of `n` events) into `c`, unless a count ended meanwhile; none, or a failed read: nothing. */
async function restore(c: Counted, snapshots: PopularitySnapshots, tenant: string, n: number): Promise<void> {
  try {
    const s = await withinTime(snapshots.read(tenant), SNAPSHOT_READ_TIMEOUT_MS, 'read');
    if (!s || s.events !== n) return;
    c.storedAt = s.countedAt;
    // Another container's clock: never younger than now.
    if (c.at === -Infinity) Object.assign(c, { at: Math.min(s.countedAt, nowMs()), scores: scaled(s.top), fromSnapshot: true });
  } catch (e) {
    logger.warn('popularity snapshot read failed', { tenant, error: e as Error });
  }
}

/** Stores a count as the tenant's snapshot, beside the requests (a failure leaves it for the next count). */
function store(c: Counted, snapshots: PopularitySnapshots, tenant: string, s: PopularitySnapshot): void {
  c.storedAt = s.countedAt;
  snapshots.write(tenant, s).catch((e: unknown) => {
    c.storedAt = -Infinity;
    logger.warn('popularity snapshot write failed', { tenant, error: e as Error });
  });
}

/** A count that has not ended by then is given up (a read stalled across a frozen container would hold every request waiting for it). */
const COUNT_TIMEOUT_MS = 20_000;

async function withinTime<T>(p: Promise<T>, ms: number, what = 'counted'): Promise<T> {
  if (!(await settledWithin(p, ms))) throw new Error(`not ${what} within ${ms} ms`);
  return p;
}

interface Read {
  counts: Map<number, number>;
  upTo: number;
  oldest: number;
  counted: number;
}

/** How many of the tenant's latest `n` events (below event id `below`, when given) name each item, the newest and oldest event id read (0: none), and how many were read. */
async function countLatest(events: EventStore, tenant: string, n: number, below?: number): Promise<Read> {
  const counts = new Map<number, number>();
  let upTo = 0;
  let oldest = 0;
  // Bounded: the tenant's latest events, across its write shards (a trained model replaces this).
  const read = await events.latest(tenant, n, below);
  for (const e of read) {
    if (e.id > upTo) upTo = e.id;
    if (oldest === 0 || e.id < oldest) oldest = e.id;
    const id = catalogItemId(e.item_id);
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return { counts, upTo, oldest, counted: read.length };
}

function tallyOf({ counts, upTo, oldest, counted }: Read): Tally {
  let top = 0;
  for (const v of counts.values()) if (v > top) top = v;
  return { scores: scaled(counts), top, upTo, oldest, counted };
}

/**
 * The count of the tenant's latest `n` events up to event `upTo` made from `base`, another count
 * of them (up to another event), reading only the events between the two and as many at the
 * window's other end: up to an earlier event, the events after it leave and as many below the
 * base's oldest come in; up to a later one, the events after the base's newest come in and as
 * many of its oldest leave (ids are handed out in order: read from its oldest up, past a gap).
 * The same counts as reading the `n` events up to `upTo` (but for the events that count does not
 * see alike: stored late, or erased since). Falls back to that read where the oldest cannot be
 * found (erased since).
 */
async function slid(events: EventStore, tenant: string, n: number, base: Tally, upTo: number): Promise<Tally> {
  const counts = new Map<number, number>();
  for (const [id, s] of base.scores) counts.set(id, Math.round(s * base.top));
  const add = (e: RecentEvent, by: number) => {
    const id = catalogItemId(e.item_id);
    if (id === undefined) return;
    const v = (counts.get(id) ?? 0) + by;
    if (v > 0) counts.set(id, v);
    else counts.delete(id);
  };
  let { counted, oldest } = base;
  if (upTo < base.upTo) {
    const leaving = (await events.latest(tenant, base.upTo - upTo, base.upTo + 1)).filter((e) => e.id > upTo);
    for (const e of leaving) add(e, -1);
    // Below its oldest only when the base read a full window (else it read the whole log).
    const coming = leaving.length > 0 && counted >= n ? await events.latest(tenant, leaving.length, oldest) : [];
    for (const e of coming) add(e, 1);
    counted += coming.length - leaving.length;
    const last = coming[coming.length - 1];
    if (last) oldest = last.id;
  } else if (upTo > base.upTo) {
    const arriving = (await events.latest(tenant, upTo - base.upTo, upTo + 1)).filter((e) => e.id > base.upTo);
    for (const e of arriving) add(e, 1);
    const first = arriving[arriving.length - 1];
    if (counted === 0 && first) oldest = first.id;
    counted += arriving.length;
    const drop = counted - n;
    if (drop > 0) {
      let found: RecentEvent[] = [];
      for (let m = drop; found.length < drop && m <= n; m *= 2) found = (await events.latest(tenant, m, oldest + m)).filter((e) => e.id >= oldest);
      if (found.length < drop) return tallyOf(await countLatest(events, tenant, n, upTo + 1));
      found.sort((a, b) => a.id - b.id);
      for (const e of found.slice(0, drop)) add(e, -1);
      oldest = found[drop]?.id ?? (found[drop - 1] as RecentEvent).id + 1;
      counted = n;
    }
  }
  return tallyOf({ counts, upTo, oldest, counted });
}

/** Counts scaled so the most named item is 1 (a snapshot's top holds that item: the same scores as the whole count). */
function scaled(counts: Iterable<readonly [number, number]>): Map<number, number> {
  const all = [...counts];
  let max = 1e-9;
  for (const [, v] of all) if (v > max) max = v;
  return new Map(all.map(([id, c]) => [id, c / max]));
}

/** The `k` most counted items, most first, ties by lower id. */
export function topCounts(counts: ReadonlyMap<number, number>, k: number): [number, number][] {
  return [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
}
