import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiContext, HttpEvent } from '../../shared/http/types.ts';

/* The public handlers, called as Lambda calls them: no credentials, no route table lookups. */

function event(path: string): HttpEvent {
  return {
    version: '2.0',
    routeKey: `GET ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: {},
    requestContext: {
      accountId: '1',
      apiId: 'a',
      domainName: 'x',
      domainPrefix: 'x',
      requestId: 'r',
      routeKey: `GET ${path}`,
      stage: '$default',
      time: '',
      timeEpoch: 0,
      http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
    },
    isBase64Encoded: false,
  };
}
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
