import { entity, pad, type Value } from './entity.ts';

/*
 * Every entity of the single table, declared once: its attributes and its key templates, the
 * table's own (`primary`) and each secondary index's, named for the access pattern it serves
 * (the physical GSI names, attribute names and key values are the table's, unchanged: rows
 * written before these declarations read as they did). Nothing else builds or parses a key.
 * Numeric facets are zero-padded to 16 digits, so string order is numeric order.
 */

/** Write shards of a tenant's event log (id mod N). */
export const EVENT_SHARDS = 4;
export const eventShard = (id: number): number => id % EVENT_SHARDS;
/** Write shards of a tenant's search counters. */
export const SEARCH_COUNTER_SHARDS = 8;
/** Write shards of an experiment's totals: a tenant's requests spread over this many partitions. */
export const EXPERIMENT_SHARDS = 16;

const digits = (n: number) => (v: Value) => String(v).padStart(n, '0');

// Tenants, counters, the health check

export const Tenant = entity({
  name: 'tenant',
  attributes: ['tenant', 'name', 'created'],
  indexes: {
    primary: { pk: 'TENANT#${tenant}', sk: '#TENANT' },
    /** Every tenant (maintenance passes). */
    all: { index: 'gsi1', pk: 'TENANTS', sk: '${tenant}' },
  },
});

/** A per-tenant id counter (`item`, `event`, `job`, `audit`, ...): one atomic ADD hands out a block. */
export const Counter = entity({
  name: 'counter',
  attributes: ['value'],
  indexes: { primary: { pk: 'TENANT#${tenant}', sk: 'COUNTER#${counter}' } },
});

/** Where the next maintenance pass starts among the tenants (the first one the last pass left for later). */
export const PassCursor = entity({ name: 'pass_cursor', attributes: ['next'], indexes: { primary: { pk: 'MAINTENANCE', sk: '#CURSOR' } } });

/** The row the health check reads (it never exists: the read proves the table answers). */
export const Health = entity({ name: 'health', attributes: [], indexes: { primary: { pk: 'HEALTH', sk: '#HEALTH' } } });

// Catalog

/** Items and tombstones by change time: what changed since an index was built (the search delta). */
const CHANGED_SINCE = { index: 'gsi2', pk: 'TENANT#${tenant}#ITEMUPD', sk: '${changed_at}#${id}' } as const;
/** The same keys in gsi4, which projects only each change's id, state and times (CHANGE_FIELDS): listing and counting changes. */
const CHANGE_KEYS = { ...CHANGED_SINCE, index: 'gsi4' } as const;

/**
 * An item: beside the resource fields, `content_version` (bumped by every change of name,
 * description or metadata), `embedded_version` and `embedding` (Float32 bytes) once embedded.
 */
export const Item = entity({
  name: 'item',
  attributes: ['id', 'name', 'description', 'metadata', 'active', 'created', 'updated_at', 'embedding_updated_at', 'content_version', 'embedded_version', 'embedding'],
  indexes: {
    primary: { pk: 'TENANT#${tenant}#ITEMS', sk: '${id}' },
    /** `category`: the item's string category in Unicode NFC (items.ts, `categoryKey`); rows written before 2026-12-08 hold it as sent until re-keyed. */
    byCategory: { index: 'gsi1', pk: 'TENANT#${tenant}#ITEMCAT#${category}', sk: '${id}' },
    changedSince: CHANGED_SINCE,
    changeKeys: CHANGE_KEYS,
    /** Sparse: items whose embedding is behind their content, oldest first (keys only). */
    embedPending: { index: 'gsi3', pk: 'TENANT#${tenant}#EMBEDPENDING', sk: '${pending_since}#${id}' },
  },
});

/**
 * Where the re-keying of a tenant's category index into NFC stands (`ItemStore.indexCategoriesInNfc`):
 * `since` its first step (s), `from` when the current scan of the items started (or may start),
 * `after` the last id it looked at, `up_to` the last id it looks at (absent: the catalog's end),
 * `recheck` the ids a later scan looks at again, `done` once finished.
 */
export const CategoryRekey = entity({
  name: 'category_rekey',
  attributes: ['since', 'from', 'after', 'up_to', 'recheck', 'done'],
  indexes: { primary: { pk: 'TENANT#${tenant}', sk: 'ITEMCAT#NFC' } },
});

