import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { trainingRunResource } from '#shared/domain/training-runs';
import { jobNamePath } from '#shared/schemas/console';

export const handler = platformHandler('platform/training-runs/get', { path: jobNamePath }, async ({ tenant, params }) => ok(await trainingRunResource(consoleStore(), tenant, params.jobName)));
