import { blobs } from '#shared/blob';
import { consoleStore, eventStore } from '#shared/data/index';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { recommend } from '#shared/recs/serve';
import { recommendationsQuery } from '#shared/schemas/recs';
import { searchDeps } from '#shared/search/deps';
import { tenantView } from '#shared/search/service';

export const handler = coreHandler('recs/recommendations', { query: recommendationsQuery }, async ({ tenant, query, requestId }) => {
  return ok(await recommend({ console: consoleStore(), events: eventStore(), blobs: blobs(), catalog: (t) => tenantView(searchDeps(), t) }, tenant, query, requestId));
});
