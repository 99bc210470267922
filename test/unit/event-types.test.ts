import { describe, expect, it } from 'vitest';
import { NotFound } from '../../shared/domain/errors.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import { updateEventType, type EventType } from '../../shared/domain/event-types.ts';

/** One stored event type, and a store whose write lets `meanwhile` run before it answers (another request's PATCH or DELETE). */
function store(meanwhile: (rec: { current: EventType | undefined }) => void) {
  const rec: { current: EventType | undefined } = { current: { id: 4, name: 'purchase', weight: 5, created: 1 } };
  const c = {
    get: async () => rec.current && { ...rec.current },
    // The event types, read before the write until no create of its name at once may take it back (nameDecided).
    list: async () => (rec.current ? [{ ...rec.current }] : []),
    update: async (_t: string, _k: string, _id: number, set: Partial<EventType>) => {
      if (!rec.current) return false;
      rec.current = { ...rec.current, ...set };
      meanwhile(rec);
      return true;
    },
  } as Partial<ConsoleStore> as ConsoleStore;
  return { c, rec };
}

describe('PATCH /api/event-types/{id}', () => {
  it('answers the weight this request wrote, though another PATCH landed right after it', async () => {
    const { c, rec } = store((r) => {
      r.current = { ...(r.current as EventType), weight: 80 };
    });
    expect(await updateEventType(c, 't', 4, { weight: 30 })).toEqual({ id: 4, name: 'purchase', weight: 30, created: 1 });
    expect(rec.current?.weight).toBe(80);
  });

  it('answers the record, not nothing, when a DELETE came right after the write', async () => {
    const { c } = store((r) => {
      r.current = undefined;
    });
    expect(await updateEventType(c, 't', 4, { weight: 30 })).toMatchObject({ id: 4, weight: 30 });
  });

  it('a type deleted before the write is 404', async () => {
    const { c, rec } = store(() => undefined);
    rec.current = undefined;
    await expect(updateEventType(c, 't', 4, { weight: 30 })).rejects.toBeInstanceOf(NotFound);
  });
});
