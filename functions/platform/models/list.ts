import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listModels } from '#shared/domain/model-versions';

export const handler = platformHandler('platform/models/list', {}, async ({ tenant }) => ok(await listModels(consoleStore(), tenant)));
