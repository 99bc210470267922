import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { getSegment } from '#shared/control/records';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/segments/get', { path: idPath }, async ({ tenant, params }) => ok(await getSegment(consoleStore(), tenant, params.id)));
