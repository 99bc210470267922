import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { recordPageQuery } from '#shared/schemas/console';
import { listModels } from '#shared/domain/model-versions';

export const handler = platformHandler('platform/models/list', { query: recordPageQuery }, async ({ tenant, query }) => ok(await listModels(consoleStore(), tenant, query)));
