import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { created } from '#shared/http/respond';
import { createEndpoint } from '#shared/domain/console';
import { endpointBody } from '#shared/schemas/console';

export const handler = platformHandler('console/endpoints-create', { body: endpointBody }, async ({ tenant, body }) => created(await createEndpoint(consoleStore(), tenant, body)));