/** A deleted item, kept a week so the search delta removes it; in the change index beside the items. */
export const Tombstone = entity({
  name: 'tombstone',
  attributes: ['id', 'deleted_at', 'ttl'],
  indexes: {
    primary: { pk: 'TENANT#${tenant}#TOMBSTONES', sk: '${id}' },
    changedSince: CHANGED_SINCE,
    changeKeys: CHANGE_KEYS,
  },
});

// Events

/**
 * An event, on its id's write shard; a user's events and a type's (sharded) have their own index.
 * `idempotency_key`: the Idempotency-Key of the request that wrote it, if any (an erasure of the
 * user forgets the answer stored under it).
 */
export const Event = entity({
  name: 'event',
  attributes: ['id', 'type', 'user_id', 'item_id', 'context_id', 'session_id', 'request_id', 'placement', 'occurred_at', 'created', 'payload', 'extra', 'idempotency_key'],
  indexes: {
    primary: { pk: 'TENANT#${tenant}#EVENTS#${shard}', sk: '${id}' },
    byUser: { index: 'gsi1', pk: 'TENANT#${tenant}#EVUSER#${user_id}', sk: '${id}' },
    byType: { index: 'gsi2', pk: 'TENANT#${tenant}#EVTYPE#${type}#${shard}', sk: '${id}' },
  },
  format: { shard: String },
});

/**
 * An event an erasure deleted (`eraseUser`): its id alone, so the event list tells the gap it left
 * from an id still being written (shared/domain/in-flight.ts), as an item's tombstone does. `ttl`:
 * kept ERASED_EVENT_MARK_SECONDS.
 */
export const ErasedEvent = entity({
  name: 'erased_event',
  attributes: ['id', 'ttl'],
  indexes: { primary: { pk: 'TENANT#${tenant}#ERASED_EVENTS', sk: '${id}' } },
});

/**
 * Events ingested per UTC day (`2026-12-02`), one shard of them (the shard of the first id of each
 * ingest request that added to it): what the console's overview charts, exact however many there
 * are, without reading the log. `ttl`: the row goes a while after the overview can reach its day.
 */
export const EventDay = entity({
  name: 'event_day',
  attributes: ['count', 'ttl'],
  indexes: { primary: { pk: 'TENANT#${tenant}#EVDAY#${shard}', sk: '${day}' } },
  format: { shard: String },
});

/**
 * A tenant's popularity snapshot (shared/recs/trending.ts): its latest `events` events counted at
 * `counted_at` (ms), `top` the most named items with their counts, packed (popularity.ts). One
 * row per tenant, read whole by a container that has no count of its own.
 */
export const PopularSnapshot = entity({
  name: 'popular_snapshot',
  attributes: ['counted_at', 'events', 'top'],
  indexes: { primary: { pk: 'TENANT#${tenant}#POPULAR', sk: '#POPULAR' } },
});

// Credentials

export const Client = entity({
  name: 'client',
  attributes: ['client_id', 'tenant', 'name', 'scopes', 'secret_hash', 'created'],
  indexes: {
    primary: { pk: 'CLIENT#${client_id}', sk: '#CLIENT' },
    ofTenant: { index: 'gsi1', pk: 'TENANT#${tenant}#CLIENTS', sk: '${created}#${client_id}' },
  },
});

export const ApiKey = entity({
  name: 'api_key',
  attributes: ['id', 'tenant', 'name', 'environment', 'scopes', 'key_hash', 'created'],
  indexes: {
    primary: { pk: 'APIKEY#${id}', sk: '#APIKEY' },
    ofTenant: { index: 'gsi1', pk: 'TENANT#${tenant}#APIKEYS', sk: '${created}#${id}' },
  },
});

export const ConsoleUser = entity({
  name: 'console_user',
  attributes: ['email', 'password_hash', 'role', 'tenant', 'created'],
  indexes: { primary: { pk: 'CONSOLEUSER#${email}', sk: '#CONSOLEUSER' } },
  format: { email: (v) => String(v).toLowerCase() },
});

/** A console session, under the SHA-256 of its id, with a TTL. */
export const ConsoleSession = entity({
  name: 'console_session',
  attributes: ['email', 'tenant', 'role', 'csrf_token', 'created', 'expires_at', 'checked_at', 'ttl'],
  indexes: { primary: { pk: 'CONSOLESESSION#${id_hash}', sk: '#CONSOLESESSION' } },
});

// Idempotency, quota

/**
 * An Idempotency-Key's record: `state` pending, failed or done (with the stored answer), or
 * erased (its request wrote events of a user erased since: nothing of the request is kept but
 * its claim time and expiry).
 */
