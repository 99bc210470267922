import { credentialStore } from '#shared/data/index';
import { listApiKeys, platformListQuery } from '#shared/domain/credentials';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';

export const handler = platformHandler('platform/api-keys/list', { query: platformListQuery }, async ({ tenant, query }) => ok(await listApiKeys(credentialStore(), tenant, query)));
