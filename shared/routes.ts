/**
 * The one route table. The local server (local/server.ts) and the CDK stack (lib/)
 * both read it, so they cannot disagree about which endpoints exist.
 * `handler` is a module under functions/ (without extension) exporting `handler`.
 */
import type { IndexName } from './data/table-schema.ts';
import type { QueueName } from './queue/workers.ts';

export type CoreScope = 'service-api/read' | 'service-api/write';
export type PlatformScope = 'admin' | 'events' | 'items' | 'recommendations';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'OPTIONS';

export const CORE_SCOPES: readonly CoreScope[] = ['service-api/read', 'service-api/write'];
export const PLATFORM_SCOPES: readonly PlatformScope[] = ['admin', 'events', 'items', 'recommendations'];

/** DynamoDB actions a handler performs: its function is granted exactly these. */
export type TableAction = 'GetItem' | 'BatchGetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query' | 'BatchWriteItem';
/** What a handler touches besides its own logs; the CDK stack grants exactly this. */
export interface Access {
  table?: readonly TableAction[];
  /** Global secondary indexes the handler queries. */
  indexes?: readonly IndexName[];
  /**
   * Cognito calls on the service's user pool: app-client administration, console sign-in, and
   * reading a console session's user again (AdminGetUser: `consoleSessions`).
   */
  cognito?: readonly ('CreateUserPoolClient' | 'DeleteUserPoolClient' | 'AdminInitiateAuth' | 'AdminRespondToAuthChallenge' | 'AdminGetUser')[];
  /**
   * Authenticates console sessions (every Platform route: a session cookie stands in for an API
   * key): reads the session's user again every CONSOLE_USER_CHECK_SECONDS (`cognito`
   * AdminGetUser, which `platform` declares with it) and records that check on the session's row:
   * UpdateItem on the console-session rows only (partition keys `CONSOLESESSION#…`), whatever
   * `table` holds, as the quota's rows are granted. Changes no tenant data: the route still
   * counts as read-only.
   */
  consoleSessions?: boolean;
  /**
   * Opens and ends console sessions (sign-in, sign-out): PutItem and DeleteItem on the
   * console-session rows only (partition keys `CONSOLESESSION#…`), whatever `table` holds, beside
   * `consoleSessions`' UpdateItem. The sign-in function writes no other row.
   */
  opensSessions?: boolean;
  /** The artifact bucket (search indexes, models), under `bucketPrefixes`. */
  bucket?: 'read' | 'readwrite';
  /** The artifact prefixes `bucket` covers (GetObject, PutObject, and listing under them): both when not said. */
  bucketPrefixes?: readonly ('search' | 'models')[];
  /** Artifact prefixes whose objects the handler deletes (replaced index builds). */
  bucketDeletes?: readonly ('search' | 'models')[];
  /**
   * Artifact prefixes written to beside `bucket`'s (PutObject only): the training task's role
   * (lib/training-task.ts), and the maintenance pass, which reads search/ and models/ but writes
   * only models/ (an erasure it finishes).
   */
  bucketPuts?: readonly ('search' | 'models')[];
  /** Artifact prefixes read (GetObject) without `bucket`'s other grants: the training task's role, which reads back the version it stored. */
  bucketGets?: readonly ('search' | 'models')[];
  /** Queues the handler sends jobs to. */
  queues?: readonly QueueName[];
  /** Queues whose backlog (approximate depth) the handler reads. */
  queueDepth?: readonly QueueName[];
  /** Calls the embedding model (Bedrock, when that provider is chosen). */
  embeds?: boolean;
  /**
   * Records experiment exposures (PutItem of the user's first exposure, BatchWriteItem of a
   * group's exposure rows, UpdateItem of the variant totals; granted with the table actions)
   * once the caller's credentials are confirmed, and takes back the exposure of a request that
   * failed once recorded (DeleteItem of its row: ExposureStore.forgetRequest): counting what was
   * served, not a change of tenant data, so the route still counts as read-only (`readOnly`).
   */
  exposures?: boolean;
  /**
   * Records each search for search analytics (BatchWriteItem of the searches' rows, UpdateItem to
   * mark one without results, DeleteItem to take out one that failed once recorded, granted with
   * the table actions) once the caller's credentials are confirmed: like exposures, counting what
   * was served, so the route still counts as read-only.
   */
  searchLog?: boolean;
  /**
   * Serves popularity without a model (shared/recs/trending.ts): reads the tenant's stored
   * popularity snapshot (GetItem) and stores its own counts there (PutItem, granted with the
   * table actions): a count of the tenant's events, not a change of tenant data (stored without
   * waiting for the caller's credentials to be confirmed: any request's count stores the same),
   * so the route still counts as read-only.
   */
  popularity?: boolean;
}

