import { consoleHandler } from '#shared/console-auth/handler';
import { itemStore } from '#shared/data/index';
import { updateItem } from '#shared/domain/items';
import { ok } from '#shared/http/respond';
import { workQueue } from '#shared/queue/messages';
import { itemPath, updateItemBody } from '#shared/schemas/items';

/** The console catalog's item edit (admins): what `POST /v1/items/{item_id}` does, for the session's tenant. */
export const handler = consoleHandler('console-session/items', { path: itemPath, body: updateItemBody, writes: true }, async ({ tenant, params, body }) =>
  ok(await updateItem(itemStore(), workQueue(), tenant, params.item_id, body)),
);
