import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { updateRule } from '#shared/control/records';
import { idPath } from '#shared/schemas/console';
import { rulePatch } from '#shared/schemas/control';

export const handler = platformHandler('platform/rules/update', { path: idPath, body: rulePatch }, async ({ tenant, actor, params, body }) =>
  ok(await updateRule(consoleStore(), { tenant, actor }, params.id, body)),
);
