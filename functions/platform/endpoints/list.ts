import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listEndpoints } from '#shared/domain/endpoints';

export const handler = platformHandler('platform/endpoints/list', {}, async ({ tenant }) => ok(await listEndpoints(consoleStore(), tenant)));
