import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { updateEventType } from '#shared/domain/event-types';
import { eventTypePatch, idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/event-types/update', { path: idPath, body: eventTypePatch }, async ({ tenant, params, body }) =>
  ok(await updateEventType(consoleStore(), tenant, params.id, body)),
);
