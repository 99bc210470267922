import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listEndpoints } from '#shared/domain/console';

export const handler = platformHandler('console/endpoints-list', {}, async ({ tenant }) => ok(await listEndpoints(consoleStore(), tenant)));
