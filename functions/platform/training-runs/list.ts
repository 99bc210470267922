import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listTrainingRuns } from '#shared/domain/training-runs';

export const handler = platformHandler('platform/training-runs/list', {}, async ({ tenant }) => ok(await listTrainingRuns(consoleStore(), tenant)));
