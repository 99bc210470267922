import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { stopTrainingRun } from '#shared/domain/training-runs';
import { jobNamePath } from '#shared/schemas/console';

export const handler = platformHandler('platform/training-runs/stop', { path: jobNamePath }, async ({ tenant, params }) => ok(await stopTrainingRun(consoleStore(), tenant, params.jobName)));
