import { describe, expect, it } from 'vitest';
import { eventsPerDay } from '../../shared/domain/events.ts';
import type { EventStore } from '../../shared/domain/types.ts';

/** A store that answers the overview's two reads: the day counts as given, and the newest event. */
function store(perDay: Record<string, number>, firstCounted: string | null, oldestEventAt: number | null, newest?: number): EventStore {
  return {
    ingestedPerDay: async (_tenant: string, from: string, to: string) => ({
      perDay: new Map(Object.entries(perDay).filter(([d]) => d >= from && d <= to)),
      firstCounted,
      oldestEventAt,
    }),
    latest: async () => (newest === undefined ? [] : [{ id: 9, item_id: '1', type: 'view', created: newest }]),
  } as unknown as EventStore;
}

const at = (day: string, seconds = 0) => Date.parse(`${day}T00:00:00Z`) / 1000 + seconds;

describe('the overview of events per day', () => {
  it("lists every day of the period, oldest first, with its count; today's included", async () => {
    const o = await eventsPerDay(
      store({ '2026-11-28': 7, '2026-11-30': 12_345, '2026-12-02': 3, '2026-11-20': 1 }, '2026-11-20', at('2026-11-20'), at('2026-12-02', 50)),
      't',
      3,
      at('2026-12-02', 100),
    );
    expect(o).toEqual({
      events_per_day: [
        { day: '2026-11-30', count: 12_345 },
        { day: '2026-12-01', count: 0 },
        { day: '2026-12-02', count: 3 },
      ],
      counted_from: null,
      latest_event_at: at('2026-12-02', 50),
    });
    expect(await eventsPerDay(store({}, null, null), 't', 2, at('2026-12-02'))).toEqual({
      events_per_day: [
        { day: '2026-12-01', count: 0 },
        { day: '2026-12-02', count: 0 },
      ],
      counted_from: null,
      latest_event_at: null,
    });
  });

  it('says from which day the counts are whole when events were stored before they were kept', async () => {
    // Events from the 20th, counted from part way through the 25th: the 26th is the first whole day.
    expect((await eventsPerDay(store({ '2026-11-25': 4 }, '2026-11-25', at('2026-11-20', 30)), 't', 14, at('2026-12-02'))).counted_from).toBe('2026-11-26');
    // Events stored, none counted yet: tomorrow.
    expect((await eventsPerDay(store({}, null, at('2026-11-20')), 't', 14, at('2026-12-02', 7200))).counted_from).toBe('2026-12-03');
  });
});
