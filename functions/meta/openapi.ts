import document from '../../docs/openapi.json' with { type: 'json' };
import { baseChain } from '#shared/http/base';
import { baseHeaders } from '#shared/http/respond';
import type { ApiContext, HttpEvent, HttpResult } from '#shared/http/types';

/**
 * GET /openapi.json on both APIs, without credentials: the OpenAPI 3.1 document of every route,
 * generated from the route table and the handlers' zod schemas (`npm run openapi`, checked by
 * test/unit/openapi.test.ts) and bundled with this function.
 */
const body = JSON.stringify(document);

export const handler = baseChain('core').handler(
  async (_event: HttpEvent, context: ApiContext): Promise<HttpResult> => ({
    statusCode: 200,
    headers: { ...baseHeaders('core', context.state.requestId), 'cache-control': 'public, max-age=300' },
    body,
  }),
);