/** The table actions a route's function is granted: its own, plus those of exposure counting, search logging and popularity snapshots. */
export const tableActions = (a: Access): TableAction[] => [
  ...new Set<TableAction>([
    ...(a.table ?? []),
    ...(a.exposures ? (['PutItem', 'BatchWriteItem', 'UpdateItem', 'DeleteItem'] as const) : []),
    ...(a.searchLog ? (['BatchWriteItem', 'UpdateItem', 'DeleteItem'] as const) : []),
    ...(a.popularity ? (['GetItem', 'PutItem'] as const) : []),
  ]),
];

interface RouteBase {
  method: HttpMethod;
  path: string;
  handler: string;
  access: Access;
}
export interface CoreRoute extends RouteBase {
  api: 'core';
  /** undefined only for the CORS preflight route. */
  scope: CoreScope | undefined;
}
export interface PlatformRoute extends RouteBase {
  api: 'platform';
  /** Key scopes allowed in addition to `admin`, which may call every route. */
  scopes: readonly PlatformScope[];
}
/** The token endpoint: served by Cognito on AWS, by this handler locally. */
export interface AuthRoute extends RouteBase {
  api: 'auth';
}
/**
 * Served without credentials on both HTTP APIs (the Core and the Platform base): the OpenAPI
 * document and the health check. Locally one route serves both, as the bases share a port.
 */
export interface PublicRoute extends RouteBase {
  api: 'public';
}
export type Route = CoreRoute | PlatformRoute | AuthRoute | PublicRoute;

// Every Core call reads its client record (tenant, revocation); every Platform call its API key
// or console session.
const withAuthRead = (a: Access): Access => granting(a, ['GetItem']);
/** `a` with the table actions `actions` too (each once). */
function granting(a: Access, actions: readonly TableAction[]): Access {
  return { ...a, table: [...new Set<TableAction>([...actions, ...(a.table ?? [])])] };
}
// Every Platform call may come with a console session, whose user it reads again now and then.
const withSessionCheck = (a: Access): Access => ({ ...a, cognito: [...new Set([...(a.cognito ?? []), 'AdminGetUser' as const])], consoleSessions: true });

const core = (method: HttpMethod, path: string, handler: string, scope: CoreScope, access: Access): CoreRoute => ({
  api: 'core',
  method,
  path,
  handler,
  scope,
  access: withAuthRead(access),
});
const platform = (method: HttpMethod, path: string, handler: string, access: Access, scopes: PlatformScope[] = []): PlatformRoute => ({
  api: 'platform',
  method,
  path,
  handler,
  scopes: ['admin', ...scopes],
  access: withSessionCheck(withAuthRead(access)),
});

/** The table actions that change nothing. */
const READS: ReadonlySet<TableAction> = new Set(['GetItem', 'BatchGetItem', 'Query']);

/**
 * Whether a route's grants let it change nothing: only reads of the table, no queues, clients or
 * artifacts (reading a console session's user, AdminGetUser, and recording that check change none).
 */
