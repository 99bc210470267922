import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { deleted } from '#shared/http/respond';
import { deleteSegment } from '#shared/control/records';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/segments/delete', { path: idPath }, async ({ tenant, actor, params }) => {
  await deleteSegment(consoleStore(), { tenant, actor }, params.id);
  return deleted({ id: params.id });
});
