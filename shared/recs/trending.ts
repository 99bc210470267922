import { nowMs } from '../clock.ts';
import { settledWithin } from '../concurrency.ts';
import type { EventStore } from '../domain/types.ts';
import { catalogItemId } from '../domain/item-ids.ts';
import { logger } from '../observability.ts';

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

interface Counted {
  at: number;
  scores: Map<number, number>;
  /** The count under way, shared by the requests that wait for it. */
  next?: Promise<Map<number, number>> | undefined;
  /** The stored snapshot's read, made once by a container with no count of its own (concurrent requests share it). */
  restored?: Promise<void> | undefined;
  /** The scores are a snapshot's, not counted here: served whatever their age while a count runs. */
  fromSnapshot?: boolean;
  /** When the snapshot this container last read or stored was counted. */
  storedAt: number;
}

/** Cache: per tenant, the latest counts. Bound: 1,001 tenants; emptied when full. */
const trending = new Map<string, Counted>();

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
  const c = trending.get(tenant) ?? uncounted(tenant);
  if (snapshots && c.at === -Infinity) await (c.restored ??= restore(c, snapshots, tenant, n));
  const age = nowMs() - c.at;
  if (age < FRESH_MS) return c.scores;
  if (!c.next) {
    const next = withinTime(countLatest(events, tenant, n), COUNT_TIMEOUT_MS).then(
      (counts) => {
        const at = nowMs();
        const scores = scaled(counts);
        Object.assign(c, { at, scores, next: undefined, fromSnapshot: false });
        if (snapshots && at - c.storedAt >= STORE_EVERY_MS) store(c, snapshots, tenant, { countedAt: at, events: n, top: topCounts(counts, SNAPSHOT_ITEMS) });
        return scores;
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
  return age < STALE_MS || c.fromSnapshot ? c.scores : c.next;
}

/** A tenant's entry before its first count (never fresh, so that count is waited for). */
function uncounted(tenant: string): Counted {
  if (trending.size > 1000) trending.clear();
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

/** How many of the tenant's latest `n` events name each item. */
async function countLatest(events: EventStore, tenant: string, n: number): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  // Bounded: the tenant's latest events, across its write shards (a trained model replaces this).
  for (const e of await events.latest(tenant, n)) {
    const id = catalogItemId(e.item_id);
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
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
