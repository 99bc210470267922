import type { EventRecord, ItemRecord, Json, JsonObject } from './types.ts';

/** The Core API list envelope. */
export interface ListEnvelope<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  url: string;
}

export function listOf<T extends { id: string }>(url: string, data: T[], hasMore: boolean): ListEnvelope<T> {
  const last = data[data.length - 1];
  return { object: 'list', data, has_more: hasMore, next_cursor: hasMore && last ? last.id : null, url };
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
  // object) are the event's own.
  const { metadata: sent, ...extra } = r.extra ?? {};
  const metadata: JsonObject = { ...(sent !== null && typeof sent === 'object' && !Array.isArray(sent) ? sent : {}), context_id: r.context_id };
  if (r.payload !== undefined) metadata[r.type] = r.payload;
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
