import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { platformSearchBody } from '#shared/schemas/search';
import { platformItemSearch } from '#shared/search/service';
import { searchDeps } from '#shared/search/deps';

/** POST /api/items/search: the console's item search, inactive items included, `[{ field, op, value }]` filters. */
export const handler = platformHandler('platform/items/search', { body: platformSearchBody }, async ({ tenant, body }) =>
  ok(await platformItemSearch(searchDeps(), tenant, { query: body.query, filters: body.filters, limit: body.limit, cursor: body.cursor })),
);
