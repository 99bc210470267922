import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { deleted } from '#shared/http/respond';
import { deleteRule } from '#shared/control/records';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/rules/delete', { path: idPath }, async ({ tenant, actor, params }) => {
  await deleteRule(consoleStore(), { tenant, actor }, params.id);
  return deleted({ id: params.id });
});
