import { itemStore } from '#shared/data/index';
import { listItems } from '#shared/domain/items';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listItemsQuery } from '#shared/schemas/items';

export const handler = coreHandler('core/items/list', { query: listItemsQuery }, async ({ tenant, query }) => ok(await listItems(itemStore(), tenant, query)));
