import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { searchDeps } from '#shared/search/deps';
import { indexStatus } from '#shared/search/status';

/** GET /api/search-index: how many items are searchable, embedded, waiting; when search last changed. */
export const handler = platformHandler('platform/search-index/status', {}, async ({ tenant }) => ok(await indexStatus(searchDeps(), tenant)));
