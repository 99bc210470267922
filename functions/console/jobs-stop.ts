import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { stopJob } from '#shared/domain/console';
import { jobNamePath } from '#shared/schemas/console';

export const handler = platformHandler('console/jobs-stop', { path: jobNamePath }, async ({ tenant, params }) => ok(await stopJob(consoleStore(), tenant, params.jobName)));
