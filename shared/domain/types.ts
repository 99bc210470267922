/** Domain records and the store interfaces the domain depends on (implemented in shared/data). */
export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export interface ItemRecord {
  id: number;
  name: string;
  description?: string;
  metadata: JsonObject;
  active: boolean;
  created: number;
  updated_at: number;
  embedding_updated_at: number | null;
}

export interface NewItem {
  name: string;
  description?: string;
  metadata?: JsonObject;
}

export interface ItemPatch {
  name?: string;
  description?: string;
  metadata?: JsonObject;
  active?: boolean;
}

export interface ItemListQuery {
  after?: number;
  limit: number;
  category?: string;
  createdAfter?: number;
  createdBefore?: number;
}

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

export interface ItemStore {
  create(tenant: string, items: NewItem[], now: number): Promise<ItemRecord[]>;
  get(tenant: string, id: number): Promise<ItemRecord | undefined>;
  /** undefined when the item does not exist. */
  update(tenant: string, id: number, patch: ItemPatch, now: number): Promise<ItemRecord | undefined>;
  /** false when the item does not exist. */
  delete(tenant: string, id: number): Promise<boolean>;
  list(tenant: string, q: ItemListQuery): Promise<Page<ItemRecord>>;
}

export interface EventRecord {
  id: number;
  type: string;
  user_id: string;
  item_id: string;
  context_id: string | null;
  session_id: string | null;
  request_id: string | null;
  placement: string | null;
  occurred_at: number;
  created: number;
  /** The type-named object, when sent. */
  payload?: JsonObject;
  /** Additional properties sent with the event. */
  extra: JsonObject;
}

export type NewEvent = Omit<EventRecord, 'id' | 'created' | 'occurred_at'> & { occurred_at?: number };

export interface EventListQuery {
  after?: number;
  limit: number;
  userId?: string;
  type?: string;
}

export interface EventStore {
  append(tenant: string, events: NewEvent[], now: number): Promise<EventRecord[]>;
  get(tenant: string, id: number): Promise<EventRecord | undefined>;
  list(tenant: string, q: EventListQuery): Promise<Page<EventRecord>>;
}
