import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listEventTypes } from '#shared/domain/console';

export const handler = platformHandler('console/event-types-list', {}, async ({ tenant }) => ok(await listEventTypes(consoleStore(), tenant)));
