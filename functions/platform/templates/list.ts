import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { recordPageQuery } from '#shared/schemas/console';
import { listTemplates } from '#shared/domain/templates';

export const handler = platformHandler('platform/templates/list', { query: recordPageQuery }, async ({ tenant, query }) => ok(await listTemplates(consoleStore(), tenant, query)));
