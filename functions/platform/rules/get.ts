import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { getRule } from '#shared/control/records';
import { idPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/rules/get', { path: idPath }, async ({ tenant, params }) => ok(await getRule(consoleStore(), tenant, params.id)));
