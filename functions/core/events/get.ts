import { consoleStore, eventStore } from '#shared/data/index';
import { getEvent } from '#shared/domain/events';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { eventPath } from '#shared/schemas/events';

export const handler = coreHandler('core/events/get', { path: eventPath }, async ({ tenant, params }) => ok(await getEvent(eventStore(), tenant, params.event_id, consoleStore())));
