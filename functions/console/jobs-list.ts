import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listJobs } from '#shared/domain/console';

export const handler = platformHandler('console/jobs-list', {}, async ({ tenant }) => ok(await listJobs(consoleStore(), tenant)));
