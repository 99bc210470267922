import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { approveModel } from '#shared/domain/model-versions';
import { versionPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/models/approve', { path: versionPath }, async ({ tenant, params }) => ok(await approveModel(consoleStore(), tenant, params.version)));
