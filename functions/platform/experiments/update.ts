import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { updateExperiment } from '#shared/control/records';
import { idPath } from '#shared/schemas/console';
import { experimentPatch } from '#shared/schemas/control';

export const handler = platformHandler('platform/experiments/update', { path: idPath, body: experimentPatch }, async ({ tenant, actor, params, body }) =>
  ok(await updateExperiment(consoleStore(), { tenant, actor }, params.id, body)),
);
