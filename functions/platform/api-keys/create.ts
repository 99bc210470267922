import { credentialStore } from '#shared/data/index';
import { createApiKey, createApiKeyBody } from '#shared/domain/credentials';
import { platformHandler } from '#shared/http/handler';
import { createdSecret } from '#shared/http/respond';

export const handler = platformHandler('platform/api-keys/create', { body: createApiKeyBody }, async ({ tenant, actor, body }) =>
  createdSecret(await createApiKey(credentialStore(), tenant, body, actor)),
);
