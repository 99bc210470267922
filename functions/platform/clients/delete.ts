import * as z from 'zod/mini';
import { provisioner } from '#shared/auth/provisioner';
import { credentialStore } from '#shared/data/index';
import { deleteClient } from '#shared/domain/credentials';
import { platformHandler } from '#shared/http/handler';
import { deleted } from '#shared/http/respond';

const path = z.object({ client_id: z.string().check(z.regex(/^[A-Za-z0-9]{1,128}$/, 'client_id is malformed')) });

export const handler = platformHandler('platform/clients/delete', { path }, async ({ tenant, actor, params }) => {
  await deleteClient(credentialStore(), tenant, params.client_id, provisioner(), actor);
  return deleted({ client_id: params.client_id });
});
