import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { makeDefaultEndpoint } from '#shared/domain/endpoints';
import { endpointPatch, idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/endpoints/update', { path: idPath, body: endpointPatch }, async ({ tenant, params }) =>
  ok(await makeDefaultEndpoint(consoleStore(), tenant, params.id)),
);
