import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created } from '#shared/http/respond';
import { createExperiment } from '#shared/control/records';
import { experimentBody } from '#shared/schemas/control';

export const handler = platformHandler('platform/experiments/create', { body: experimentBody, idempotency }, async ({ tenant, actor, body, idPlan }) =>
  created(await createExperiment(consoleStore(), { tenant, actor }, body, idPlan)),
);
