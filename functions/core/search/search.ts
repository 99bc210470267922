import { controlDeps } from '#shared/control/deps';
import { planAndRecord } from '#shared/control/exposures';
import { exposureStore, searchRecorder, synonymSets } from '#shared/data/index';
import { nowSeconds } from '#shared/clock';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { logger } from '#shared/observability';
import { searchBody } from '#shared/schemas/search';
import { coreSearchAnswer, coreSearchRequest, tenantSynonyms } from '#shared/search/core-search';
import { searchDeps } from '#shared/search/deps';
import { searchRecording } from '#shared/search/search-log';
import { runSearch } from '#shared/search/service';

export const handler = coreHandler('core/search/search', { body: searchBody }, async ({ tenant, body, requestId, authorized }) => {
  const now = nowSeconds();
  // The tenant's synonyms are read while the context's plan is made.
  const synonymsRead = tenantSynonyms(tenant, synonymSets());
  // An experiment's exposure is counted once the caller is confirmed and the search accepted (valid, its cursor too), while it is ranked; answered only once counted.
  const planned = body.context_id !== undefined ? planAndRecord(controlDeps(), exposureStore(), tenant, Number(body.context_id), body.user_id, now, { requestId, authorized }) : undefined;
  const plan = await planned?.plan;
  const synonyms = await synonymsRead;
  // Search analytics: recorded once the search is accepted and the caller confirmed, while it is
  // ranked; a failure to count does not fail the search.
  const analytics = searchRecording(searchRecorder(), tenant, { requestId, query: body.query, servedAt: now });
  const counted = (p: Promise<void>) => p.catch((e: unknown) => logger.warn('search not recorded for analytics', { tenant, error: String(e) }));
  let logged: Promise<unknown> = Promise.resolve();
  const result = await runSearch(searchDeps(), tenant, {
    ...coreSearchRequest(body),
    plan,
    synonyms,
    accepted: () => {
      planned?.accept();
      logged = authorized.then(() => counted(analytics.record()));
      logged.catch(() => undefined);
    },
  });
  await planned?.recorded;
  await logged;
  await authorized.then(() => counted(analytics.ranked(result.total)));
  return ok(coreSearchAnswer(result, requestId));
});
