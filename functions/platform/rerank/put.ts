import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { putRerank } from '#shared/control/records';
import { rerankBody, rerankQuery } from '#shared/schemas/control';

export const handler = platformHandler('platform/rerank/put', { query: rerankQuery, body: rerankBody }, async ({ tenant, actor, query, body }) =>
  ok(await putRerank(consoleStore(), { tenant, actor }, query.contextId, body)),
);
