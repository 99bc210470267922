import createClient, { type Client } from 'openapi-fetch';
import { answeredPart, idempotencyHeader, unwrap, type Answered, type CallOptions, type CreateOptions } from './call.ts';
import { ApiError } from './errors.ts';
import { Paginator } from './paginate.ts';
import type { paths } from './schema.ts';
import { TokenManager } from './token.ts';
import { Transport, type FetchLike, type RetryOptions } from './transport.ts';
import type {
  Event,
  EventInput,
  EventList,
  EventListQuery,
  Item,
  ItemCreate,
  ItemDeleted,
  ItemList,
  ItemListQuery,
  ItemUpdate,
  QueryParams,
  RecommendationList,
  RecommendationQuery,
  SearchHit,
  SearchRequest,
  SearchResults,
} from './types.ts';

export interface CoreClientOptions {
  /** The stack's base URL (`{base_url}`; locally `http://localhost:3000`). Paths start with `/v1`. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Scopes to ask for (`service-api/read`, `service-api/write`); default: all of the client's. */
  scope?: string | string[];
  /** The token endpoint, when not `<baseUrl>/oauth2/token`. */
  tokenUrl?: string;
  /** Refresh a token this long before it expires (default 10 % of its lifetime, 1 to 60 s). */
  refreshMarginMs?: number;
  /** A fetch to send requests with (default `globalThis.fetch`). */
  fetch?: FetchLike;
  /** Retry policy, or `false` for none. */
  retry?: RetryOptions | false;
  /** How long one attempt may take, answer read included, before it is dropped (and retried when safe): default 60,000 ms; 0 for no limit. */
  timeoutMs?: number;
}

type PageQuery<Q> = Omit<Q, 'starting_after'> & { starting_after?: string };

const signalOf = (o: CallOptions | undefined) => (o?.signal ? { signal: o.signal } : {});

/**
 * The Core API (`/v1`), authenticated with OAuth 2.0 client credentials.
 *
 * ```ts
 * const core = new CoreClient({ baseUrl, clientId, clientSecret });
 * const item = await core.items.create({ name: 'Trail shoe', metadata: { category: 'shoes' } });
 * for await (const it of core.items.list({ limit: 100 })) console.log(it.id);
 * ```
 */
export class CoreClient {
  /** The typed openapi-fetch client, with this client's token, retries and 401 handling. */
  readonly raw: Client<paths>;
  readonly tokens: TokenManager;
  private readonly transport: Transport;

  constructor(opts: CoreClientOptions) {
    const baseUrl = opts.baseUrl.replace(/\/+$/, '');
    const tokenTransport = new Transport({ fetch: opts.fetch, retry: opts.retry, timeoutMs: opts.timeoutMs });
    this.tokens = new TokenManager(tokenTransport, {
      tokenUrl: opts.tokenUrl ?? `${baseUrl}/oauth2/token`,
      clientId: opts.clientId,
      clientSecret: opts.clientSecret,
      scope: opts.scope,
      refreshMarginMs: opts.refreshMarginMs,
    });
    this.transport = new Transport({ fetch: opts.fetch, retry: opts.retry, timeoutMs: opts.timeoutMs, auth: this.tokens });
    this.raw = createClient<paths>({ baseUrl, fetch: this.transport.fetch });
  }

  /** A current access token (cached; refreshed before it expires). */
  accessToken(): Promise<string> {
    return this.tokens.token();
  }