export const readOnly = (r: Route): boolean =>
  (r.access.table ?? []).every((a) => READS.has(a)) &&
  !r.access.queues?.length &&
  (r.access.cognito ?? []).every((a) => a === 'AdminGetUser') &&
  r.access.bucket !== 'readwrite' &&
  !r.access.bucketDeletes?.length &&
  !r.access.opensSessions;

/**
 * Idempotent creates: counter, puts, and the idempotency record (claim, complete, release). Query:
 * an answer stored in chunk rows under a key the request no longer holds (an erasure forgot it, a
 * retry took it over) has its chunk rows listed to be deleted (IdempotencyStore.complete).
 */
const CREATE: Access = { table: ['UpdateItem', 'PutItem', 'BatchWriteItem', 'DeleteItem', 'Query'] };
/**
 * A Platform create that honours Idempotency-Key (shared/http/idempotency.ts): `a`, and the key's
 * record claimed (PutItem), its id reserved and its answer stored (UpdateItem), freed when the
 * request is refused (DeleteItem).
 */
const idempotent = (a: Access): Access => granting(a, ['PutItem', 'UpdateItem', 'DeleteItem']);
/**
 * Console records: read a collection; change a record (UpdateItem, ids allocated with it); or
 * also put a new one (PutItem). A training run's log lines are the only console rows written in a
 * batch (BatchWriteItem, ConsoleStore.appendLog): only the run's create and stop append them here
 * (RUN_LOG; the maintenance pass and the trainer have their own grants).
 */
const CONSOLE_READ: Access = { table: ['Query'] };
/** One record by its id (ConsoleStore.get: GetItem, which every Platform route has), nothing listed. */
const CONSOLE_GET: Access = {};
const CONSOLE_CHANGE: Access = { table: ['Query', 'UpdateItem'] };
const CONSOLE_WRITE: Access = granting(CONSOLE_CHANGE, ['PutItem']);
const RUN_LOG: readonly TableAction[] = ['BatchWriteItem'];
/**
 * Whatever reads a tenant's search view (`tenantView`, `pagedView`): the index artifact, the
 * changes since it (gsi2) and their span (gsi4), and the items of a page served before the
 * container read all of those (BatchGetItem: the view `behind`). Search, recommendations (their
 * catalog), the console's playground.
 */
const VIEW: Access = { table: ['GetItem', 'BatchGetItem', 'Query'], indexes: ['gsi2', 'gsi4'], bucket: 'read', bucketPrefixes: ['search'] };
/** Recommendations also read the served model's artifact (loadModel), under models/. */
const WITH_MODELS: Pick<Access, 'bucketPrefixes'> = { bucketPrefixes: ['search', 'models'] };
/** Search: the view, the user's events (gsi1), a rebuild request, the query embedding. */
const SEARCH: Access = { ...VIEW, indexes: ['gsi1', 'gsi2', 'gsi4'], embeds: true };
/**
 * The console's item search (platformItemSearch): the view's reads alone (the artifact, gsi2,
 * gsi4, BatchGetItem) and the query embedding. It takes no user (no events on gsi1), no context,
 * synonyms or experiment (no Query of the table).
 */
const ITEM_SEARCH: Access = { table: ['BatchGetItem'], indexes: ['gsi2', 'gsi4'], bucket: 'read', bucketPrefixes: ['search'], embeds: true };
/**
 * The index status (indexStatus): the current build's artifact, the changes since it listed on
 * gsi4 (changeKeysSince) and the items waiting for an embedding counted on gsi3. It reads no view
 * (no gsi2, no BatchGetItem), no user's events (gsi1), and embeds nothing.
 */
const INDEX_STATUS: Access = { indexes: ['gsi3', 'gsi4'], bucket: 'read', bucketPrefixes: ['search'] };
/**
 * Control plane (rules, segments, experiments, rerank controls): records are read with GetItem
 * (every Platform route has it); a change writes its record (PutItem, or UpdateItem on the
 * revision it read), allocates ids (UpdateItem) and puts its audit entry (PutItem), the two in one
 * TransactWriteItems (IAM checks each of its writes as that action).
 */
