import { blobs } from '#shared/blob';
import { consoleStore, eventStore, exposureStore, idempotencyStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { eraseUser } from '#shared/domain/erasure';
import { userPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/users/erase', { path: userPath }, async ({ tenant, params }) =>
  ok(await eraseUser({ console: consoleStore(), events: eventStore(), idempotency: idempotencyStore(), exposures: exposureStore(), blobs: blobs() }, tenant, params.user_id)),
);
