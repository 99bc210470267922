import { consoleStore, exposureStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { getExperiment } from '#shared/control/records';
import { experimentResults } from '#shared/control/results';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/experiments/get', { path: idPath }, async ({ tenant, params }) =>
  ok(await getExperiment(consoleStore(), tenant, params.id, (t, e) => experimentResults(exposureStore(), t, e))),
);
