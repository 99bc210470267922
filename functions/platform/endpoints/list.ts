import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { recordPageQuery } from '#shared/schemas/console';
import { listEndpoints } from '#shared/domain/endpoints';

export const handler = platformHandler('platform/endpoints/list', { query: recordPageQuery }, async ({ tenant, query }) => ok(await listEndpoints(consoleStore(), tenant, query)));
