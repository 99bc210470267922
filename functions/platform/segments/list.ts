import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listSegments } from '#shared/control/records';
import { pageQuery } from '#shared/schemas/control';

export const handler = platformHandler('platform/segments/list', { query: pageQuery }, async ({ tenant, query }) => ok(await listSegments(consoleStore(), tenant, query)));
