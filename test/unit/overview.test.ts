import { describe, expect, it } from 'vitest';
import { eventsPerDay } from '../../shared/domain/events.ts';
import { DAY_COUNTS_KEPT_DAYS, type EventStore } from '../../shared/domain/types.ts';

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

  it('tells expired counts from events never counted: a first count on the oldest day still kept is no sign of uncounted events', async () => {
    const now = at('2027-12-10', 3600);
    // Events since 2026-10-01, every one counted; the counts of days before the oldest still kept have expired.
    const keptFrom = new Date((now - (DAY_COUNTS_KEPT_DAYS - 1) * 86_400) * 1000).toISOString().slice(0, 10);
    expect((await eventsPerDay(store({}, keptFrom, at('2026-10-01')), 't', 14, now)).counted_from).toBeNull();
    // Expired rows not yet deleted (TTL deletes late) read older still: the same.
    expect((await eventsPerDay(store({}, '2026-11-01', at('2026-10-01')), 't', 14, now)).counted_from).toBeNull();
    // A first count a day after the oldest day kept is one that began part way through that day.
    const dayAfter = new Date((now - (DAY_COUNTS_KEPT_DAYS - 2) * 86_400) * 1000).toISOString().slice(0, 10);
    expect((await eventsPerDay(store({}, dayAfter, at('2026-10-01')), 't', 14, now)).counted_from).not.toBeNull();
  });
});
