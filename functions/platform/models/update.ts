import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { updateModel } from '#shared/domain/model-versions';
import { modelPatch, versionPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/models/update', { path: versionPath, body: modelPatch }, async ({ tenant, params, body }) =>
  ok(await updateModel(consoleStore(), tenant, params.version, body)),
);
