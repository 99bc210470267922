import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { created } from '#shared/http/respond';
import { createContext } from '#shared/domain/contexts';
import { contextBody } from '#shared/schemas/console';

export const handler = platformHandler('platform/contexts/create', { body: contextBody }, async ({ tenant, body }) => created(await createContext(consoleStore(), tenant, body)));
