import { consoleStore, eventStore } from '#shared/data/index';
import { listEvents } from '#shared/domain/events';
import { coreHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listEventsQuery } from '#shared/schemas/events';

export const handler = coreHandler('core/events/list', { query: listEventsQuery }, async ({ tenant, query }) => ok(await listEvents(eventStore(), tenant, query, undefined, consoleStore())));
