import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listModels } from '#shared/domain/console';

export const handler = platformHandler('console/models-list', {}, async ({ tenant }) => ok(await listModels(consoleStore(), tenant)));
