import createClient, { type Client } from 'openapi-fetch';
import { idempotencyHeader, unwrap, type CallOptions, type CreateOptions } from './call.ts';
import { Paginator, type Page } from './paginate.ts';
import type { paths } from './schema.ts';
import { Transport, type FetchLike, type RetryOptions } from './transport.ts';
import type { QueryParams, RequestBody, TrainingJobLogs } from './types.ts';

export interface PlatformClientOptions {
  /** The console base URL (`{console_url}`; locally the same port as the Core API). Paths start with `/api`. */
  baseUrl: string;
  /** A Platform API key, `svc_<prefix>_<token>`. */
  apiKey: string;
  fetch?: FetchLike;
  /**
   * Retry policy, or `false` for none. The creates that honour `Idempotency-Key` send one (a random
   * UUID per call unless given) and are retried as reads are; API keys and app clients (their answer
   * holds a secret, which the API does not keep) are retried only on 429.
   */
  retry?: RetryOptions | false;
  /** How long one attempt may take, answer read included, before it is dropped (and retried when safe): default 60,000 ms; 0 for no limit. */
  timeoutMs?: number;
}

type Id = string | number;
const s = (id: Id) => String(id);

/** A time of the search analytics query: a day (`YYYY-MM-DD`), Unix seconds, or a Date. */
type Instant = string | number | Date;
type SearchAnalyticsQuery = Omit<QueryParams<'getSearchAnalytics'>, 'from' | 'to'> & { from?: Instant; to?: Instant };
/** `{ [name]: the instant as the query takes it }`, or nothing when it is left out (a Date as its Unix second). */
const instant = (name: 'from' | 'to', t: Instant | undefined): { [k in typeof name]?: string } =>
  t === undefined ? {} : { [name]: t instanceof Date ? String(Math.floor(t.getTime() / 1000)) : String(t) };
/**
 * A list query whose `contextId` may also be the context's numeric `id`, as the console's records
 * (and `contexts.create`) give it; sent as its text, as `rerankControls` sends theirs.
 */
type ByContext<Q> = Omit<Q, 'contextId'> & { contextId?: Id };
const byContext = <Q extends object>(q: ByContext<Q>): Q => ('contextId' in q && q.contextId !== undefined ? { ...q, contextId: s(q.contextId) } : q) as unknown as Q;
const signalOf = (o: CallOptions | undefined) => (o?.signal ? { signal: o.signal } : {});

/**
 * Follows `next_cursor` through a list whose cursor parameter is `name`. `alias`: another name the
 * list takes its cursor by (the key and client lists' `cursor`), read as the start and left out of
 * the later pages: sent beside `name` with another cursor, the API refuses both (400).
 */
function pages<P extends Page<unknown>, Q extends object>(name: 'cursor' | 'starting_after', query: Q, fetchPage: (q: Q) => Promise<P>, alias?: 'cursor'): Paginator<P['data'][number], P> {
  const q = query as Record<string, unknown>;
  const start = q[name] ?? (alias ? q[alias] : undefined);
  const rest = Object.fromEntries(Object.entries(q).filter(([k]) => k !== alias)) as Q;
  return new Paginator<P['data'][number], P>((cursor) => fetchPage(cursor ? { ...rest, [name]: cursor } : query), typeof start === 'string' ? start : undefined);
}

/**
 * The Platform API (`/api`), authenticated with an API key. Each group mirrors the console's
 * resources; `raw` reaches every route of the OpenAPI document with its types.
 */
export class PlatformClient {
  /** The typed openapi-fetch client, with the API key and retries. */
  readonly raw: Client<paths>;
  private readonly transport: Transport;

  constructor(opts: PlatformClientOptions) {
    const apiKey = opts.apiKey;
    this.transport = new Transport({ fetch: opts.fetch, retry: opts.retry, timeoutMs: opts.timeoutMs, auth: { token: async () => apiKey } });
    this.raw = createClient<paths>({ baseUrl: opts.baseUrl.replace(/\/+$/, ''), fetch: this.transport.fetch });
  }

