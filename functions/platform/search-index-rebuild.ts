import { platformHandler } from '#shared/http/handler';
import { accepted } from '#shared/http/respond';
import { jobs } from '#shared/jobs';
import { requestIndexBuild } from '#shared/search/service';

/** POST /api/search-index/rebuild: folds every change into a new index artifact now (202; poll GET /api/search-index). */
export const handler = platformHandler('platform/search-index-rebuild', {}, async ({ tenant }) => accepted(await requestIndexBuild(jobs(), tenant)));
