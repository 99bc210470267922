import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { searchBody } from '#shared/schemas/search';
import { coreFilter } from '#shared/search/filters';
import { searchDeps } from '#shared/search/deps';
import { runSearch } from '#shared/search/service';

export const handler = coreHandler('search/search', { body: searchBody }, async ({ tenant, body, requestId }) => {
  const result = await runSearch(
    searchDeps(),
    tenant,
    { query: body.query, mode: body.mode, filter: coreFilter(body.filters), limit: body.limit, cursor: body.starting_after, userId: body.user_id },
  );
  return ok({ object: 'list', data: result.data, has_more: result.has_more, next_cursor: result.next_cursor, url: '/v1/search', total: result.total, request_id: requestId });
});
