import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created } from '#shared/http/respond';
import { createSegment } from '#shared/control/records';
import { segmentBody } from '#shared/schemas/control';

export const handler = platformHandler('platform/segments/create', { body: segmentBody, idempotency }, async ({ tenant, actor, body, idPlan }) =>
  created(await createSegment(consoleStore(), { tenant, actor }, body, idPlan)),
);
