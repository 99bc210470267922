import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listContexts } from '#shared/domain/contexts';

export const handler = platformHandler('platform/contexts/list', {}, async ({ tenant }) => ok(await listContexts(consoleStore(), tenant)));
