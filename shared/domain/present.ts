import type { EventRecord, ItemRecord, Json, JsonObject } from './types.ts';

/*
 * The resources as the APIs answer them, and the one list presenter of each API: every list
 * answer of the Core API goes through `listOf`, every one of the Platform API through
 * `platformList`.
 */

/** The Core API list envelope. */
export interface ListEnvelope<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  url: string;
}

/** A Core API list: the cursor of a page that has more is its last resource's id. */
export function listOf<T extends { id: string }>(url: string, data: T[], hasMore: boolean): ListEnvelope<T> {
  const last = data[data.length - 1];
  return coreList(url, data, { hasMore, cursor: hasMore && last ? last.id : null }, {});
}

/** A Core API list with a cursor of its own (search's), and what the answer adds after the envelope (`total`, `request_id`, ...). */
export function coreList<T, X extends object>(url: string, data: T[], page: { hasMore: boolean; cursor: string | null }, extra: X): ListEnvelope<T> & X {
  return { object: 'list', data, has_more: page.hasMore, next_cursor: page.cursor, url, ...extra };
}

/** The Platform API list envelope. */
export interface PlatformList<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** A Platform API list: a whole collection, or a page of one with the cursor of the next (null on the last). */
export function platformList<T>(data: T[], page: { hasMore: boolean; cursor: string | null } = { hasMore: false, cursor: null }): PlatformList<T> {
  return { data, has_more: page.hasMore, next_cursor: page.hasMore ? page.cursor : null };
}

export function itemResource(r: ItemRecord) {
  return {
    id: String(r.id),
    object: 'item' as const,
    name: r.name,
    ...(r.description !== undefined ? { description: r.description } : {}),
    metadata: r.metadata,
    active: r.active,
    created: r.created,
    updated_at: r.updated_at,
    embedding_updated_at: r.embedding_updated_at,
  };
}
export type ItemResource = ReturnType<typeof itemResource>;

export function eventResource(r: EventRecord) {
  // Metadata sent with the event is kept; the keys the spec names (context_id, the type-named
  // object) are the event's own: the type-named one is its payload, absent without one.
  const { metadata: sent, ...extra } = r.extra ?? {};
  const metadata: JsonObject = { ...(sent !== null && typeof sent === 'object' && !Array.isArray(sent) ? sent : {}), context_id: r.context_id };
  if (r.payload !== undefined) metadata[r.type] = r.payload;
  else delete metadata[r.type];
  const typed: Record<string, Json> = r.payload !== undefined ? { [r.type]: r.payload } : {};
  return {
    ...extra,
    id: String(r.id),
    object: 'event' as const,
    type: r.type,
    user_id: r.user_id,
    item_id: r.item_id,
    ...typed,
    session_id: r.session_id,
    request_id: r.request_id,
    context_id: r.context_id,
    placement: r.placement,
    metadata,
    occurred_at: r.occurred_at,
    created: r.created,
  };
}
export type EventResource = ReturnType<typeof eventResource>;
