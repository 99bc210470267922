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
  /** Where the next page starts when it is not after the last row (a read that stopped before its page filled). */
  next?: number;
}

export interface ItemWithVector extends ItemRecord {
  vector: Float32Array | null;
  /** When (ms) the vector was saved, where the table holds it (internal: search's later pages, `Cursor.vectorsAsOf`). */
  embedded_ms?: number | undefined;
  /**
   * When (ms) the item's first vector of its vector's width was saved, where the table holds it
   * (rows embedded since 2026-12-07; internal): a later page of a search scores an item re-embedded
   * since its first page with its current vector when it had one by then that no longer can be
   * read (`hadVectorBy`). A vector of another width (an older model's) is none, and does not count.
   */
  first_embedded_ms?: number | undefined;
}

/** What changed in a tenant's catalog after some time: the fresh part of search. */
export interface ItemChanges {
  items: ItemWithVector[];
  /** Deleted item ids with their deletion time. */
  deleted: { id: number; at: number }[];
  /** False when `limit` cut the answer short. */
  complete: boolean;
  /** When incomplete: pass it back as `after` to read on from the last change returned. */
  cursor?: string;
  /** The `ChangeKey.state` of every change returned (items and deletions). */
  states: string[];
}

/** One item's latest change, listed without its data. */
export interface ChangeKey {
  /** Differs whenever the item's state does. */
  state: string;
  /** Pass to `changedSince` as `after` to read the changes after this one. */
  cursor: string;
  id: number;
  deleted: boolean;
  /** When it changed (seconds): its deletion, else its latest content or embedding update. */
  at: number;
}

/**
 * Which ids a create writes: fresh ones, or those an earlier attempt of the same idempotent
 * request reserved (it may have written some rows before it failed: writing them again under
 * the same ids leaves no duplicate).
 */
export interface IdPlan {
  /** The first id an earlier attempt reserved. */
  reuse?: number | undefined;
  /** Called with the first id of fresh ones before any row is written. */
  reserved?: ((first: number) => Promise<void>) | undefined;
  /**
   * The request's Idempotency-Key: each event row written names it, so that an erasure of a
   * user of the event finds the answer stored under the key (which holds the event) and forgets it.
   */
  idempotencyKey?: string | undefined;
}

