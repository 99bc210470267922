import type { ConsoleRecord, ConsoleStore } from '../domain/console-records.ts';
import type { SegmentEventCounts, SegmentEventReader } from '../domain/segment-events.ts';
import type { Segment, SegmentDefinition } from './types.ts';

/*
 * Segment size estimates, refreshed by the maintenance pass: per segment, the distinct users
 * whose events satisfy its definition now, as serving decides membership (a leaf: at least
 * `min_count` events of `event_type` created within `within_days`; `all` / `any` of those).
 *
 * An estimate: each leaf reads at most LEAF_EVENT_CAP of the newest events of its type, so a
 * window holding more counts only its newest part (a lower bound).
 */

/** Events read per leaf (per event type and window) at most. */
export const LEAF_EVENT_CAP = 50_000;
/** How old an estimate may grow before a pass computes it again (a new or redefined segment has none: the next pass computes it). */
export const SIZE_REFRESH_SECONDS = 3600;
/** Events one pass reads at most over every tenant; segments left over wait for the next pass. */
export const PASS_EVENT_BUDGET = 400_000;

export interface SegmentSizeDeps {
  console: Pick<ConsoleStore, 'list' | 'update'>;
  events: SegmentEventReader;
}

type StoredSegment = Segment & ConsoleRecord & { _rev: number };

/** The users a definition selects, from the per-user counts of each leaf's events (read once per type and window). */
async function members(def: SegmentDefinition, leaf: (type: string, days: number) => Promise<SegmentEventCounts>): Promise<Set<string>> {
  if ('all' in def) {
    const sets = await Promise.all(def.all.map((d) => members(d, leaf)));
    const [first, ...rest] = sets.sort((a, b) => a.size - b.size);
    return new Set([...(first ?? [])].filter((u) => rest.every((s) => s.has(u))));
  }
  if ('any' in def) {
    const out = new Set<string>();
    for (const s of await Promise.all(def.any.map((d) => members(d, leaf)))) for (const u of s) out.add(u);
    return out;
  }
  const { counts } = await leaf(def.event_type, def.within_days);
  return new Set([...counts].filter(([, n]) => n >= def.min_count).map(([u]) => u));
}

/**
 * Computes the estimates of a tenant's segments that have none or an old one. A tenant without
 * segments costs one Query. `budget.events` is what the pass may still read; it is spent here.
 */
export async function refreshSegmentSizes(deps: SegmentSizeDeps, tenant: string, now: number, budget: { events: number }, opts: { refreshSeconds?: number; leafCap?: number } = {}): Promise<number> {
  const refresh = opts.refreshSeconds ?? SIZE_REFRESH_SECONDS;
  const cap = opts.leafCap ?? LEAF_EVENT_CAP;
  const due = (await deps.console.list<StoredSegment>(tenant, 'segment')).filter((s) => s.size_computed_at === null || now - s.size_computed_at >= refresh);
  const reads = new Map<string, Promise<SegmentEventCounts>>();
  const leaf = (type: string, days: number) => {
    const key = `${type}\u0000${days}`;
    let r = reads.get(key);
    if (!r) {
      r = deps.events.countByUser(tenant, type, now - days * 86_400, cap).then((c) => {
        budget.events -= c.read;
        return c;
      });
      reads.set(key, r);
    }
    return r;
  };
  let computed = 0;
  for (const s of due) {
    if (budget.events <= 0) break;
    const size = (await members(s.definition, leaf)).size;
    // Only if the segment is still as read: an estimate of a definition changed meanwhile is dropped.
    if (await deps.console.update(tenant, 'segment', s.id, { size_estimate: size, size_computed_at: now }, { _rev: s._rev })) computed++;
  }
  return computed;
}
