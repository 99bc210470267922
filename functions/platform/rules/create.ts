import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { idempotency } from '#shared/http/idempotency';
import { created } from '#shared/http/respond';
import { createRule } from '#shared/control/records';
import { ruleBody } from '#shared/schemas/control';

export const handler = platformHandler('platform/rules/create', { body: ruleBody, idempotency }, async ({ tenant, actor, body, idPlan }) =>
  created(await createRule(consoleStore(), { tenant, actor }, body, idPlan)),
);
