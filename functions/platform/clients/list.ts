import { credentialStore } from '#shared/data/index';
import { listClients, platformListQuery } from '#shared/domain/credentials';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';

export const handler = platformHandler('platform/clients/list', { query: platformListQuery }, async ({ tenant, query }) => ok(await listClients(credentialStore(), tenant, query)));
