import { consoleStore } from '#shared/data/index';
import { platformHandler } from '#shared/http/handler';
import { ok } from '#shared/http/respond';
import { modelResource } from '#shared/domain/model-versions';
import { versionPath } from '#shared/schemas/console';

export const handler = platformHandler('platform/models/get', { path: versionPath }, async ({ tenant, params }) => ok(await modelResource(consoleStore(), tenant, params.version)));
