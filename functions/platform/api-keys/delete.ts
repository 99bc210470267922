import * as z from 'zod/mini';
import { credentialStore } from '#shared/data/index';
import { revokeApiKey } from '#shared/domain/credentials';
import { platformHandler } from '#shared/http/handler';
import { deleted } from '#shared/http/respond';

const path = z.object({ id: z.string().check(z.regex(/^[a-z0-9]{8}$/, 'id is an 8-character key prefix')) });

export const handler = platformHandler('platform/api-keys/delete', { path }, async ({ tenant, actor, params }) => {
  await revokeApiKey(credentialStore(), tenant, params.id, actor);
  return deleted({ id: params.id });
});
