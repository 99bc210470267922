import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { jobLogs } from '#shared/domain/console';
import { jobNamePath, logsQuery } from '#shared/schemas/console';

export const handler = platformHandler('console/jobs-logs', { path: jobNamePath, query: logsQuery }, async ({ tenant, params, query }) =>
  ok(await jobLogs(consoleStore(), tenant, params.jobName, query.cursor, query.limit)),
);
