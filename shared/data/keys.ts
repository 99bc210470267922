/**
 * Key formats of the single table. Nothing outside shared/data/ builds or parses a key.
 * Numeric ids are zero-padded so that string order equals numeric order.
 */
export const EVENT_SHARDS = 4;

const pad = (n: number): string => n.toString().padStart(16, '0');
export const unpad = (s: string): number => Number.parseInt(s, 10);

const SERVING_KINDS: ReadonlySet<string> = new Set(['event_type', 'endpoint']);
/** The control plane's kinds: one partition per tenant, so serving reads all of them with one Query. */
const CONTROL_KINDS: ReadonlySet<string> = new Set(['rule', 'segment', 'experiment', 'rerank']);
/** Sort-key prefix of a context's marker row in the control partition. */
const CONTEXT_MARKER = 'context';
/** Sort-key prefix of an erased user's marker row in the serving partition. */
const ERASED_USER = 'erased_user';
const shared = (kind: string) => SERVING_KINDS.has(kind) || CONTROL_KINDS.has(kind);

export const keys = {
  tenant: (t: string) => ({ pk: `TENANT#${t}`, sk: '#TENANT' }),
  tenantListing: (t: string) => ({ gsi1pk: 'TENANTS', gsi1sk: t }),
  tenantsPk: 'TENANTS',
  /** The row the health check reads (it never exists: the read proves the table answers). */
  health: { pk: 'HEALTH', sk: '#HEALTH' },
  counter: (t: string, name: string) => ({ pk: `TENANT#${t}`, sk: `COUNTER#${name}` }),

  itemPk: (t: string) => `TENANT#${t}#ITEMS`,
  item: (t: string, id: number) => ({ pk: `TENANT#${t}#ITEMS`, sk: pad(id) }),
  itemCategory: (t: string, category: string, id: number) => ({ gsi1pk: `TENANT#${t}#ITEMCAT#${category}`, gsi1sk: pad(id) }),
  itemCategoryPk: (t: string, category: string) => `TENANT#${t}#ITEMCAT#${category}`,
  /** Items and tombstones by update time: what changed since an index was built. */
  itemChange: (t: string, at: number, id: number) => ({ gsi2pk: `TENANT#${t}#ITEMUPD`, gsi2sk: `${pad(at)}#${pad(id)}` }),
  itemChangesPk: (t: string) => `TENANT#${t}#ITEMUPD`,
  itemChangeAfter: (at: number) => `${pad(at)}#`,
  tombstone: (t: string, id: number) => ({ pk: `TENANT#${t}#TOMBSTONES`, sk: pad(id) }),
  /** Sparse: a tenant's items whose embedding is behind their content, oldest first. */
  embedPending: (t: string, at: number, id: number) => ({ gsi3pk: `TENANT#${t}#EMBEDPENDING`, gsi3sk: `${pad(at)}#${pad(id)}` }),
  embedPendingPk: (t: string) => `TENANT#${t}#EMBEDPENDING`,
  embedPendingBefore: (at: number) => `${pad(at)}#`,
  embedPendingId: (sk: string): number => unpad(sk.slice(sk.indexOf('#') + 1)),


  eventShard: (id: number) => id % EVENT_SHARDS,
  eventPk: (t: string, shard: number) => `TENANT#${t}#EVENTS#${shard}`,
  event: (t: string, id: number) => ({ pk: `TENANT#${t}#EVENTS#${id % EVENT_SHARDS}`, sk: pad(id) }),
  eventUserPk: (t: string, userId: string) => `TENANT#${t}#EVUSER#${userId}`,
  eventTypePk: (t: string, type: string, shard: number) => `TENANT#${t}#EVTYPE#${type}#${shard}`,
  eventIndexes: (t: string, id: number, userId: string, type: string) => ({
    gsi1pk: `TENANT#${t}#EVUSER#${userId}`,
    gsi1sk: pad(id),
    gsi2pk: `TENANT#${t}#EVTYPE#${type}#${id % EVENT_SHARDS}`,
    gsi2sk: pad(id),
  }),

  client: (clientId: string) => ({ pk: `CLIENT#${clientId}`, sk: '#CLIENT' }),
  clientsOfTenantPk: (t: string) => `TENANT#${t}#CLIENTS`,
  clientOfTenant: (t: string, created: number, clientId: string) => ({ gsi1pk: `TENANT#${t}#CLIENTS`, gsi1sk: `${pad(created)}#${clientId}` }),

  apiKey: (prefix: string) => ({ pk: `APIKEY#${prefix}`, sk: '#APIKEY' }),
  apiKeysOfTenantPk: (t: string) => `TENANT#${t}#APIKEYS`,
  apiKeyOfTenant: (t: string, created: number, prefix: string) => ({ gsi1pk: `TENANT#${t}#APIKEYS`, gsi1sk: `${pad(created)}#${prefix}` }),

  idempotency: (t: string, key: string) => ({ pk: `TENANT#${t}#IDEM#${key}`, sk: '#IDEM' }),
  /** Part n of a stored response too large for the key's record, as the attempt `owner` stored it. */
  idempotencyChunk: (t: string, key: string, owner: string, n: number) => ({ pk: `TENANT#${t}#IDEM#${key}`, sk: `#CHUNK#${owner}#${String(n).padStart(4, '0')}` }),

  /**
   * Console records: a partition per kind, except the kinds every recommendation reads (event
   * types and endpoints), which share one partition so that one Query returns both, and the
   * control plane's (rules, segments, experiments, rerank controls, with a marker row per
   * context), which share another.
   */
  consolePk: (t: string, kind: string) =>
    SERVING_KINDS.has(kind) ? `TENANT#${t}#CONSOLE#SERVING` : CONTROL_KINDS.has(kind) ? `TENANT#${t}#CONSOLE#CONTROL` : `TENANT#${t}#CONSOLE#${kind}`,
  /** Sort-key prefix of a kind within its partition ('' where the partition is the kind's own). */
  consoleSkPrefix: (kind: string) => (shared(kind) ? `${kind}#` : ''),
  consoleRecord: (t: string, kind: string, id: number) => ({ pk: keys.consolePk(t, kind), sk: keys.consoleSkPrefix(kind) + pad(id) }),
  /** Sort-key bounds (inclusive) of a kind's records with ids above `after`, for a BETWEEN. */
  consoleIdsAfter: (kind: string, after: number) => ({ from: keys.consoleSkPrefix(kind) + pad(after + 1), to: keys.consoleSkPrefix(kind) + '9'.repeat(16) }),
  /** The kind of a row of a shared console partition, from its sort key. */
  consoleKindOf: (sk: string) => sk.slice(0, sk.indexOf('#')),
  /** The id of a row of a shared console partition, from its sort key. */
  consoleIdOf: (sk: string) => unpad(sk.slice(sk.indexOf('#') + 1)),
  controlPk: (t: string) => `TENANT#${t}#CONSOLE#CONTROL`,
  /**
   * A user whose events were erased (DELETE /api/users/{user_id}), in the serving partition: the
   * Query every recommendation makes of its endpoints and event types returns it too.
   */
  erasedUser: (t: string, userId: string) => ({ pk: keys.consolePk(t, 'endpoint'), sk: `${ERASED_USER}#${userId}` }),
  erasedUserKind: ERASED_USER,
  /** A context's marker in the control partition: the control Query lists the tenant's contexts. */
  contextMarker: (t: string, contextId: number) => ({ pk: `TENANT#${t}#CONSOLE#CONTROL`, sk: `${CONTEXT_MARKER}#${pad(contextId)}` }),
  contextMarkerKind: CONTEXT_MARKER,
  /** Change history of one control resource (`rules/12`), by entry id (newest last). */
  auditPk: (t: string, resource: string) => `TENANT#${t}#AUDIT#${resource}`,
  audit: (t: string, resource: string, id: number) => ({ pk: `TENANT#${t}#AUDIT#${resource}`, sk: pad(id) }),
  jobLogPk: (t: string, jobId: number) => `TENANT#${t}#JOBLOG#${jobId}`,
  /**
   * A log line: ordered by time, then by its writer's sequence within that millisecond; `writer`
   * (random per call) keeps lines that two processes write in the same millisecond apart.
   */
  jobLog: (t: string, jobId: number, ms: number, seq: number, writer: string) => ({ pk: `TENANT#${t}#JOBLOG#${jobId}`, sk: `${pad(ms)}#${String(seq).padStart(6, '0')}#${writer}` }),

  /** Sort-key value for an id, for cursors. */
  sortId: pad,

  /** A request served in an experiment, by its request_id: events that name it are attributed to its variant. */
  exposure: (t: string, requestId: string) => ({ pk: `TENANT#${t}#EXPREQ#${requestId}`, sk: '#EXPREQ' }),
  /** A user's record in an experiment (first served, conversions by event type). */
  experimentUser: (t: string, experimentId: number, userId: string) => ({ pk: `TENANT#${t}#EXPUSER#${experimentId}#${userId}`, sk: '#EXPUSER' }),
  /** One shard of an experiment's running totals, per variant: shards spread the counting over partitions. */
  experimentTotals: (t: string, experimentId: number, shard: number, variant: number) => ({ pk: `TENANT#${t}#EXPAGG#${experimentId}#${shard}`, sk: pad(variant) }),
  experimentTotalsPk: (t: string, experimentId: number, shard: number) => `TENANT#${t}#EXPAGG#${experimentId}#${shard}`,
  experimentVariantOf: (sk: string): number => unpad(sk),

  /** A tenant's request quota (shared/data/quota.ts): a partition of its own, outside TENANT#. */
  quota: (t: string) => ({ pk: `QUOTA#${t}`, sk: '#QUOTA' }),
  /** Every quota row's partition key starts so: the Core API functions may write only these (IAM LeadingKeys). */
  quotaPkPrefix: 'QUOTA#',

  /** A tenant's synonym sets, one partition read whole by search (shared/data/synonyms.ts). */
  synonymPk: (t: string) => `TENANT#${t}#SYNONYMS`,
  synonym: (t: string, id: number) => ({ pk: `TENANT#${t}#SYNONYMS`, sk: pad(id) }),
  /** A search, by its request_id: events that name it are attributed to its query (shared/data/search-analytics.ts). */
  searchRequest: (t: string, requestId: string) => ({ pk: `TENANT#${t}#SRCHREQ#${requestId}`, sk: '#SRCHREQ' }),
  /** One shard of a tenant's search counters, a row per UTC day and normalised query (`2026-11-25#running shoes`). */
  searchCountersPk: (t: string, shard: number) => `TENANT#${t}#SRCHAGG#${shard}`,
  searchCounters: (t: string, shard: number, day: string, query: string) => ({ pk: `TENANT#${t}#SRCHAGG#${shard}`, sk: `${day}#${query}` }),
  /** Sort-key bounds (inclusive) of the days `from`..`to` (YYYY-MM-DD) of a counters shard. */
  searchCounterDays: (from: string, to: string) => ({ from: `${from}#`, to: `${to}$` }),
  /** The day and query of a counters row, from its sort key. */
  searchCounterOf: (sk: string) => ({ day: sk.slice(0, sk.indexOf('#')), query: sk.slice(sk.indexOf('#') + 1) }),
};

/** Write shards of a tenant's search counters. */
export const SEARCH_COUNTER_SHARDS = 8;

/** Write shards of an experiment's totals: a tenant's requests spread over this many partitions. */
export const EXPERIMENT_SHARDS = 16;
