import { itemStore } from '#shared/data/index';
import { workQueue } from '#shared/queue/messages';
import { createItems } from '#shared/domain/items';
import { coreHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created } from '#shared/http/respond';
import { createItemsBody } from '#shared/schemas/items';

export const handler = coreHandler('core/items/create', { body: createItemsBody, idempotency }, async ({ tenant, body, idPlan }) =>
  created(await createItems(itemStore(), workQueue(), tenant, body, idPlan)),
);
