import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { promoteModel } from '#shared/domain/model-versions';
import { promoteBody, versionPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/models/promote', { path: versionPath, body: promoteBody }, async ({ tenant, actor, params, body }) =>
  ok(await promoteModel(consoleStore(), tenant, params.version, body.endpoint_name, actor)),
);
