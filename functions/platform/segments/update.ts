import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { updateSegment } from '#shared/control/records';
import { idPath } from '#shared/schemas/console';
import { segmentPatch } from '#shared/schemas/control';

export const handler = platformHandler('platform/segments/update', { path: idPath, body: segmentPatch }, async ({ tenant, actor, params, body }) =>
  ok(await updateSegment(consoleStore(), { tenant, actor }, params.id, body)),
);
