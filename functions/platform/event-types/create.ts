import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created } from '#shared/http/respond';
import { createEventType } from '#shared/domain/event-types';
import { eventTypeBody } from '#shared/schemas/console';

export const handler = platformHandler('platform/event-types/create', { body: eventTypeBody, idempotency }, async ({ tenant, body, idPlan }) =>
  created(await createEventType(consoleStore(), tenant, body, idPlan)),
);
