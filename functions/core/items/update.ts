import { itemStore } from '#shared/data/index';
import { workQueue } from '#shared/queue/messages';
import { updateItem } from '#shared/domain/items';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { itemPath, updateItemBody } from '#shared/schemas/items';

/** Serves both POST and PATCH /v1/items/{item_id} (PATCH is the compatibility alias). */
export const handler = coreHandler('core/items/update', { path: itemPath, body: updateItemBody }, async ({ tenant, params, body }) =>
  ok(await updateItem(itemStore(), workQueue(), tenant, params.item_id, body)),
);