  readonly apiKeys = {
    listPage: (query: QueryParams<'listApiKeys'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/api-keys', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listApiKeys'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.apiKeys.listPage(q, o), 'cursor'),
    /** The answer holds the key itself, shown this once. */
    create: (body: RequestBody<'createApiKey'>, o?: CallOptions) => unwrap(this.raw.POST('/api/api-keys', { body, ...signalOf(o) }), 'platform'),
    revoke: (id: string, o?: CallOptions) => unwrap(this.raw.DELETE('/api/api-keys/{id}', { params: { path: { id } }, ...signalOf(o) }), 'platform'),
  };

  readonly clients = {
    listPage: (query: QueryParams<'listClients'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/clients', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listClients'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.clients.listPage(q, o), 'cursor'),
    /** The answer holds the client secret, shown this once. */
    create: (body: RequestBody<'createClient'>, o?: CallOptions) => unwrap(this.raw.POST('/api/clients', { body, ...signalOf(o) }), 'platform'),
    delete: (clientId: string, o?: CallOptions) => unwrap(this.raw.DELETE('/api/clients/{client_id}', { params: { path: { client_id: clientId } }, ...signalOf(o) }), 'platform'),
  };

  readonly eventTypes = {
    listPage: (query: QueryParams<'listEventTypes'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/event-types', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listEventTypes'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.eventTypes.listPage(q, o)),
    create: (body: RequestBody<'createEventType'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/event-types', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    get: (id: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/event-types/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
    update: (id: Id, body: RequestBody<'updateEventType'>, o?: CallOptions) => unwrap(this.raw.PATCH('/api/event-types/{id}', { params: { path: { id: s(id) } }, body, ...signalOf(o) }), 'platform'),
  };

  readonly templates = {
    listPage: (query: QueryParams<'listTemplates'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/events/templates', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listTemplates'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.templates.listPage(q, o)),
    create: (body: RequestBody<'createTemplate'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/events/templates', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    get: (id: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/events/templates/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
    update: (id: Id, body: RequestBody<'updateTemplate'>, o?: CallOptions) =>
      unwrap(this.raw.PATCH('/api/events/templates/{id}', { params: { path: { id: s(id) } }, body, ...signalOf(o) }), 'platform'),
  };

  readonly trainingJobs = {
    listPage: (query: QueryParams<'listTrainingJobs'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/training-jobs', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listTrainingJobs'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.trainingJobs.listPage(q, o)),
    /** Starts a run from a template; each run makes a new model version. */
    create: (body: RequestBody<'createTrainingJob'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/training-jobs', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    get: (jobName: string, o?: CallOptions) => unwrap(this.raw.GET('/api/training-jobs/{jobName}', { params: { path: { jobName } }, ...signalOf(o) }), 'platform'),
    stop: (jobName: string, o?: CallOptions) => unwrap(this.raw.POST('/api/training-jobs/{jobName}/stop', { params: { path: { jobName } }, ...signalOf(o) }), 'platform'),
    logsPage: (jobName: string, query: QueryParams<'getTrainingJobLogs'> = {}, o?: CallOptions) =>
      unwrap(this.raw.GET('/api/training-jobs/logs/{jobName}', { params: { path: { jobName }, query }, ...signalOf(o) }), 'platform'),
    /**
     * Every line of a run's log from `query.cursor` (else its start), page by page: the log's pages
     * carry `lines` and a `next_cursor` that is null at the log's end, as the lists' `data` and
     * `has_more`. A running run's log ends for now at a page without lines (its end keeps its
     * `next_cursor`, the same again): a later call from the last page's cursor follows it.
     */
    logs: (jobName: string, query: QueryParams<'getTrainingJobLogs'> = {}, o?: CallOptions) =>
      new Paginator<TrainingJobLogs['lines'][number], Awaited<ReturnType<PlatformClient['trainingJobs']['logsPage']>> & Page<TrainingJobLogs['lines'][number]>>(
        (cursor) =>
          this.trainingJobs.logsPage(jobName, cursor ? { ...query, cursor } : query, o).then((p) => Object.assign(p, { data: p.lines, has_more: p.next_cursor !== null && p.lines.length > 0 })),
        query.cursor,
      ),
  };

  readonly models = {
    listPage: (query: QueryParams<'listModels'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/models', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listModels'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.models.listPage(q, o)),
    get: (version: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/models/{version}', { params: { path: { version: s(version) } }, ...signalOf(o) }), 'platform'),
    /** Label or describe a version. */
    update: (version: Id, body: RequestBody<'updateModel'>, o?: CallOptions) =>
      unwrap(this.raw.PATCH('/api/models/{version}', { params: { path: { version: s(version) } }, body, ...signalOf(o) }), 'platform'),
    approve: (version: Id, o?: CallOptions) => unwrap(this.raw.POST('/api/models/{version}/approve', { params: { path: { version: s(version) } }, ...signalOf(o) }), 'platform'),
    /** Serves an approved version on an endpoint. */
    promote: (version: Id, body: RequestBody<'promoteModel'>, o?: CallOptions) =>
      unwrap(this.raw.POST('/api/models/{version}/promote', { params: { path: { version: s(version) } }, body, ...signalOf(o) }), 'platform'),
    compare: (versions: Id[], o?: CallOptions) => unwrap(this.raw.GET('/api/models/compare', { params: { query: { versions: versions.map(s).join(',') } }, ...signalOf(o) }), 'platform'),
  };

  readonly endpoints = {
    listPage: (query: QueryParams<'listModelEndpoints'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/model-endpoints', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listModelEndpoints'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.endpoints.listPage(q, o)),
    create: (body: RequestBody<'createModelEndpoint'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/model-endpoints', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    get: (id: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/model-endpoints/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
    /** Makes the endpoint the tenant's default (`{ is_default: true }`). */
    update: (id: Id, body: RequestBody<'updateModelEndpoint'>, o?: CallOptions) =>
      unwrap(this.raw.PATCH('/api/model-endpoints/{id}', { params: { path: { id: s(id) } }, body, ...signalOf(o) }), 'platform'),
  };

  readonly contexts = {
    listPage: (query: QueryParams<'listContexts'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/contexts', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listContexts'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.contexts.listPage(q, o)),
    create: (body: RequestBody<'createContext'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/contexts', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    get: (id: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/contexts/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
  };

  readonly rules = {
    listPage: (query: ByContext<QueryParams<'listRules'>> = {}, o?: CallOptions) =>
      unwrap(this.raw.GET('/api/rules', { params: { query: byContext<QueryParams<'listRules'>>(query) }, ...signalOf(o) }), 'platform'),
    list: (query: ByContext<QueryParams<'listRules'>> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.rules.listPage(q, o)),
    create: (body: RequestBody<'createRule'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/rules', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    get: (id: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/rules/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
    update: (id: Id, body: RequestBody<'updateRule'>, o?: CallOptions) => unwrap(this.raw.PATCH('/api/rules/{id}', { params: { path: { id: s(id) } }, body, ...signalOf(o) }), 'platform'),
    delete: (id: Id, o?: CallOptions) => unwrap(this.raw.DELETE('/api/rules/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
  };

  readonly segments = {
    listPage: (query: QueryParams<'listSegments'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/segments', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listSegments'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.segments.listPage(q, o)),
    create: (body: RequestBody<'createSegment'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/segments', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    get: (id: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/segments/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
    update: (id: Id, body: RequestBody<'updateSegment'>, o?: CallOptions) => unwrap(this.raw.PATCH('/api/segments/{id}', { params: { path: { id: s(id) } }, body, ...signalOf(o) }), 'platform'),
    delete: (id: Id, o?: CallOptions) => unwrap(this.raw.DELETE('/api/segments/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
  };

  readonly experiments = {
    listPage: (query: ByContext<QueryParams<'listExperiments'>> = {}, o?: CallOptions) =>
      unwrap(this.raw.GET('/api/experiments', { params: { query: byContext<QueryParams<'listExperiments'>>(query) }, ...signalOf(o) }), 'platform'),
    list: (query: ByContext<QueryParams<'listExperiments'>> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.experiments.listPage(q, o)),
    create: (body: RequestBody<'createExperiment'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/experiments', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    /** The experiment with its results. */
    get: (id: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/experiments/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
    update: (id: Id, body: RequestBody<'updateExperiment'>, o?: CallOptions) => unwrap(this.raw.PATCH('/api/experiments/{id}', { params: { path: { id: s(id) } }, body, ...signalOf(o) }), 'platform'),
  };

  readonly rerankControls = {
    get: (contextId: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/rerank-controls', { params: { query: { contextId: s(contextId) } }, ...signalOf(o) }), 'platform'),
    /** Sets a context's controls (PUT: the same body twice sets the same values). */
    put: (contextId: Id, body: RequestBody<'putRerankControls'>, o?: CallOptions) =>
      unwrap(this.raw.PUT('/api/rerank-controls', { params: { query: { contextId: s(contextId) } }, body, ...signalOf(o) }), 'platform'),
  };

  readonly synonyms = {
    listPage: (query: QueryParams<'listSynonymSets'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/synonyms', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listSynonymSets'> = {}, o?: CallOptions) => pages('starting_after', query, (q) => this.synonyms.listPage(q, o)),
    create: (body: RequestBody<'createSynonymSet'>, o?: CreateOptions) => unwrap(this.raw.POST('/api/synonyms', { body, headers: idempotencyHeader(o), ...signalOf(o) }), 'platform'),
    get: (id: Id, o?: CallOptions) => unwrap(this.raw.GET('/api/synonyms/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
    update: (id: Id, body: RequestBody<'updateSynonymSet'>, o?: CallOptions) => unwrap(this.raw.PATCH('/api/synonyms/{id}', { params: { path: { id: s(id) } }, body, ...signalOf(o) }), 'platform'),
    delete: (id: Id, o?: CallOptions) => unwrap(this.raw.DELETE('/api/synonyms/{id}', { params: { path: { id: s(id) } }, ...signalOf(o) }), 'platform'),
  };

  readonly analytics = {
    /**
     * Search analytics over UTC days (`from`, `to`; default the last 7): totals, top queries, queries
     * without results. `from` and `to` are a day (`YYYY-MM-DD`), Unix seconds, or a Date (sent as
     * its Unix second).
     */
    searches: ({ from, to, ...rest }: SearchAnalyticsQuery = {}, o?: CallOptions) =>
      unwrap(this.raw.GET('/api/analytics/searches', { params: { query: { ...rest, ...instant('from', from), ...instant('to', to) } }, ...signalOf(o) }), 'platform'),
  };

  readonly audit = {
    /** The change history of one resource (`rules/12`, `segments/3`, `experiments/2`, `rerank-controls/<context id>`, `synonyms/4`, `model-endpoints/1`, `clients/<client_id>`, `api-keys/<prefix>`), newest first. */
    listPage: (query: QueryParams<'listAudit'>, o?: CallOptions) => unwrap(this.raw.GET('/api/audit', { params: { query }, ...signalOf(o) }), 'platform'),
    list: (query: QueryParams<'listAudit'>, o?: CallOptions) => pages('starting_after', query, (q) => this.audit.listPage(q, o)),
  };

  readonly itemSearch = {
    /** One page of the console's item search (`POST /api/items/search`; a read that changes nothing, so retried like one). */
    page: (body: RequestBody<'searchItems'>, o?: CallOptions) => unwrap(this.raw.POST('/api/items/search', { body, fetch: this.transport.fetchWith('safe'), ...signalOf(o) }), 'platform'),
    /** Every hit, following `cursor`. */
    all: (body: RequestBody<'searchItems'>, o?: CallOptions) => pages('cursor', body, (b) => this.itemSearch.page(b, o)),
    /** One page of the query-string form (`GET /api/items/search?query=&limit=&cursor=`). */
    getPage: (query: QueryParams<'searchItemsGet'> = {}, o?: CallOptions) => unwrap(this.raw.GET('/api/items/search', { params: { query }, ...signalOf(o) }), 'platform'),
    /** Every hit of the query-string form, following `cursor`. */
    getAll: (query: QueryParams<'searchItemsGet'> = {}, o?: CallOptions) => pages('cursor', query, (q) => this.itemSearch.getPage(q, o)),
  };

  readonly searchIndex = {
    status: (o?: CallOptions) => unwrap(this.raw.GET('/api/search-index', { ...signalOf(o) }), 'platform'),
    rebuild: (o?: CallOptions) => unwrap(this.raw.POST('/api/search-index/rebuild', { ...signalOf(o) }), 'platform'),
  };

  readonly users = {
    /** Erases an end user's events and derived data. */
    erase: (userId: string, o?: CallOptions) => unwrap(this.raw.DELETE('/api/users/{user_id}', { params: { path: { user_id: userId } }, ...signalOf(o) }), 'platform'),
  };
}