  readonly items = {
    /** Creates one item (`POST /v1/items`, with an `Idempotency-Key`). */
    create: async (item: ItemCreate, o?: CreateOptions): Promise<Answered<Item>> => {
      const r = await unwrap(this.raw.POST('/v1/items', { body: item, headers: idempotencyHeader(o), ...signalOf(o) }), 'core');
      if (r.object !== 'item') throw unexpected('item', r.object);
      return r;
    },
    /** Creates 1 to 100 items in one request; answers them in order. */
    createMany: async (items: ItemCreate[], o?: CreateOptions): Promise<Answered<Item[]>> => {
      const r = await unwrap(this.raw.POST('/v1/items', { body: items, headers: idempotencyHeader(o), ...signalOf(o) }), 'core');
      if (r.object !== 'list') throw unexpected('list', r.object);
      return answeredPart(r.data, r);
    },
    get: (itemId: string, o?: CallOptions): Promise<Answered<Item>> => unwrap(this.raw.GET('/v1/items/{item_id}', { params: { path: { item_id: itemId } }, ...signalOf(o) }), 'core'),
    /** Updates fields (`POST /v1/items/{id}`; the same body twice sets the same values, so it is retried). */
    update: (itemId: string, patch: ItemUpdate, o?: CallOptions): Promise<Answered<Item>> =>
      unwrap(this.raw.POST('/v1/items/{item_id}', { params: { path: { item_id: itemId } }, body: patch, fetch: this.transport.fetchWith('safe'), ...signalOf(o) }), 'core'),
    /** The same update as `PATCH /v1/items/{id}` (the API's alias of the POST; retried as `update` is). */
    patch: (itemId: string, patch: ItemUpdate, o?: CallOptions): Promise<Answered<Item>> =>
      unwrap(this.raw.PATCH('/v1/items/{item_id}', { params: { path: { item_id: itemId } }, body: patch, fetch: this.transport.fetchWith('safe'), ...signalOf(o) }), 'core'),
    delete: (itemId: string, o?: CallOptions): Promise<Answered<ItemDeleted>> => unwrap(this.raw.DELETE('/v1/items/{item_id}', { params: { path: { item_id: itemId } }, ...signalOf(o) }), 'core'),
    /** One page. */
    listPage: (query: ItemListQuery = {}, o?: CallOptions): Promise<Answered<ItemList>> => unwrap(this.raw.GET('/v1/items', { params: { query }, ...signalOf(o) }), 'core'),
    /** Every item (lazily, page by page): `for await (const item of core.items.list({ limit: 100 }))`. */
    list: (query: PageQuery<ItemListQuery> = {}, o?: CallOptions): Paginator<Item, Answered<ItemList>> =>
      new Paginator((cursor) => this.items.listPage({ ...query, ...(cursor ? { starting_after: cursor } : {}) }, o), query.starting_after),
  };

  readonly events = {
    /** Sends 1 to 500 events in one request (all or nothing, with an `Idempotency-Key`); answers the stored events. */
    send: async (events: EventInput[], o?: CreateOptions): Promise<Answered<Event[]>> => {
      const r = await unwrap(this.raw.POST('/v1/events', { body: events, headers: idempotencyHeader(o), ...signalOf(o) }), 'core');
      return answeredPart(r.data, r);
    },
    get: (eventId: string, o?: CallOptions): Promise<Answered<Event>> => unwrap(this.raw.GET('/v1/events/{event_id}', { params: { path: { event_id: eventId } }, ...signalOf(o) }), 'core'),
    listPage: (query: EventListQuery = {}, o?: CallOptions): Promise<Answered<EventList>> => unwrap(this.raw.GET('/v1/events', { params: { query }, ...signalOf(o) }), 'core'),
    list: (query: PageQuery<EventListQuery> = {}, o?: CallOptions): Paginator<Event, Answered<EventList>> =>
      new Paginator((cursor) => this.events.listPage({ ...query, ...(cursor ? { starting_after: cursor } : {}) }, o), query.starting_after),
  };

  /** One page of search results (`POST /v1/search`; a read, so retried like one). */
  search(body: SearchRequest, o?: CallOptions): Promise<Answered<SearchResults>> {
    return unwrap(this.raw.POST('/v1/search', { body, fetch: this.transport.fetchWith('safe'), ...signalOf(o) }), 'core');
  }

  /** Every hit of a search, page by page (`starting_after` from each page's `next_cursor`). */
  searchAll(body: SearchRequest, o?: CallOptions): Paginator<SearchHit, Answered<SearchResults>> {
    return new Paginator((cursor) => this.search({ ...body, ...(cursor ? { starting_after: cursor } : {}) }, o), body.starting_after);
  }

  /** `GET /v1/recommendations` (`user_id` and/or `item_id`). */
  recommendations(query: RecommendationQuery, o?: CallOptions): Promise<Answered<RecommendationList>> {
    // Numbers and booleans go as their text, which the generated (string) query type names.
    return unwrap(this.raw.GET('/v1/recommendations', { params: { query: query as QueryParams<'getRecommendations'> }, ...signalOf(o) }), 'core');
  }
}

function unexpected(want: string, got: string): ApiError {
  return new ApiError({ status: 200, type: 'api_error', code: 'unexpected_response', message: `expected object ${want}, got ${got}`, source: 'core' });
}
