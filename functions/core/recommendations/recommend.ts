import { blobs } from '#shared/blob';
import { controlDeps } from '#shared/control/deps';
import { consoleStore, eventStore, exposureStore, popularitySnapshots } from '#shared/data/index';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { recommend } from '#shared/recs/serve';
import { recommendationsQuery } from '#shared/schemas/recs';
import { searchDeps } from '#shared/search/deps';
import { tenantView } from '#shared/search/views';

export const handler = coreHandler('core/recommendations/recommend', { query: recommendationsQuery }, async ({ tenant, query, requestId, authorized }) => {
  const deps = {
    console: consoleStore(),
    control: controlDeps(),
    exposures: exposureStore(),
    events: eventStore(),
    popularSnapshots: popularitySnapshots(),
    blobs: blobs(),
    catalog: (t: string, bounded?: boolean) => tenantView(searchDeps(), t, bounded),
  };
  return ok(await recommend(deps, tenant, query, requestId, authorized));
});
