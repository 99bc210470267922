import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { recordPageQuery } from '#shared/schemas/console';
import { listEventTypes } from '#shared/domain/event-types';

export const handler = platformHandler('platform/event-types/list', { query: recordPageQuery }, async ({ tenant, query }) => ok(await listEventTypes(consoleStore(), tenant, query)));
