import { blobs } from '#shared/blob';
import { consoleHandler } from '#shared/console-auth/handler';
import { controlDeps } from '#shared/control/deps';
import type { ExposureStore } from '#shared/control/exposures';
import { consoleStore, eventStore, popularitySnapshots, synonymSets } from '#shared/data/index';
import { eventsPerDay, listEvents } from '#shared/domain/events';
import { byRouteKey, type RouteHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { recommend } from '#shared/recs/serve';
import { consoleEventsQuery, overviewQuery } from '#shared/schemas/events';
import { recommendationsQuery } from '#shared/schemas/recs';
import { searchBody } from '#shared/schemas/search';
import { serveSearch } from '#shared/search/core-search';
import { searchDeps } from '#shared/search/deps';
import { tenantView } from '#shared/search/views';

/**
 * The Core reads the console shows (search playground, recommendations, events, the overview's
 * chart), run here for the session's tenant so the browser never holds a Core token or API key.
 * One module for the four routes (one function); the event's route key picks the handler.
 * Playground requests are not traffic: no experiment exposure, no search analytics.
 */
const NAME = 'console-session/reads';

/** Counts nothing: an experiment's variant is shown in the playground, never counted. */
const notCounted: ExposureStore = {
  recordExposure: async () => undefined,
  exposure: async () => undefined,
  attribute: async () => false,
  totals: async () => new Map(),
  forgetUser: async () => undefined,
  forgetRequest: async () => undefined,
};

export const routeHandlers: Record<string, RouteHandler> = {
  /** Core search (`POST /v1/search`: same body and answer). */
  'POST /console/api/search': consoleHandler(NAME, { body: searchBody }, async ({ tenant, body, requestId }) =>
    ok(await serveSearch({ search: searchDeps(), control: controlDeps(), synonymSets: synonymSets() }, tenant, body, requestId)),
  ),
  /** Core recommendations (`GET /v1/recommendations`: same query and answer). */
  'GET /console/api/recommendations': consoleHandler(NAME, { query: recommendationsQuery }, async ({ tenant, query, requestId }) => {
    const deps = {
      console: consoleStore(),
      control: controlDeps(),
      exposures: notCounted,
      events: eventStore(),
      popularSnapshots: popularitySnapshots(),
      blobs: blobs(),
      catalog: (t: string, bounded?: boolean) => tenantView(searchDeps(), t, bounded),
    };
    return ok(await recommend(deps, tenant, query, requestId));
  }),
  /** The Core event list (`GET /v1/events`: same query and answer), and `order=desc` for the newest first. */
  'GET /console/api/events': consoleHandler(NAME, { query: consoleEventsQuery }, async ({ tenant, query }) => ok(await listEvents(eventStore(), tenant, query, undefined, consoleStore()))),
  /**
   * Events per UTC day over the last `days` (1-90, default 14), from the per-day counts each
   * ingest adds to (`counted_from`: the first whole day when older events are in no count).
   */
  'GET /console/api/overview': consoleHandler(NAME, { query: overviewQuery }, async ({ tenant, query }) => ok(await eventsPerDay(eventStore(), tenant, query.days))),
};

export const handler = byRouteKey(NAME, routeHandlers);
