import { itemStore } from '#shared/data/index';
import { getItem } from '#shared/domain/items';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { itemPath } from '#shared/schemas/items';

export const handler = coreHandler('core/items/get', { path: itemPath }, async ({ tenant, params }) => ok(await getItem(itemStore(), tenant, params.item_id)));
