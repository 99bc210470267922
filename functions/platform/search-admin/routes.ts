import { searchLogStore, synonymStore } from '#shared/data/index';
import { byRouteKey, platformHandler, type RouteHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created, deleted, ok } from '#shared/http/respond';
import { idPath } from '#shared/schemas/console';
import { searchAnalyticsQuery, synonymBody, synonymPatch, synonymsQuery } from '#shared/schemas/search-admin';
import { searchAnalytics } from '#shared/search/analytics';
import { createSynonymSet, deleteSynonymSet, getSynonymSet, listSynonymSets, updateSynonymSet } from '#shared/search/synonyms';

/**
 * Search administration, every route in one module (one function): the synonym sets
 * (`/api/synonyms`) and search analytics (`GET /api/analytics/searches`). One function instead
 * of six keeps the stack's resource count down; each route has its own validated handler, and
 * the event's route key picks it.
 */
const NAME = 'platform/search-admin/routes';
/** Each route's handler, by route key (exported: the OpenAPI generator reads what each declares). */
export const routeHandlers: Record<string, RouteHandler> = {
  'POST /api/synonyms': platformHandler(NAME, { body: synonymBody, idempotency }, async ({ tenant, actor, body, idPlan }) =>
    created(await createSynonymSet(synonymStore(), tenant, body, undefined, idPlan, actor)),
  ),
  'GET /api/synonyms': platformHandler(NAME, { query: synonymsQuery }, async ({ tenant, query }) => ok(await listSynonymSets(synonymStore(), tenant, query))),
  'GET /api/synonyms/{id}': platformHandler(NAME, { path: idPath }, async ({ tenant, params }) => ok(await getSynonymSet(synonymStore(), tenant, params.id))),
  'PATCH /api/synonyms/{id}': platformHandler(NAME, { path: idPath, body: synonymPatch }, async ({ tenant, actor, params, body }) =>
    ok(await updateSynonymSet(synonymStore(), tenant, params.id, body, actor)),
  ),
  'DELETE /api/synonyms/{id}': platformHandler(NAME, { path: idPath }, async ({ tenant, actor, params }) => {
    await deleteSynonymSet(synonymStore(), tenant, params.id, actor);
    return deleted({ id: params.id });
  }),
  'GET /api/analytics/searches': platformHandler(NAME, { query: searchAnalyticsQuery }, async ({ tenant, query }) => ok(await searchAnalytics(searchLogStore(), tenant, query))),
};

export const handler = byRouteKey(NAME, routeHandlers);
