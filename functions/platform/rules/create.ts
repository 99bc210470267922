import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { created } from '#shared/http/respond';
import { createRule } from '#shared/control/records';
import { ruleBody } from '#shared/schemas/control';

export const handler = platformHandler('platform/rules/create', { body: ruleBody }, async ({ tenant, actor, body }) => created(await createRule(consoleStore(), { tenant, actor }, body)));