export const Idempotency = entity({
  name: 'idempotency',
  attributes: ['hash', 'state', 'owner', 'created', 'claimed', 'first_id', 'status', 'body', 'body_gz', 'chunks', 'ttl'],
  indexes: { primary: { pk: 'TENANT#${tenant}#IDEM#${key}', sk: '#IDEM' } },
});

/** Part n of a stored response too large for the key's record, as the attempt `owner` stored it. */
export const IdempotencyChunk = entity({
  name: 'idempotency_chunk',
  attributes: ['data', 'ttl'],
  indexes: { primary: { pk: 'TENANT#${tenant}#IDEM#${key}', sk: '#CHUNK#${owner}#${n}' } },
  format: { n: digits(4) },
});

/** A tenant's request quota (quota.ts): a partition of its own, outside TENANT#. */
export const Quota = entity({
  name: 'quota',
  attributes: ['tat', 'ttl'],
  indexes: { primary: { pk: 'QUOTA#${tenant}', sk: '#QUOTA' } },
});

// Console records

/**
 * A console record's partition: a partition per kind, except the kinds every recommendation
 * reads (event types and endpoints, with the erased users' markers), which share the SERVING
 * partition (serving Queries each kind's keys, and reads the user's marker by its key; training
 * and erasure read them all at once), and the control plane's (rules, segments, experiments,
 * rerank controls, with a marker row per context), which share CONTROL.
 */
const SERVING = 'TENANT#${tenant}#CONSOLE#SERVING';
const CONTROL = 'TENANT#${tenant}#CONSOLE#CONTROL';
const record = <P extends string, S extends string>(name: string, primary: { pk: P; sk: S }) => entity({ name, attributes: ['id'], indexes: { primary } });

export const EventType = record('event_type', { pk: SERVING, sk: 'event_type#${id}' });
export const Endpoint = record('endpoint', { pk: SERVING, sk: 'endpoint#${id}' });
/**
 * A user whose events were erased (DELETE /api/users/{user_id}), in the serving partition, between
 * the endpoints and the event types (`erased_user#` sorts between their keys): serving reads one
 * user's by its key, and its Queries of those two kinds do not read any.
 */
export const ErasedUser = entity({
  name: 'erased_user',
  attributes: ['user_id', 'requested_at', 'completed_at', 'models_checked_through', 'events_through'],
  indexes: { primary: { pk: SERVING, sk: 'erased_user#${user_id}' } },
});
/**
 * An erasure's second look at the user's events (shared/domain/erasure.ts `sweepErasures`), stored
 * as it begins: due once the ingests it may have raced have ended; one row per user (a later
 * erasure's is merged into it).
 */
export const ErasureSweep = entity({
  name: 'erasure_sweep',
  attributes: ['user_id', 'due_at', 'events_through'],
  indexes: { primary: { pk: 'TENANT#${tenant}#CONSOLE#ERASURE_SWEEP', sk: '${user_id}' } },
});
/**
 * Where the maintenance pass's scan of a tenant's erasure markers stands (shared/domain/erasure.ts
 * `adoptRowlessErasures`): the last marker's key part read, when the current round and the first
 * began, and whether it is over. One row per tenant.
 */
export const ErasureMarkerScan = entity({
  name: 'erasure_marker_scan',
  attributes: ['after', 'round_began', 'first_began', 'done'],
  indexes: { primary: { pk: 'TENANT#${tenant}#CONSOLE#ERASURE_MARKER_SCAN', sk: '#SCAN' } },
});
export const Context = record('context', { pk: 'TENANT#${tenant}#CONSOLE#context', sk: '${id}' });
export const Template = record('template', { pk: 'TENANT#${tenant}#CONSOLE#template', sk: '${id}' });
/**
 * A training run (the kind keeps its first name, `job`, in its keys); while it waits or runs
 * (Queued, InProgress, Stopping) also in the sparse `active` index by status, then id, which the
 * maintenance sweep reads instead of the tenant's whole history, and a list of one of those
 * statuses reads a keyed page of. Until 2026-12-05 its sort key was the id alone (partition
 * `ACTIVEJOB`), and a list of one status read every run in the index, one GetItem each, to filter
 * them; the partition and the marker (`ActiveRunsIndexed`) are new names, so the upkeep indexes a
 * tenant's runs again in the new keys.
 */
