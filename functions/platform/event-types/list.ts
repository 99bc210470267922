import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listEventTypes } from '#shared/domain/event-types';

export const handler = platformHandler('platform/event-types/list', {}, async ({ tenant }) => ok(await listEventTypes(consoleStore(), tenant)));
