import { controlDeps } from '#shared/control/deps';
import { exposureStore, searchRecorder, synonymSets } from '#shared/data/index';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { searchBody } from '#shared/schemas/search';
import { serveSearch } from '#shared/search/core-search';
import { searchDeps } from '#shared/search/deps';

export const handler = coreHandler('core/search/search', { body: searchBody }, async ({ tenant, body, requestId, authorized }) =>
  ok(
    await serveSearch(
      { search: searchDeps(), control: controlDeps(), synonymSets: synonymSets(), traffic: { exposures: exposureStore(), recorder: searchRecorder(), authorized } },
      tenant,
      body,
      requestId,
    ),
  ),
);
