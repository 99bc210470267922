import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created } from '#shared/http/respond';
import { createContext } from '#shared/domain/contexts';
import { contextBody } from '#shared/schemas/console';

export const handler = platformHandler('platform/contexts/create', { body: contextBody, idempotency }, async ({ tenant, body, idPlan }) =>
  created(await createContext(consoleStore(), tenant, body, idPlan)),
);
