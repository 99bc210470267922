import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { jobResource } from '#shared/domain/console';
import { jobNamePath } from '#shared/schemas/console';

export const handler = platformHandler('console/jobs-get', { path: jobNamePath }, async ({ tenant, params }) => ok(await jobResource(consoleStore(), tenant, params.jobName)));
