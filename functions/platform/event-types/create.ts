import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { created } from '#shared/http/respond';
import { createEventType } from '#shared/domain/event-types';
import { eventTypeBody } from '#shared/schemas/console';

export const handler = platformHandler('platform/event-types/create', { body: eventTypeBody }, async ({ tenant, body }) => created(await createEventType(consoleStore(), tenant, body)));
