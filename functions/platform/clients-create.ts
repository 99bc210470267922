import { provisioner } from '#shared/auth/provisioner';
import { stores } from '#shared/data/index';
import { createClient, createClientBody } from '#shared/domain/credentials';
import { platformHandler } from '#shared/http/handler';
import { created } from '#shared/http/respond';

export const handler = platformHandler('platform/clients-create', { body: createClientBody }, async ({ tenant, body }) =>
  created(await createClient(stores().credentials, tenant, body, provisioner())),
);
