import { consoleStore, exposureStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listExperiments } from '#shared/control/records';
import { experimentResults } from '#shared/control/results';
import { contextPageQuery } from '#shared/schemas/control';

export const handler = platformHandler('platform/experiments/list', { query: contextPageQuery }, async ({ tenant, query }) =>
  ok(await listExperiments(consoleStore(), tenant, query, (t, e) => experimentResults(exposureStore(), t, e))),
);