export const TrainingRun = entity({
  name: 'job',
  attributes: ['id'],
  indexes: {
    primary: { pk: 'TENANT#${tenant}#CONSOLE#job', sk: '${id}' },
    active: { index: 'gsi3', pk: 'TENANT#${tenant}#ACTIVERUNS', sk: '${active_status}#${active_id}' },
  },
});
/**
 * The index of active runs as keyed until 2026-12-05 (partition `ACTIVEJOB`, by id): a writer of
 * then (a training task started before the deploy, an invocation still running) that writes a
 * run's status puts the run there, out of `TrainingRun.indexes.active`; the upkeep reads it each
 * pass (no rows, once those writers are gone) and keys its runs again.
 */
export const TrainingRunKeyedBefore = entity({
  name: 'job',
  attributes: ['id'],
  indexes: {
    primary: { pk: 'TENANT#${tenant}#CONSOLE#job', sk: '${id}' },
    active: { index: 'gsi3', pk: 'TENANT#${tenant}#ACTIVEJOB', sk: '${active_id}' },
  },
});
/**
 * How far a tenant's runs written before the `active` index (2026-12-05) have been put in it: the
 * highest id read of a run created over 15 minutes before. Runs above it are read again
 * (`activeRuns`' upkeep), so a run an older writer stored during an upgrade gets its index key too,
 * even one stored after a higher id.
 */
export const ActiveRunsIndexed = entity({ name: 'active_runs_indexed', attributes: ['through'], indexes: { primary: { pk: 'TENANT#${tenant}', sk: 'ACTIVERUNS#INDEXED' } } });
export const ModelVersion = record('model', { pk: 'TENANT#${tenant}#CONSOLE#model', sk: '${id}' });
/** A run whose version's auto-promotion is still to be decided (by the run's id), until the maintenance pass finds it decided. */
export const PromotionDue = record('promotion_due', { pk: 'TENANT#${tenant}#CONSOLE#promotion_due', sk: '${id}' });
export const Rule = record('rule', { pk: CONTROL, sk: 'rule#${id}' });
export const Segment = record('segment', { pk: CONTROL, sk: 'segment#${id}' });
export const Experiment = record('experiment', { pk: CONTROL, sk: 'experiment#${id}' });
/**
 * A Stopped experiment, in a partition of its own out of CONTROL: serving reads CONTROL whole
 * every few seconds (controlConfig) and needs only Draft and Running experiments, and a tenant's
 * experiments have no cap. An experiment's stop moves its row here in one transaction (console.ts);
 * until 2026-12-07 Stopped ones stayed in CONTROL, and such rows are moved when the control plane
 * lists the tenant's experiments (they are left out of the control config meanwhile).
 */
export const StoppedExperiment = record('experiment', { pk: 'TENANT#${tenant}#CONSOLE#experiment_stopped', sk: '${id}' });
/** A context's rerank controls (its id is the context's). */
export const Rerank = record('rerank', { pk: CONTROL, sk: 'rerank#${id}' });
/** A context's marker in the control partition: the control Query lists the tenant's contexts. */
export const ContextMarker = record('context_marker', { pk: CONTROL, sk: 'context#${id}' });

/** The console records of each kind, by kind (ConsoleKind). */
export const CONSOLE_RECORDS = {
  event_type: EventType,
  endpoint: Endpoint,
  context: Context,
  template: Template,
  job: TrainingRun,
  model: ModelVersion,
  promotion_due: PromotionDue,
  rule: Rule,
  segment: Segment,
  experiment: Experiment,
  rerank: Rerank,
} as const;

/** Change history of one control resource (`rules/12`), by entry id (newest last). */
export const AuditEntry = entity({
  name: 'audit',
  attributes: ['id', 'at', 'actor', 'action', 'resource', 'before', 'after'],
  indexes: { primary: { pk: 'TENANT#${tenant}#AUDIT#${resource}', sk: '${id}' } },
});

/**
 * A training run's log line: ordered by time, then by its writer's sequence within that
 * millisecond; `writer` (random per call) keeps lines that two processes write in the same
 * millisecond apart.
 */
export const RunLogLine = entity({
  name: 'job_log',
  attributes: ['ts', 'message'],
  indexes: { primary: { pk: 'TENANT#${tenant}#JOBLOG#${run}', sk: '${ms}#${seq}#${writer}' } },
  format: { run: String, seq: digits(6) },
});

// Experiments, search analytics, synonyms

