import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { getEventType } from '#shared/domain/event-types';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/event-types/get', { path: idPath }, async ({ tenant, params }) => ok(await getEventType(consoleStore(), tenant, params.id)));