export interface ItemStore {
  create(tenant: string, items: NewItem[], now: number, ids?: IdPlan): Promise<ItemRecord[]>;
  /** undefined when the item does not exist. */
  get(tenant: string, id: number): Promise<ItemRecord | undefined>;
  /**
   * Items by id in one round trip (BatchGetItem), in the ids' order: undefined where none.
   * Eventually consistent unless `consistent` (then a row stored a moment ago is found).
   */
  getMany(tenant: string, ids: readonly number[], opts?: { consistent?: boolean }): Promise<(ItemRecord | undefined)[]>;
  /**
   * Sets the given fields. Name, description or metadata among them mark the embedding behind,
   * unless `sameContentAs` says they equal the content of that content version: then they are
   * written as they are, and only while the item is still at that version.
   * undefined when the item does not exist (or, with `sameContentAs`, is at another version).
   */
  update(tenant: string, id: number, patch: ItemPatch, now: number, opts?: { sameContentAs?: number }): Promise<ItemRecord | undefined>;
  /** false when the item does not exist. */
  delete(tenant: string, id: number, now: number): Promise<boolean>;
  list(tenant: string, q: ItemListQuery): Promise<Page<ItemRecord>>;
  /** The ids and creation times of the `limit` items of highest id below `below`, highest first (read consistently). */
  latestIds(tenant: string, limit: number, below: number): Promise<{ id: number; created: number }[]>;
  /** How many of the ids from `from` to `to` are of items deleted (a tombstone: kept a week at least), counting up to `upTo`. */
  deletedIn(tenant: string, from: number, to: number, upTo: number): Promise<number>;
  /** The highest item id handed out so far (0 before the first create), read consistently. */
  highestIdTaken(tenant: string): Promise<number>;
  /**
   * Items changed (content, activity, embedding) and items deleted at or after `since` (seconds),
   * oldest first, and before `before` (seconds) when it is given.
   */
  changedSince(tenant: string, since: number, limit: number, after?: string, before?: number): Promise<ItemChanges>;
  /** When the first and the last change at or after `since` were made (seconds); undefined when there is none. */
  changeSpanSince(tenant: string, since: number): Promise<{ first: number; last: number } | undefined>;
  /**
   * The changes after `since`, oldest first, without item data (cheap to list again): `state`
   * differs whenever the item's state does; `cursor` goes to `changedSince` to read after it.
   * `besideReads`: listed where `changedSince` reads, so that every change listed is one it
   * returns (the search delta marks what it listed as read); otherwise from a listing that holds
   * only these fields, cheap at any size (the index status).
   */
  changeKeysSince(tenant: string, since: number, opts?: { besideReads?: boolean }): Promise<ChangeKey[]>;
  /** How many changes (updates and deletions) after `since`, counting no further than `upTo`. */
  countChangesSince(tenant: string, since: number, upTo: number): Promise<number>;
  /** Every item with its vector, a page at a time (index builds). */
  forEachPage(tenant: string, fn: (items: ItemWithVector[]) => void): Promise<void>;
  /** The item with its content version and the version its embedding is of. */
  /** `dims`: the stored vector's width (0 without one). */
  getForEmbedding(tenant: string, id: number): Promise<{ item: ItemRecord; contentVersion: number; embeddedVersion: number; dims: number } | undefined>;
  /** Stores a vector for that content version; 'stale' when the content changed meanwhile or the item is gone. */
  saveEmbedding(tenant: string, id: number, contentVersion: number, vector: Float32Array, now: number): Promise<'saved' | 'stale'>;
  /** A tenant's items whose embedding has been behind their content since before `olderThan`, oldest first, with that time. */
  pendingEmbeddings(tenant: string, olderThan: number, limit: number): Promise<{ id: number; since: number }[]>;
  /**
   * Puts these items among those waiting for an embedding (their vector has another width than the
   * provider's), each only while it holds the vector saved at `embeddedAt`. Answers how many.
   */
  markEmbedPending(tenant: string, items: readonly { id: number; embeddedAt: number }[], now: number): Promise<number>;
  /**
   * An item the sweep queued again: counted, and its wait moved to `next(times queued again)`
   * (later pending items come first), only while it still waits since `since`. False otherwise.
   */
  deferEmbedding(tenant: string, id: number, since: number, next: (requeues: number) => number): Promise<boolean>;
  /** How many of a tenant's items wait for an embedding. */
  pendingCount(tenant: string): Promise<number>;
  /**
   * A step of the re-keying of the tenant's category index into NFC (for the item listing's
   * `category`: rows written before 2026-12-08 are keyed as sent), reading up to `maxRows` items
   * from where the last step stopped, as of `now` (seconds); past `until` (a `performance.now()`
   * time: what the maintenance pass gives it) no further page, the next step going on. Answers how many
   * it re-keyed, and whether the re-keying is done (then a step reads one row, and none once the
   * store has seen it done).
   */
  indexCategoriesInNfc(tenant: string, now: number, maxRows: number, until?: number): Promise<{ rekeyed: number; done: boolean }>;
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

/** What serving reads of a user's latest events: which event, which item, how (the event type) and when it was ingested. */
export type RecentEvent = Pick<EventRecord, 'id' | 'item_id' | 'type' | 'created'>;

export type NewEvent = Omit<EventRecord, 'id' | 'created' | 'occurred_at'> & { occurred_at?: number };

export interface EventListQuery {
  /** The page after this id in the list's order (with `newestFirst`, older ids). */
  after?: number;
  limit: number;
  /** Newest first (by id) instead of oldest first. */
  newestFirst?: boolean;
  userId?: string;
  type?: string;
}

export interface EventStore {
  /**
   * Stores the events (each ingest also adds them to their UTC day's count, `ingestedPerDay`).
   * `leaveOut`: users whose events are not written (their ids stay unused), those of a resumed
   * retry that an erasure covers.
   */
  append(tenant: string, events: NewEvent[], now: number, ids?: IdPlan, leaveOut?: ReadonlySet<string>): Promise<EventRecord[]>;
  /**
   * Events ingested per UTC day (`YYYY-MM-DD`) from `from` to `to`, both included: days without
   * events are absent. Events stored before the counts were kept are in none: `firstCounted`, the
   * first day anything was counted (null: nothing yet), and `oldestEventAt`, the ingest time of
   * the oldest event stored (null: none), tell whether there are such. A day's count is kept
   * DAY_COUNTS_KEPT_DAYS from the day's start, then expires.
   */
  ingestedPerDay(tenant: string, from: string, to: string): Promise<{ perDay: ReadonlyMap<string, number>; firstCounted: string | null; oldestEventAt: number | null }>;
  /**
   * A user's latest events, newest first: only their id, item, type and creation time (all that
   * serving reads); with `afterId`, only events with a higher id; with `below` (and no `afterId`),
   * only those with a lower id. Read a Query page (at most 1 MB of whole events) after another;
   * with `pages`, at most that many (fewer than `limit` may then come back though the user has more).
   */
  recentByUser(tenant: string, userId: string, limit: number, afterId?: number, below?: number, pages?: number): Promise<RecentEvent[]>;
  /**
   * `recentByUser` (before `below` when given) of at most `pages` Query pages, saying whether it
   * stopped there (`cut`): fewer than `limit` read though the user may have more.
   */
  recentByUserWithin(tenant: string, userId: string, limit: number, below: number | undefined, pages: number): Promise<{ events: RecentEvent[]; cut: boolean }>;
  /**
   * The tenant's latest events across every write shard, newest (highest id) first, up to
   * `limit`: only their id, item, type and creation time. With `below`, those with a lower id,
   * read consistently.
   */
  latest(tenant: string, limit: number, below?: number): Promise<RecentEvent[]>;
  /** Every event of the tenant, a page at a time, in no particular order; `fn` returning false stops. */
  forEachPage(tenant: string, fn: (events: EventRecord[]) => void | boolean): Promise<void>;
  get(tenant: string, id: number): Promise<EventRecord | undefined>;
  list(tenant: string, q: EventListQuery): Promise<Page<EventRecord>>;
  /**
   * Deletes every event of a user (on every write shard, with its index entries) sent before it
   * began: those of ids up to `through` (by default the last id the tenant had handed out then).
   * Answers how many went. Before it deletes events written under an Idempotency-Key, it calls
   * `forget` with each such key and the latest of those events' ingest times (unix seconds), so
   * that an erasure cut off half way still finds, when repeated, the keys of the events it left.
   * Each id it deletes is marked erased first (`erasedIn`). Past `until` (a `performance.now()`
   * time: the maintenance pass's budget) it reads no further page of the user's events and answers
   * `finished: false` (one page at least is done): a call again goes on with those left.
   */
  eraseUser(
    tenant: string,
    userId: string,
    forget?: (written: ReadonlyMap<string, number>) => Promise<void>,
    through?: number,
    until?: number,
  ): Promise<{ deleted: number; through: number; finished?: boolean }>;
  /** The last event id the tenant's counter has handed out (read consistently): an erasure's bound. */
  issuedThrough(tenant: string): Promise<number>;
  /**
   * The greatest id of the user's events ingested (`created`) at or before `at` (unix seconds), 0 for
   * none: the bound of an erasure that began at `at` and recorded none (`sweepErasures`' finish of
   * one the older code cut off), its events those up to it, the user's later ones kept. Reads the
   * user's events oldest first, up to the first ingested IN_FLIGHT_SECONDS past `at` by a
   * request with no Idempotency-Key (a keyed retry resumes under ids handed out earlier).
   */
  lastSentBy(tenant: string, userId: string, at: number): Promise<number>;
  /** How many of the ids from `from` to `to` are of events an erasure deleted (marks kept 30 days), counting up to `upTo`. */
  erasedIn(tenant: string, from: number, to: number, upTo: number): Promise<number>;
}

/** How long a day's count of events ingested is kept (days from the day's start): the overview reaches back 90 days at most. */
export const DAY_COUNTS_KEPT_DAYS = 400;