/** A request served in an experiment, by its request_id: events that name it are attributed to its variant. */
export const Exposure = entity({
  name: 'exposure',
  attributes: ['experiment_id', 'variant', 'user_id', 'served_at', 'attribute_until', 'ttl'],
  indexes: { primary: { pk: 'TENANT#${tenant}#EXPREQ#${request_id}', sk: '#EXPREQ' } },
});

/** A user's record in an experiment (first served, conversions by event type). */
export const ExperimentUser = entity({
  name: 'experiment_user',
  attributes: ['variant', 'first_served_at', 'erased_through'],
  indexes: { primary: { pk: 'TENANT#${tenant}#EXPUSER#${experiment}#${user_id}', sk: '#EXPUSER' } },
  format: { experiment: String },
});

/** One shard of an experiment's running totals, per variant: shards spread the counting over partitions. */
export const ExperimentTotals = entity({
  name: 'experiment_totals',
  attributes: ['requests', 'users'],
  indexes: { primary: { pk: 'TENANT#${tenant}#EXPAGG#${experiment}#${shard}', sk: '${variant}' } },
  format: { experiment: String, shard: String },
});

/** A search, by its request_id: events that name it are attributed to its query. */
export const SearchRequest = entity({
  name: 'search_request',
  attributes: ['query', 'day', 'served_at', 'no_results', 'ttl'],
  indexes: {
    primary: { pk: 'TENANT#${tenant}#SRCHREQ#${request_id}', sk: '#SRCHREQ' },
    /** A tenant's searches by the second they were served, on a random shard of SEARCH_COUNTER_SHARDS: folded into the counters, and a report's tail. */
    byTime: { index: 'gsi1', pk: 'TENANT#${tenant}#SRCHLOG#${shard}', sk: '${served_at}#${request_id}' },
  },
  format: { shard: String, served_at: digits(12) },
});

/**
 * One shard of a tenant's search counters, a row per UTC day and normalised query (`2026-11-25#running shoes`).
 * `folded_to`: the searches served before this second are in its counts (the fold's row of that day and query).
 */
export const SearchCounters = entity({
  name: 'search_counters',
  attributes: ['searches', 'no_results', 'folded_to', 'ttl'],
  indexes: { primary: { pk: 'TENANT#${tenant}#SRCHAGG#${shard}', sk: '${day}#${query}' } },
  format: { shard: String },
});

/** How far a tenant's searches are folded into its counters: every search served before `folded_to` (a second). */
export const SearchFold = entity({
  name: 'search_fold',
  attributes: ['folded_to'],
  indexes: { primary: { pk: 'TENANT#${tenant}#SRCHFOLD', sk: '#SRCHFOLD' } },
});

/** A tenant's synonym sets, one partition read whole by search. */
export const SynonymSet = entity({
  name: 'synonym',
  attributes: ['id', 'type', 'input', 'synonyms', 'created', 'updated_at'],
  indexes: { primary: { pk: 'TENANT#${tenant}#SYNONYMS', sk: '${id}' } },
});

/**
 * One of a tenant's places for a synonym set (`slot` 0 up to the cap), claimed by a conditional put
 * before the set is written and freed once it is deleted: a tenant never has more sets than
 * places, however many creates run at once (dynalite, the local stand-in, has no transactions).
 */
export const SynonymSlot = entity({
  name: 'synonym_slot',
  attributes: ['slot', 'set_id', 'claimed_at'],
  indexes: { primary: { pk: 'TENANT#${tenant}#SYNSLOTS', sk: '${slot}' } },
});

/**
 * One of a tenant's places for a console record of a kind with a cap (rules, segments: `slot` 0
 * up to the cap), claimed before the record is written and freed once it is deleted, as a synonym
 * set's (shared/data/places.ts). Their own partition per kind, outside the control partition that
 * serving reads whole.
 */
export const ConsolePlace = entity({
  name: 'console_place',
  attributes: ['slot', 'set_id', 'claimed_at'],
  indexes: { primary: { pk: 'TENANT#${tenant}#PLACES#${kind}', sk: '${slot}' } },
});

/**
 * A deleted record of a kind that can be deleted (a rule, a segment, a synonym set), as it was
 * stored, kept while a retry of the create that stored it can still come (an Idempotency-Key's
 * life and an hour): the retry answers it instead of storing it again (`removed`).
 */
export const RemovedRecord = entity({
  name: 'removed_record',
  attributes: ['record', 'removed_at', 'ttl'],
  indexes: { primary: { pk: 'TENANT#${tenant}#REMOVED#${kind}', sk: '${id}' } },
});

/** A cursor's sort-key value for an id. */
export const sortId = pad;
