import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { listAudit } from '#shared/control/records';
import { auditQuery } from '#shared/schemas/control';

export const handler = platformHandler('platform/audit/list', { query: auditQuery }, async ({ tenant, query }) => ok(await listAudit(consoleStore(), tenant, query)));
