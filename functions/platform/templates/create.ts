import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { created } from '#shared/http/respond';
import { createTemplate } from '#shared/domain/templates';
import { templateBody } from '#shared/schemas/console';

export const handler = platformHandler('platform/templates/create', { body: templateBody }, async ({ tenant, body }) => created(await createTemplate(consoleStore(), tenant, body)));
