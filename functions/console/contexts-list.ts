import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listContexts } from '#shared/domain/console';

export const handler = platformHandler('console/contexts-list', {}, async ({ tenant }) => ok(await listContexts(consoleStore(), tenant)));
