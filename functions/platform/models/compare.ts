import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { compareModels } from '#shared/domain/model-versions';
import { compareQuery } from '#shared/schemas/console';

export const handler = platformHandler('platform/models/compare', { query: compareQuery }, async ({ tenant, query }) => ok(await compareModels(consoleStore(), tenant, query.versions)));
