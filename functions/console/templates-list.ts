import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listTemplates } from '#shared/domain/console';

export const handler = platformHandler('console/templates-list', {}, async ({ tenant }) => ok(await listTemplates(consoleStore(), tenant)));
