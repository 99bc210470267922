import { stores } from '#shared/data/index';
import { jobs } from '#shared/jobs';
import { createItems } from '#shared/domain/items';
import { coreHandler } from '#shared/http/handler';
import { created } from '#shared/http/respond';
import { createItemsBody } from '#shared/schemas/items';

export const handler = coreHandler('items/create', { body: createItemsBody, idempotent: true }, async ({ tenant, body }) =>
  created(await createItems(stores().items, jobs(), tenant, body)),
);
