import { table } from '#shared/data/client';
import { pingTable } from '#shared/data/health';
import { ApiError } from '#shared/errors';
import { baseChain } from '#shared/http/base';
import { toResult } from '#shared/http/respond';
import type { ApiContext, HttpEvent, HttpResult } from '#shared/http/types';
import { logger } from '#shared/observability';

/** How long the table may take to answer before the service counts as unavailable. */
const TIMEOUT_MS = 3000;

/**
 * GET /health on both APIs, without credentials: 200 `{ status: "ok" }` once one cheap read of
 * the table answers, else 503 in the Core error envelope (code `unavailable`).
 */
export const handler = baseChain('core').handler(async (_event: HttpEvent, context: ApiContext): Promise<HttpResult> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      pingTable(table()),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      }),
    ]);
  } catch (e) {
    logger.error('health check: the table did not answer', { error: e as Error });
    throw new ApiError('api_error', 'unavailable', 'The service cannot reach its data store; retry later.', { status: 503 });
  } finally {
    clearTimeout(timer);
  }
  return toResult('core', context.state.requestId, { status: 200, body: { status: 'ok' }, headers: { 'cache-control': 'no-store' } });
});
