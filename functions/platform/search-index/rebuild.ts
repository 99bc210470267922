import { platformHandler } from '#shared/http/handler';
import { accepted } from '#shared/http/respond';
import { workQueue } from '#shared/queue/messages';
import { requestIndexBuild } from '#shared/search/status';

/** POST /api/search-index/rebuild: folds every change into a new index artifact now (202; poll GET /api/search-index). */
export const handler = platformHandler('platform/search-index/rebuild', {}, async ({ tenant }) => accepted(await requestIndexBuild(workQueue(), tenant)));
