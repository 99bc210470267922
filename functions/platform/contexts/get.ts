import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { getContext } from '#shared/domain/contexts';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/contexts/get', { path: idPath }, async ({ tenant, params }) => ok(await getContext(consoleStore(), tenant, params.id)));
