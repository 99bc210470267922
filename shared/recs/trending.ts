import { nowMs } from '../clock.ts';
import type { EventStore } from '../domain/types.ts';
import { catalogItemId } from '../domain/item-ids.ts';

/** Popularity without a model counts the tenant's latest this many events. */
const TRENDING_EVENTS = 20_000;

/** Cache: per tenant, the latest counts (each container reads them at most every 30 s). Bound: 1,001 tenants; emptied when full. */
const trending = new Map<string, { at: number; scores: Map<number, number> }>();

/** Items by how often the tenant's latest `n` events name them, scaled to 0-1, cached for 30 s. */
export async function trendingScores(events: EventStore, tenant: string, n = TRENDING_EVENTS): Promise<Map<number, number>> {
  const cached = trending.get(tenant);
  if (cached && nowMs() - cached.at < 30_000) return cached.scores;
  const counts = new Map<number, number>();
  // Bounded: the tenant's latest events, across its write shards (a trained model replaces this).
  for (const e of await events.latest(tenant, n)) {
    const id = catalogItemId(e.item_id);
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  let max = 1e-9;
  for (const v of counts.values()) if (v > max) max = v;
  const scores = new Map([...counts].map(([id, c]) => [id, c / max]));
  if (trending.size > 1000) trending.clear();
  trending.set(tenant, { at: nowMs(), scores });
  return scores;
}
