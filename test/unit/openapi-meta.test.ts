import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiContext } from '../../shared/http/types.ts';
import { apiEvent } from '../helpers/api-event.ts';

/* The public handlers, called as Lambda calls them: no credentials, no route table lookups. */

const event = (path: string) => apiEvent('GET', path);
const context = () => ({ awsRequestId: '9f1c2a3b-0000-4000-8000-000000000002', getRemainingTimeInMillis: () => 10_000 }) as unknown as ApiContext;

beforeAll(() => {
  // A table nobody answers for: the health check must say so, quickly.
  process.env.TABLE_NAME = 'unit';
  process.env.DYNAMODB_ENDPOINT = 'http://127.0.0.1:9';
});

describe('public handlers', () => {
  it('GET /openapi.json answers the committed document', async () => {
    const { handler } = await import('../../functions/meta/openapi.ts');
    const res = await handler(event('/openapi.json'), context());
    expect(res.statusCode).toBe(200);
    expect(res.headers?.['content-type']).toBe('application/json');
    expect(JSON.parse(res.body as string)).toEqual(JSON.parse(readFileSync('docs/openapi.json', 'utf8')));
  });

  it('GET /health answers 503 in the Core envelope when the table does not answer', async () => {
    const { handler } = await import('../../functions/meta/health.ts');
    const res = await handler(event('/health'), context());
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body as string)).toEqual({
      error: { type: 'api_error', code: 'unavailable', message: expect.any(String), request_id: '9f1c2a3b-0000-4000-8000-000000000002' },
    });
  }, 15_000);
});
