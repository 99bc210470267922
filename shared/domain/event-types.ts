import type { z } from 'zod/mini';
import { nowSeconds } from '../clock.ts';
import type * as S from '../schemas/console.ts';
import { EVENT_TYPES, nameDecided, nameSettled, newId, notFound, putNamed, recordPage, storedBefore, type ConsoleRecord, type ConsoleStore } from './console-records.ts';
import type { IdPlan } from './types.ts';
import { Conflict } from './errors.ts';

/** Event types: the kinds of interaction a tenant sends, each with the weight training gives it. */

export interface EventType extends ConsoleRecord {
  name: string;
  weight: number;
  created: number;
}

export async function createEventType(c: ConsoleStore, tenant: string, b: z.output<typeof S.eventTypeBody>, ids?: IdPlan) {
  const exists = () => new Conflict('event_type_exists', `Event type ${b.name} exists.`);
  const sameName = (e: EventType) => e.name === b.name;
  const done = await storedBefore<EventType>(c, tenant, 'event_type', ids);
  // The failed attempt's record, checked as that attempt would have (it may have been cut off before: `nameSettled`).
  if (done) {
    await nameSettled(c, tenant, 'event_type', done, sameName, exists, { weight: b.weight });
    return done;
  }
  if ((await c.list<EventType>(tenant, 'event_type')).some(sameName)) throw exists();
  const rec: EventType = { id: await newId(() => c.nextId(tenant, 'event_type'), ids), name: b.name, weight: b.weight, created: nowSeconds() };
  await putNamed(c, tenant, 'event_type', rec, sameName, exists, EVENT_TYPES, { weight: rec.weight });
  return rec;
}
export const listEventTypes = (c: ConsoleStore, tenant: string, q: S.RecordPageQuery) => recordPage(c, tenant, 'event_type', { limit: q.limit, after: q.starting_after }, (r: EventType) => r);
export async function getEventType(c: ConsoleStore, tenant: string, id: number): Promise<EventType> {
  const r = await c.get<EventType>(tenant, 'event_type', id);
  if (!r) throw notFound('event type', id);
  return r;
}
/**
 * Sets an event type's weight, its one field that changes, and answers the record as this request
 * wrote it. Read back after the write, two PATCHes at once could each answer the other's weight,
 * and a DELETE in between left nothing to answer.
 */
export async function updateEventType(c: ConsoleStore, tenant: string, id: number, b: z.output<typeof S.eventTypePatch>) {
  // Once the name is decided (a create of it at once may still take this record back: `nameDecided`).
  const cur = await nameDecided<EventType>(c, tenant, 'event_type', id, (x, y) => x.name === y.name);
  if (!cur) throw notFound('event type', id);
  if (!(await c.update(tenant, 'event_type', id, { weight: b.weight }))) throw notFound('event type', id);
  return { ...cur, weight: b.weight };
}