const CONTROL_WRITE: Access = { table: ['PutItem', 'UpdateItem'] };
/**
 * A change of a rule or experiment, which it takes back when a check after its write fails: its
 * audit entry with it (DeleteItem). One naming the segment its record names already reads the
 * record's newest audit entry (Query) when that segment is gone: the change that named it, cut off
 * before its check, is undone (records.ts `namedAlready`).
 */
const CONTROL_UNDONE: Access = granting(CONTROL_WRITE, ['DeleteItem', 'Query']);
/**
 * Creating or deleting a rule or segment, which hold the tenant's places (shared/data/places.ts):
 * the places and the records are read and counted (Query), a place claimed (PutItem) and freed
 * (DeleteItem); a create that names a segment takes its record back (DeleteItem) if the segment
 * went meanwhile.
 */
const CONTROL_PLACED: Access = { table: ['Query', 'PutItem', 'UpdateItem', 'DeleteItem'] };
/**
 * Search administration: synonym sets are read, counted and listed (Query), get ids (UpdateItem),
 * are put, replaced and deleted; search analytics reads how far searches are folded (GetItem), its
 * counters (Query) and the searches not folded yet (Query of gsi1).
 */
const SEARCH_ADMIN: Access = { table: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'], indexes: ['gsi1'] };

/**
 * A credential's create or delete: its record put (PutItem) or deleted (DeleteItem) with its audit
 * entry (PutItem) in one TransactWriteItems, the entry's id from the tenant's counter (UpdateItem).
 */
const CREDENTIAL_CREATE: readonly TableAction[] = ['PutItem', 'UpdateItem'];
const CREDENTIAL_DELETE: readonly TableAction[] = ['DeleteItem', 'PutItem', 'UpdateItem'];

const R = 'service-api/read';
const W = 'service-api/write';

const coreRoutes: CoreRoute[] = [
  core('POST', '/v1/items', 'core/items/create', W, { ...CREATE, queues: ['embedding'] }),
  core('GET', '/v1/items', 'core/items/list', R, { table: ['Query'], indexes: ['gsi1'] }),
  core('GET', '/v1/items/{item_id}', 'core/items/get', R, {}),
  core('POST', '/v1/items/{item_id}', 'core/items/update', W, { table: ['UpdateItem'], queues: ['embedding'] }),
  core('PATCH', '/v1/items/{item_id}', 'core/items/update', W, { table: ['UpdateItem'], queues: ['embedding'] }),
  // UpdateItem: a tombstone written more than a second after its stamp is stamped again (items.ts `settle`).
  core('DELETE', '/v1/items/{item_id}', 'core/items/delete', W, { table: ['PutItem', 'DeleteItem', 'UpdateItem'] }),
  core('POST', '/v1/events', 'core/events/ingest', W, CREATE),
  // BatchGetItem: past 1,000 erasure sweep rows, those of the page's users (ConsoleStore.erasureSweepsOf).
  core('GET', '/v1/events', 'core/events/list', R, { table: ['Query', 'BatchGetItem'], indexes: ['gsi1', 'gsi2'] }),
  core('GET', '/v1/events/{event_id}', 'core/events/get', R, {}),
  core('POST', '/v1/search', 'core/search/search', R, { ...SEARCH, exposures: true, searchLog: true, popularity: true }),
  core('GET', '/v1/recommendations', 'core/recommendations/recommend', R, { ...VIEW, ...WITH_MODELS, indexes: ['gsi1', 'gsi2', 'gsi4'], exposures: true, popularity: true }),
];

/** Every Core path answers OPTIONS preflight without a token. */
const preflightRoutes: CoreRoute[] = [...new Set(coreRoutes.map((r) => r.path))].map((path) => ({
  api: 'core',
  method: 'OPTIONS',
  path,
  handler: 'cors/preflight',
  scope: undefined,
  access: {},
}));

const platformRoutes: PlatformRoute[] = [
  platform('POST', '/api/clients', 'platform/clients/create', { table: CREDENTIAL_CREATE, cognito: ['CreateUserPoolClient', 'DeleteUserPoolClient'] }),
  // The lists Query the tenant's clients or keys on gsi1 (listOfTenant) alone, never the table.
  platform('GET', '/api/clients', 'platform/clients/list', { indexes: ['gsi1'] }),
  platform('DELETE', '/api/clients/{client_id}', 'platform/clients/delete', { table: CREDENTIAL_DELETE, cognito: ['DeleteUserPoolClient'] }),
  platform('POST', '/api/api-keys', 'platform/api-keys/create', { table: CREDENTIAL_CREATE }),
  platform('GET', '/api/api-keys', 'platform/api-keys/list', { indexes: ['gsi1'] }),
  platform('DELETE', '/api/api-keys/{id}', 'platform/api-keys/delete', { table: CREDENTIAL_DELETE }),
  platform('POST', '/api/items/search', 'platform/items/search', ITEM_SEARCH, ['items']),
  platform('GET', '/api/items/search', 'platform/items/search-get', ITEM_SEARCH, ['items']),
  platform('GET', '/api/search-index', 'platform/search-index/status', INDEX_STATUS, ['items']),
  platform('POST', '/api/search-index/rebuild', 'platform/search-index/rebuild', { queues: ['embedding'] }),
  platform('POST', '/api/contexts', 'platform/contexts/create', idempotent(CONSOLE_WRITE)),
  platform('GET', '/api/contexts', 'platform/contexts/list', CONSOLE_READ),
  platform('GET', '/api/contexts/{id}', 'platform/contexts/get', CONSOLE_GET),
  platform('POST', '/api/event-types', 'platform/event-types/create', idempotent(CONSOLE_WRITE), ['events']),
  platform('GET', '/api/event-types', 'platform/event-types/list', CONSOLE_READ, ['events']),
  platform('GET', '/api/event-types/{id}', 'platform/event-types/get', CONSOLE_GET, ['events']),
  // A weight change reads the event types (Query: once a create of its name at once has decided which keeps it, `nameDecided`) and updates its own.
  platform('PATCH', '/api/event-types/{id}', 'platform/event-types/update', CONSOLE_CHANGE, ['events']),
  platform('POST', '/api/events/templates', 'platform/templates/create', idempotent(CONSOLE_WRITE), ['events']),
  platform('GET', '/api/events/templates', 'platform/templates/list', CONSOLE_READ, ['events']),
  platform('GET', '/api/events/templates/{id}', 'platform/templates/get', CONSOLE_GET, ['events']),
  platform('PATCH', '/api/events/templates/{id}', 'platform/templates/update', CONSOLE_CHANGE, ['events']),
  platform('POST', '/api/model-endpoints', 'platform/endpoints/create', idempotent(CONSOLE_WRITE)),
  platform('GET', '/api/model-endpoints', 'platform/endpoints/list', CONSOLE_READ),
  platform('GET', '/api/model-endpoints/{id}', 'platform/endpoints/get', CONSOLE_READ),
  platform('PATCH', '/api/model-endpoints/{id}', 'platform/endpoints/update', CONSOLE_CHANGE),
  platform('POST', '/api/training-jobs', 'platform/training-runs/create', idempotent({ ...granting(CONSOLE_WRITE, RUN_LOG), queues: ['training'] }), ['events']),
  // gsi3: the runs waiting or running, when the list is of one of their statuses.
  // gsi3 and BatchGetItem: a status waiting or running is read from its index, its runs again 100 to a read.
  platform('GET', '/api/training-jobs', 'platform/training-runs/list', { ...granting(CONSOLE_READ, ['BatchGetItem']), indexes: ['gsi3'] }, ['events']),
  platform('GET', '/api/training-jobs/{jobName}', 'platform/training-runs/get', CONSOLE_GET, ['events']),
  platform('POST', '/api/training-jobs/{jobName}/stop', 'platform/training-runs/stop', granting(CONSOLE_CHANGE, RUN_LOG), ['events']),
  platform('GET', '/api/training-jobs/logs/{jobName}', 'platform/training-runs/logs', CONSOLE_READ, ['events']),
  platform('GET', '/api/models', 'platform/models/list', CONSOLE_READ, ['events']),
  // Before `/api/models/{version}`: the local server takes the first route that matches (API Gateway prefers the literal path).
  platform('GET', '/api/models/compare', 'platform/models/compare', CONSOLE_READ, ['events']),
  platform('GET', '/api/models/{version}', 'platform/models/get', CONSOLE_READ, ['events']),
  // api-decisions: `events` keys call event-type, template and training routes; they may read the
  // versions their runs made, while labelling, approving and promoting (what is served) is admin's.
  platform('PATCH', '/api/models/{version}', 'platform/models/update', CONSOLE_CHANGE),
  platform('POST', '/api/models/{version}/approve', 'platform/models/approve', CONSOLE_CHANGE),
  // A promotion puts its audit entry (PutItem) in one transaction with the endpoint's change.
  platform('POST', '/api/models/{version}/promote', 'platform/models/promote', CONSOLE_WRITE),
  // Erasure (admin): the user's events found on their index (gsi1) and deleted by key; the
  // user's erasure marker put in the serving partition; the Idempotency-Key records of the
  // requests that wrote the events emptied (UpdateItem), their answers' parts (Query) deleted; the
  // tenant's experiments listed (Query) and the user's membership row in each deleted.
  platform('DELETE', '/api/users/{user_id}', 'platform/users/erase', {
    table: ['Query', 'DeleteItem', 'PutItem', 'UpdateItem', 'BatchWriteItem'],
    indexes: ['gsi1'],
    bucket: 'readwrite',
    bucketPrefixes: ['models'],
  }),
  // Control plane: admin keys only. Starting an experiment reads the endpoints and the other
  // experiments (Query); deleting a segment looks for what names it (Query).
  platform('POST', '/api/rules', 'platform/rules/create', idempotent(CONTROL_PLACED)),
  platform('GET', '/api/rules', 'platform/rules/list', { table: ['Query'] }),
  platform('GET', '/api/rules/{id}', 'platform/rules/get', {}),
  platform('PATCH', '/api/rules/{id}', 'platform/rules/update', CONTROL_UNDONE),
  platform('DELETE', '/api/rules/{id}', 'platform/rules/delete', CONTROL_PLACED),
  platform('POST', '/api/segments', 'platform/segments/create', idempotent(CONTROL_PLACED)),
  platform('GET', '/api/segments', 'platform/segments/list', { table: ['Query'] }),
  platform('GET', '/api/segments/{id}', 'platform/segments/get', {}),
  platform('PATCH', '/api/segments/{id}', 'platform/segments/update', CONTROL_WRITE),
  platform('DELETE', '/api/segments/{id}', 'platform/segments/delete', CONTROL_PLACED),
  platform('POST', '/api/experiments', 'platform/experiments/create', idempotent({ table: ['Query', 'PutItem', 'UpdateItem', 'DeleteItem'] })),
  // With each experiment its results: the variants' running totals (a Query per shard).
  platform('GET', '/api/experiments', 'platform/experiments/list', { table: ['Query'] }),
  platform('GET', '/api/experiments/{id}', 'platform/experiments/get', { table: ['Query'] }),
  platform('PATCH', '/api/experiments/{id}', 'platform/experiments/update', granting(CONTROL_UNDONE, ['Query'])),
  platform('GET', '/api/rerank-controls', 'platform/rerank/get', {}),
  platform('PUT', '/api/rerank-controls', 'platform/rerank/put', CONTROL_WRITE),
  platform('GET', '/api/audit', 'platform/audit/list', { table: ['Query'] }),
  // Search administration (synonym sets, search analytics): one module, so one function and
  // one grant for all six routes. Admin only: api-decisions.md lets `items` keys call item search
  // and index status, and synonyms change every search's results.
  ...(['POST /api/synonyms', 'GET /api/synonyms', 'GET /api/synonyms/{id}', 'PATCH /api/synonyms/{id}', 'DELETE /api/synonyms/{id}', 'GET /api/analytics/searches'] as const).map((key) => {
    const [method, path] = key.split(' ') as [HttpMethod, string];
    return platform(method, path, 'platform/search-admin/routes', SEARCH_ADMIN);
  }),
];

/**
 * The console's own routes (deployed on the Platform API, behind the console's CloudFront
 * origin): sign-in sessions, and the Core reads the console shows, run server-side for the
 * session's tenant so the browser never holds a token or key. Authorised by the session cookie
 * (functions/console-session/), not by an API key.
 */
const consoleRoutes: PlatformRoute[] = [
  // Sign-in (the only function granted Cognito's admin sign-in), session read and sign-out: one module.
  ...(['POST', 'GET', 'DELETE'] as const).map((method) =>
    platform(method, '/console/session', 'console-session/session', { opensSessions: true, cognito: ['AdminInitiateAuth', 'AdminRespondToAuthChallenge', 'AdminGetUser'] }),
  ),
  // The catalog page's item edits (admins): the update of `POST /v1/items/{item_id}`, for the session's tenant.
  platform('PATCH', '/console/api/items/{item_id}', 'console-session/items', { table: ['UpdateItem'], queues: ['embedding'] }),
  // The Core reads of the playground, events page and overview: one module.
  ...(['POST /console/api/search', 'GET /console/api/recommendations', 'GET /console/api/events', 'GET /console/api/overview'] as const).map((key) => {
    const [method, path] = key.split(' ') as [HttpMethod, string];
    return platform(method, path, 'console-session/reads', { ...SEARCH, ...WITH_MODELS, popularity: true });
  }),
];

const authRoutes: AuthRoute[] = [{ api: 'auth', method: 'POST', path: '/oauth2/token', handler: 'auth/token', access: {} }];

/** The OpenAPI document (bundled with its function: no grants); the health check reads one row of the table. */
const publicRoutes: PublicRoute[] = [
  { api: 'public', method: 'GET', path: '/openapi.json', handler: 'meta/openapi', access: {} },
  { api: 'public', method: 'GET', path: '/health', handler: 'meta/health', access: { table: ['GetItem'] } },
];

export const routes: readonly Route[] = [...coreRoutes, ...preflightRoutes, ...platformRoutes, ...consoleRoutes, ...authRoutes, ...publicRoutes];

/** Handler modules answering paths that match no route (the `$default` route), per API. */
export const notFoundHandlers = { core: 'errors/not-found-core', platform: 'errors/not-found-platform' } as const;

/** Routes deployed behind one of the two HTTP APIs (the token endpoint is Cognito's on AWS; public routes are on both). */
export const deployedRoutes = (api: 'core' | 'platform'): (CoreRoute | PlatformRoute | PublicRoute)[] =>
  routes.filter((r): r is CoreRoute | PlatformRoute | PublicRoute => r.api === api || r.api === 'public');

export function routeFor(handler: string, method?: HttpMethod): Route {
  const r = routes.find((x) => x.handler === handler && (method === undefined || x.method === method));
  if (!r) throw new Error(`No route uses handler ${handler}`);
  return r;
}

/** API Gateway style route key, e.g. `GET /v1/items/{item_id}`. */
export const routeKey = (r: Route): string => `${r.method} ${r.path}`;
