import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { accepted } from '#shared/http/respond';
import { workQueue } from '#shared/queue/messages';
import { trainingRunView, startTraining } from '#shared/domain/training-runs';
import { trainingJobBody } from '#shared/schemas/console';

export const handler = platformHandler('platform/training-runs/create', { body: trainingJobBody, idempotency }, async ({ tenant, body, idPlan }) =>
  accepted(trainingRunView(await startTraining(consoleStore(), workQueue(), tenant, body, idPlan))),
);
