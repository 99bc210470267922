import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listRules } from '#shared/control/records';
import { contextPageQuery } from '#shared/schemas/control';

export const handler = platformHandler('platform/rules/list', { query: contextPageQuery }, async ({ tenant, query }) => ok(await listRules(consoleStore(), tenant, query)));
