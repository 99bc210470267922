import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { getRerank } from '#shared/control/records';
import { rerankQuery } from '#shared/schemas/control';

export const handler = platformHandler('platform/rerank/get', { query: rerankQuery }, async ({ tenant, query }) => ok(await getRerank(consoleStore(), tenant, query.contextId)));
