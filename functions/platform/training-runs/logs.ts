import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { trainingRunLogs } from '#shared/domain/training-runs';
import { jobNamePath, logsQuery } from '#shared/schemas/console';

export const handler = platformHandler('platform/training-runs/logs', { path: jobNamePath, query: logsQuery }, async ({ tenant, params, query }) =>
  ok(await trainingRunLogs(consoleStore(), tenant, params.jobName, query.cursor, query.limit)),
);
