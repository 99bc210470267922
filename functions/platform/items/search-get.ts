import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { platformSearchQuery } from '#shared/schemas/search';
import { searchDeps } from '#shared/search/deps';
import { platformItemSearch } from '#shared/search/service';

/** GET /api/items/search?query=&limit=&cursor= */
export const handler = platformHandler('platform/items/search-get', { query: platformSearchQuery }, async ({ tenant, query }) =>
  ok(await platformItemSearch(searchDeps(), tenant, { query: query.query, limit: query.limit, cursor: query.cursor }, 'GET')),
);
