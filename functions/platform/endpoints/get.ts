import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { getEndpoint } from '#shared/domain/endpoints';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/endpoints/get', { path: idPath }, async ({ tenant, params }) => ok(await getEndpoint(consoleStore(), tenant, params.id)));
