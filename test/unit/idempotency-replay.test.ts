import { METRICS_KEY } from '@aws-lambda-powertools/commons';
import { describe, expect, it } from 'vitest';
import type { IdempotencyStore } from '../../shared/domain/idempotency.ts';
import { idempotency } from '../../shared/http/idempotency.ts';
import type { HttpRequest } from '../../shared/http/types.ts';
import { apiEvent } from '../helpers/api-event.ts';

describe('an Idempotency-Key replay', () => {
  it("answers the stored response only once the request's quota write has settled and Powertools' cleanup ran (middy skips the steps after an early response)", async () => {
    const store = { claim: async () => ({ state: 'replay', status: 201, body: '{"id":"7"}' }) } as unknown as IdempotencyStore;
    const seen: string[] = [];
    const quotaSettled = new Promise<void>((r) => setTimeout(r, 30)).then(() => {
      seen.push('quota settled');
    });
    const req = {
      event: apiEvent('POST', '/v1/items', '/v1/items', { body: '{"name":"x"}', headers: { 'idempotency-key': 'k-1', 'content-type': 'application/json' } }),
      context: { state: { requestId: '9f1c2a3b-0000-4000-8000-000000000004', tenant: 't', scopes: [], quotaSettled } },
      internal: {
        [METRICS_KEY]: async () => {
          seen.push('metrics flushed');
        },
      },
    } as unknown as HttpRequest;
    const answer = await idempotency('core', () => store).before?.(req);
    seen.push('answered');
    expect(answer).toMatchObject({ statusCode: 201, body: '{"id":"7"}', headers: { 'idempotent-replayed': 'true' } });
    // Was ['answered', 'quota settled']: the metrics of a replay never flushed.
    expect(seen).toEqual(['quota settled', 'metrics flushed', 'answered']);
  });

  it('fingerprints method, path and exact body: the same key and body sent to another path is another request (409 idempotency_key_reused there), not a replay', async () => {
    const hashes: string[] = [];
    const store = {
      claim: async (_t: string, _k: string, hash: string) => {
        hashes.push(hash);
        return { state: 'new' };
      },
    } as unknown as IdempotencyStore;
    const send = (method: string, path: string, body: string) =>
      idempotency('core', () => store).before?.({
        event: apiEvent(method, path, path, { body, headers: { 'idempotency-key': 'k-1', 'content-type': 'application/json' } }),
        context: { state: { requestId: '9f1c2a3b-0000-4000-8000-000000000005', tenant: 't', scopes: [] } },
      } as unknown as HttpRequest);
    await send('POST', '/v1/items', '{"name":"x"}');
    await send('POST', '/v1/items', '{"name":"x"}');
    await send('POST', '/v1/events', '{"name":"x"}');
    await send('PUT', '/v1/items', '{"name":"x"}');
    await send('POST', '/v1/items', '{"name": "x"}');
    // Without the method and path in it, a key reused on another route would replay the first route's answer.
    expect(hashes[1]).toBe(hashes[0]);
    expect(new Set(hashes).size).toBe(4);
  });
});
