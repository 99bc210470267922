import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { jobPageQuery } from '#shared/schemas/console';
import { listTrainingRuns } from '#shared/domain/training-runs';

export const handler = platformHandler('platform/training-runs/list', { query: jobPageQuery }, async ({ tenant, query }) => ok(await listTrainingRuns(consoleStore(), tenant, query)));
