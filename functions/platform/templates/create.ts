import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { requireAdmin } from '#shared/http/middleware';
import { created } from '#shared/http/respond';
import { createTemplate } from '#shared/domain/templates';
import { templateBody } from '#shared/schemas/console';

export const handler = platformHandler('platform/templates/create', { body: templateBody, idempotency }, async ({ tenant, body, scopes, idPlan }) => {
  if (body.auto_promote) requireAdmin(scopes, 'auto_promote (it promotes versions to a serving endpoint)');
  return created(await createTemplate(consoleStore(), tenant, body, idPlan));
});
