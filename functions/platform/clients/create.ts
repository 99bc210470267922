import { provisioner } from '#shared/auth/provisioner';
import { credentialStore } from '#shared/data/index';
import { createClient, createClientBody } from '#shared/domain/credentials';
import { platformHandler } from '#shared/http/handler';
import { createdSecret } from '#shared/http/respond';

export const handler = platformHandler('platform/clients/create', { body: createClientBody }, async ({ tenant, actor, body }) =>
  createdSecret(await createClient(credentialStore(), tenant, body, provisioner(), actor)),
);
