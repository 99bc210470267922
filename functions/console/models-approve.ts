import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { approveModel } from '#shared/domain/console';
import { versionPath } from '#shared/schemas/console';

export const handler = platformHandler('console/models-approve', { path: versionPath }, async ({ tenant, params }) => ok(await approveModel(consoleStore(), tenant, params.version)));
