import type { ConsoleRecord, ConsoleStore } from '../domain/console-records.ts';
import type { SegmentEventReader, SegmentEventTimes } from '../domain/segment-events.ts';
import type { Segment, SegmentDefinition } from './types.ts';

/*
 * Segment size estimates, refreshed by the maintenance pass: per segment, the distinct users
 * whose events satisfy its definition now, as serving decides membership (a leaf: at least
 * `min_count` events of `event_type` created within `within_days`; `all` / `any` of those).
 *
 * Cost: a pass reads a tenant's events of each type once, at the longest window its due segments
 * give the type, and counts every window of the type from that read. An estimate: a read takes at
 * most TYPE_EVENT_CAP of the newest events, so a window holding more counts only its newest part (a
 * lower bound). A pass reads at most PASS_EVENT_BUDGET events over every tenant: a segment is
 * computed only while the reads it still needs fit in what is left at that cap each, else it waits
 * for a later pass; the pass's first segment always is (its reads share the whole budget), so
 * every pass computes one at least. Until 2026-12-05 each (type, window) of a definition was read
 * apart, up to 50,000 events each, and the budget was checked only between segments: one
 * definition (an `any` of leaves over 365 windows) could read about 18 million events in one pass.
 */

/** Events read per event type of a tenant in one pass at most. */
export const TYPE_EVENT_CAP = 50_000;
/** How old an estimate may grow before a pass computes it again (a new or redefined segment has none: the next pass computes it). */
export const SIZE_REFRESH_SECONDS = 3600;
/** Events one pass reads at most over every tenant; segments left over wait for the next pass. */
export const PASS_EVENT_BUDGET = 400_000;

/** What a maintenance pass may still read (`events`, spent by `refreshSegmentSizes`), and whether it has read for a segment yet. */
export interface PassBudget {
  events: number;
  started?: boolean;
}

export interface SegmentSizeDeps {
  console: Pick<ConsoleStore, 'list' | 'update'>;
  events: SegmentEventReader;
}

type StoredSegment = Segment & ConsoleRecord & { _rev: number };

/** Per event type a definition names, the longest window (days) of its leaves, added to `into`. */
function windowsOf(def: SegmentDefinition, into = new Map<string, number>()): Map<string, number> {
  if ('all' in def) for (const d of def.all) windowsOf(d, into);
  else if ('any' in def) for (const d of def.any) windowsOf(d, into);
  else into.set(def.event_type, Math.max(into.get(def.event_type) ?? 0, def.within_days));
  return into;
}

/** The users a definition selects, from the per-user counts of each leaf's events. */
async function members(def: SegmentDefinition, leaf: (type: string, days: number) => Promise<Map<string, number>>): Promise<Set<string>> {
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
  const counts = await leaf(def.event_type, def.within_days);
  return new Set([...counts].filter(([, n]) => n >= def.min_count).map(([u]) => u));
}

/** Per user, how many of the events read were created at or after `since`. */
function countedSince(read: SegmentEventTimes, since: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [user, times] of read.times) {
    let n = 0;
    for (const t of times) if (t >= since) n++;
    if (n > 0) out.set(user, n);
  }
  return out;
}

/**
 * Computes the estimates of a tenant's segments that have none or an old one, within what the
 * pass may still read (`budget`, spent here). A tenant without segments costs one Query.
 */
export async function refreshSegmentSizes(deps: SegmentSizeDeps, tenant: string, now: number, budget: PassBudget, opts: { refreshSeconds?: number; typeCap?: number } = {}): Promise<number> {
  const refresh = opts.refreshSeconds ?? SIZE_REFRESH_SECONDS;
  const cap = opts.typeCap ?? TYPE_EVENT_CAP;
  const due = (await deps.console.list<StoredSegment>(tenant, 'segment')).filter((s) => s.size_computed_at === null || now - s.size_computed_at >= refresh);
  if (due.length === 0) return 0;
  const longest = new Map<string, number>();
  for (const s of due) windowsOf(s.definition, longest);
  const reads = new Map<string, Promise<SegmentEventTimes>>();
  const read = (type: string, limit: number) =>
    deps.events.timesByUser(tenant, type, now - (longest.get(type) ?? 0) * 86_400, limit).then((r) => {
      budget.events -= r.read;
      return r;
    });
  const counts = new Map<string, Promise<Map<string, number>>>();
  const leaf = (type: string, days: number) => {
    const key = `${type}\u0000${days}`;
    let c = counts.get(key);
    if (!c) {
      c = (reads.get(type) as Promise<SegmentEventTimes>).then((r) => countedSince(r, now - days * 86_400));
      counts.set(key, c);
    }
    return c;
  };
  let computed = 0;
  for (const s of due) {
    const missing = [...windowsOf(s.definition).keys()].filter((t) => !reads.has(t));
    if (missing.length > 0) {
      const each = Math.min(cap, Math.floor(budget.events / missing.length));
      // Past the pass's first segment, only one whose reads fit at the cap each: one that does not waits.
      if (budget.started && each < cap) continue;
      budget.started = true;
      for (const t of missing) reads.set(t, read(t, Math.max(1, each)));
    }
    const size = (await members(s.definition, leaf)).size;
    // Only if the segment is still as read: an estimate of a definition changed meanwhile is dropped.
    if (await deps.console.update(tenant, 'segment', s.id, { size_estimate: size, size_computed_at: now }, { _rev: s._rev })) computed++;
  }
  return computed;
}
