import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created } from '#shared/http/respond';
import { createEndpoint } from '#shared/domain/endpoints';
import { endpointBody } from '#shared/schemas/console';

export const handler = platformHandler('platform/endpoints/create', { body: endpointBody, idempotency }, async ({ tenant, body, idPlan }) =>
  created(await createEndpoint(consoleStore(), tenant, body, idPlan)),
);
