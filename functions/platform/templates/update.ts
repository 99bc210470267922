import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { requireAdmin } from '#shared/http/middleware';
import { ok } from '#shared/http/respond';
import { updateTemplate } from '#shared/domain/templates';
import { idPath, templatePatch } from '#shared/schemas/console';

export const handler = platformHandler('platform/templates/update', { path: idPath, body: templatePatch }, async ({ tenant, params, body, scopes }) => {
  if (body.auto_promote) requireAdmin(scopes, 'auto_promote (it promotes versions to a serving endpoint)');
  return ok(await updateTemplate(consoleStore(), tenant, params.id, body));
});
