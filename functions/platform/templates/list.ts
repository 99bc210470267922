import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listTemplates } from '#shared/domain/templates';

export const handler = platformHandler('platform/templates/list', {}, async ({ tenant }) => ok(await listTemplates(consoleStore(), tenant)));
