import { describe, expect, it } from 'vitest';
import { PASS_EVENT_BUDGET, refreshSegmentSizes, TYPE_EVENT_CAP, type PassBudget } from '../../shared/control/segment-size.ts';
import type { SegmentDefinition } from '../../shared/control/types.ts';
import type { SegmentEventReader } from '../../shared/domain/segment-events.ts';

const NOW = 1_800_000_000;
const DAY = 86_400;

/** A tenant's segments in memory, as refreshSegmentSizes lists and updates them. */
function segments(definitions: SegmentDefinition[]) {
  const rows = definitions.map((definition, i) => ({
    id: i + 1,
    name: `s${i + 1}`,
    description: '',
    definition,
    size_estimate: null as number | null,
    size_computed_at: null as number | null,
    created: 1,
    updated_at: 1,
    _rev: 1,
  }));
  const console = {
    list: async () => rows.map((r) => ({ ...r })),
    update: async (_t: string, _k: string, id: number, patch: object) => (Object.assign(rows[id - 1] as object, patch), true),
  } as never;
  return { console, rows };
}

/** A reader of a busy log: every read takes all it may (its cap), the reads recorded. */
function busy() {
  const reads: { type: string; since: number; cap: number }[] = [];
  const events: SegmentEventReader = {
    timesByUser: async (_t, type, since, cap) => {
      reads.push({ type, since, cap });
      return { times: new Map([['u', [NOW]]]), read: cap };
    },
  };
  return { events, reads };
}

const leaf = (event_type: string, within_days: number, min_count = 1) => ({ event_type, min_count, within_days });

describe('segment size estimates: what a pass reads', () => {
  it('reads each event type once, at the longest window the due segments give it, and counts every window from that read', async () => {
    // An `any` of 400 leaves of one type over windows of 1 to 365 days (a valid definition), and a leaf of another type.
    let d = 0;
    const wide = { any: Array.from({ length: 10 }, () => ({ any: Array.from({ length: 10 }, () => ({ any: Array.from({ length: 4 }, () => leaf('view', (d++ % 365) + 1, 3)) })) })) };
    const { console, rows } = segments([wide, { all: [leaf('view', 7), leaf('buy', 30)] }]);
    const reads: [string, number][] = [];
    const times: Record<string, [string, number[]][]> = {
      // u1: three views 100 days ago (in windows from 100 days); u2: one view a day ago, and a purchase; u3: three views 2 days ago, no purchase.
      view: [
        ['u1', [NOW - 100 * DAY, NOW - 100 * DAY, NOW - 100 * DAY]],
        ['u2', [NOW - DAY]],
        ['u3', [NOW - 2 * DAY, NOW - 2 * DAY, NOW - 2 * DAY]],
      ],
      buy: [['u2', [NOW - 3 * DAY]]],
    };
    const events: SegmentEventReader = {
      timesByUser: async (_t, type, since) => {
        reads.push([type, (NOW - since) / DAY]);
        const held = times[type] ?? [];
        return { times: new Map(held), read: held.reduce((n, [, ts]) => n + ts.length, 0) };
      },
    };
    const budget: PassBudget = { events: PASS_EVENT_BUDGET };
    expect(await refreshSegmentSizes({ console, events }, 't', NOW, budget)).toBe(2);
    // Until 2026-12-05, 365 reads of view (one per window), each up to 50,000 events.
    expect(reads).toEqual([
      ['view', 365],
      ['buy', 30],
    ]);
    expect(rows.map((r) => r.size_estimate)).toEqual([2, 1]);
    expect(budget.events).toBe(PASS_EVENT_BUDGET - 8);
  });

  it('past its first segment, a pass computes only a segment whose reads fit in what is left at the cap each: one that does not waits, a later one that fits goes', async () => {
    const { console, rows } = segments([leaf('x', 30), { all: [leaf('y', 30), leaf('z', 30)] }, leaf('w', 30)]);
    const { events, reads } = busy();
    const budget: PassBudget = { events: 120_000 };
    expect(await refreshSegmentSizes({ console, events }, 't', NOW, budget)).toBe(2);
    expect(rows.map((r) => r.size_computed_at)).toEqual([NOW, null, NOW]);
    expect(reads.map((r) => [r.type, r.cap])).toEqual([
      ['x', TYPE_EVENT_CAP],
      ['w', TYPE_EVENT_CAP],
    ]);
    expect(budget.events).toBe(20_000);
    // The next pass (a budget of its own) computes the one that waited first.
    const next: PassBudget = { events: PASS_EVENT_BUDGET };
    expect(await refreshSegmentSizes({ console, events }, 't', NOW + 60, next)).toBe(1);
    expect(rows[1]?.size_computed_at).toBe(NOW + 60);
  });

  it("computes a pass's first segment however many types it reads, their reads sharing the pass's budget", async () => {
    const types = Array.from({ length: 10 }, (_, i) => leaf(`t${i}`, 30));
    const { console, rows } = segments([{ any: types }, leaf('later', 1)]);
    const { events, reads } = busy();
    const budget: PassBudget = { events: PASS_EVENT_BUDGET };
    expect(await refreshSegmentSizes({ console, events }, 't', NOW, budget)).toBe(1);
    expect(rows.map((r) => r.size_computed_at)).toEqual([NOW, null]);
    expect(reads).toHaveLength(10);
    expect(reads.every((r) => r.cap === PASS_EVENT_BUDGET / 10)).toBe(true);
    expect(budget.events).toBe(0);
  });
});
