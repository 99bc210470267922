import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { getTemplate } from '#shared/domain/templates';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/templates/get', { path: idPath }, async ({ tenant, params }) => ok(await getTemplate(consoleStore(), tenant, params.id)));
