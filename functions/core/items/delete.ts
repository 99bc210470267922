import { itemStore } from '#shared/data/index';
import { deleteItem } from '#shared/domain/items';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { itemPath } from '#shared/schemas/items';

export const handler = coreHandler('core/items/delete', { path: itemPath }, async ({ tenant, params }) => ok(await deleteItem(itemStore(), tenant, params.item_id)));
