import { recordServed } from '#shared/control/exposures';
import { controlDeps } from '#shared/control/deps';
import { planFor } from '#shared/control/serving';
import { exposureStore } from '#shared/data/index';
import { nowSeconds } from '#shared/domain/items';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { searchBody } from '#shared/schemas/search';
import { coreFilter } from '#shared/search/filters';
import { searchDeps } from '#shared/search/deps';
import { runSearch } from '#shared/search/service';

export const handler = coreHandler('search/search', { body: searchBody }, async ({ tenant, body, requestId, authorized }) => {
  const now = nowSeconds();
  const plan = body.context_id !== undefined ? await planFor(controlDeps(), tenant, Number(body.context_id), body.user_id, now) : undefined;
  const a = plan?.assignment;
  // Counted once the caller is confirmed, while the search runs; answered only once counted.
  const recorded = a && body.user_id !== undefined ? authorized.then(() => recordServed(exposureStore(), tenant, a, body.user_id as string, requestId, now)) : undefined;
  recorded?.catch(() => undefined);
  const result = await runSearch(searchDeps(), tenant, {
    query: body.query, mode: body.mode, filter: coreFilter(body.filters), limit: body.limit, cursor: body.starting_after, userId: body.user_id, plan, explain: body.explain,
  });
  await recorded;
  return ok({
    object: 'list', data: result.data, has_more: result.has_more, next_cursor: result.next_cursor, url: '/v1/search', total: result.total, request_id: requestId,
    ...(result.experiment ? { experiment: result.experiment } : {}),
  });
});
