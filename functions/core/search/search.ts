import { controlDeps } from '#shared/control/deps';
import { planAndRecord } from '#shared/control/exposures';
import { exposureStore, searchRecorder, synonymSets } from '#shared/data/index';
import { nowSeconds } from '#shared/clock';
import { coreList } from '#shared/domain/present';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { logger } from '#shared/observability';
import { searchBody } from '#shared/schemas/search';
import { coreFilter } from '#shared/search/filters';
import { searchDeps } from '#shared/search/deps';
import { DEFAULT_TAGS } from '#shared/search/highlight';
import { searchRecording } from '#shared/search/search-log';
import { runSearch } from '#shared/search/service';
import { synonymRules } from '#shared/search/synonyms';

export const handler = coreHandler('core/search/search', { body: searchBody }, async ({ tenant, body, requestId, authorized }) => {
  const now = nowSeconds();
  // The tenant's synonyms (cached per container) are read while the context's plan is made; a
  // failed read serves the query without them.
  const synonymsRead = synonymRules(tenant, synonymSets()).catch((e: unknown) => {
    logger.warn('synonyms not read; searching without them', { tenant, error: String(e) });
    return [];
  });
  // An experiment's exposure is counted once the caller is confirmed, while the search runs; answered only once counted.
  const planned = body.context_id !== undefined ? planAndRecord(controlDeps(), exposureStore(), tenant, Number(body.context_id), body.user_id, now, { requestId, authorized }) : undefined;
  const plan = await planned?.plan;
  const synonyms = await synonymsRead;
  // Search analytics: recorded once the search is accepted and the caller confirmed, while it is
  // ranked; a failure to count does not fail the search.
  const analytics = searchRecording(searchRecorder(), tenant, { requestId, query: body.query, servedAt: now });
  const counted = (p: Promise<void>) => p.catch((e: unknown) => logger.warn('search not recorded for analytics', { tenant, error: String(e) }));
  let logged: Promise<unknown> = Promise.resolve();
  const result = await runSearch(searchDeps(), tenant, {
    query: body.query,
    mode: body.mode,
    filter: coreFilter(body.filters),
    limit: body.limit,
    cursor: body.starting_after,
    userId: body.user_id,
    plan,
    explain: body.explain,
    facets: body.facets,
    highlight: body.highlight ? (body.highlight_tags ?? DEFAULT_TAGS) : undefined,
    sort: body.sort,
    synonyms,
    accepted: () => {
      logged = authorized.then(() => counted(analytics.record()));
      logged.catch(() => undefined);
    },
  });
  await planned?.recorded;
  await logged;
  await authorized.then(() => counted(analytics.ranked(result.total)));
  return ok(
    coreList(
      '/v1/search',
      result.data,
      { hasMore: result.has_more, cursor: result.next_cursor },
      {
        total: result.total,
        request_id: requestId,
        ...(result.experiment ? { experiment: result.experiment } : {}),
        ...('facets' in result && result.facets ? { facets: result.facets } : {}),
      },
    ),
  );
});
