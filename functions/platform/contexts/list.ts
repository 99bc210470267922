import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { recordPageQuery } from '#shared/schemas/console';
import { listContexts } from '#shared/domain/contexts';

export const handler = platformHandler('platform/contexts/list', { query: recordPageQuery }, async ({ tenant, query }) => ok(await listContexts(consoleStore(), tenant, query)));
