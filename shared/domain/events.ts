import { EventNotFound } from '../errors.ts';
import type { IngestEvent, IngestEventsBody, ListEventsQuery } from '../schemas/events.ts';
import { nowSeconds } from './items.ts';
import { eventResource, listOf } from './present.ts';
import type { EventStore, IdPlan, JsonObject, NewEvent } from './types.ts';

const KNOWN = new Set(['type', 'user_id', 'item_id', 'context_id', 'occurred_at', 'session_id', 'request_id', 'placement']);

function toNewEvent(e: IngestEvent): NewEvent {
  const extra: JsonObject = {};
  let payload: JsonObject | undefined;
  for (const [k, v] of Object.entries(e)) {
    if (KNOWN.has(k) || v === undefined) continue;
    if (k === e.type) payload = v as JsonObject;
    else extra[k] = v;
  }
  return {
    type: e.type,
    user_id: e.user_id,
    item_id: e.item_id,
    context_id: e.context_id ?? null,
    session_id: e.session_id ?? null,
    request_id: e.request_id ?? null,
    placement: e.placement ?? null,
    ...(e.occurred_at !== undefined ? { occurred_at: e.occurred_at } : {}),
    ...(payload !== undefined ? { payload } : {}),
    extra,
  };
}

/** Stores every event of an already validated batch; answers the stored events in request order. */
export async function ingestEvents(store: EventStore, tenant: string, body: IngestEventsBody, ids?: IdPlan) {
  const stored = await store.append(tenant, body.map(toNewEvent), nowSeconds(), ids);
  return listOf('/v1/events', stored.map(eventResource), false);
}

export async function getEvent(store: EventStore, tenant: string, id: number) {
  const r = await store.get(tenant, id);
  if (!r) throw new EventNotFound(id);
  return eventResource(r);
}

export async function listEvents(store: EventStore, tenant: string, q: ListEventsQuery) {
  const page = await store.list(tenant, {
    limit: q.limit,
    ...(q.starting_after !== undefined ? { after: q.starting_after } : {}),
    ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
    ...(q.type !== undefined ? { type: q.type } : {}),
  });
  return listOf('/v1/events', page.rows.map(eventResource), page.hasMore);
}
