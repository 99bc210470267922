import { nowMs } from '../clock.ts';
import type { EventStore } from '../domain/types.ts';
import { catalogItemId } from '../domain/item-ids.ts';
import { logger } from '../observability.ts';

/** Popularity without a model counts the tenant's latest this many events. */
const TRENDING_EVENTS = 20_000;
/** Counts younger than this are served as they are; older ones are counted again meanwhile. */
const FRESH_MS = 30_000;
/** Counts older than this (a container idle that long) are counted again before they are served. */
const STALE_MS = 600_000;

interface Counted {
  at: number;
  scores: Map<number, number>;
  /** The count under way, shared by the requests that wait for it. */
  next?: Promise<Map<number, number>> | undefined;
}

/** Cache: per tenant, the latest counts. Bound: 1,001 tenants; emptied when full. */
const trending = new Map<string, Counted>();

/**
 * Items by how often the tenant's latest `n` events name them, scaled to 0-1. Counted at most
 * every 30 s per container, and not on a request's time: past 30 s the counts in hand are served
 * while a new count runs beside the requests (it reads 20,000 events: 0.7-1.2 s on the local
 * stack, which every 30 s made one request that slow); only the first count, or one older than
 * 10 minutes, is waited for, and concurrent requests wait for the same one.
 */
export async function trendingScores(events: EventStore, tenant: string, n = TRENDING_EVENTS): Promise<Map<number, number>> {
  const c = trending.get(tenant) ?? uncounted(tenant);
  const age = nowMs() - c.at;
  if (age < FRESH_MS) return c.scores;
  if (!c.next) {
    const next = withinTime(countLatest(events, tenant, n), COUNT_TIMEOUT_MS).then(
      (scores) => {
        Object.assign(c, { at: nowMs(), scores, next: undefined });
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
  return age < STALE_MS ? c.scores : c.next;
}

/** A tenant's entry before its first count (never fresh, so that count is waited for). */
function uncounted(tenant: string): Counted {
  if (trending.size > 1000) trending.clear();
  const c: Counted = { at: -Infinity, scores: new Map() };
  trending.set(tenant, c);
  return c;
}

/** A count that has not ended by then is given up (a read stalled across a frozen container would hold every request waiting for it). */
const COUNT_TIMEOUT_MS = 20_000;

function withinTime<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not counted within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function countLatest(events: EventStore, tenant: string, n: number): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  // Bounded: the tenant's latest events, across its write shards (a trained model replaces this).
  for (const e of await events.latest(tenant, n)) {
    const id = catalogItemId(e.item_id);
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  let max = 1e-9;
  for (const v of counts.values()) if (v > max) max = v;
  return new Map([...counts].map(([id, c]) => [id, c / max]));
}
