import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCoreError, request, startTestStack, type TestStack } from '../helpers/stack.ts';

/*
 * The public routes (GET /openapi.json, GET /health) on the local stack, without credentials,
 * and the routes no other integration test calls through request(): every answer here, like
 * every answer of the integration tests, is checked against the document (test/contract/).
 */
let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(() => t.stop());

describe('public routes', () => {
  it('GET /openapi.json answers the committed document, without credentials', async () => {
    const r = await request(t.base, 'GET', '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.body).toEqual(JSON.parse(readFileSync('docs/openapi.json', 'utf8')));
    expect(r.body.openapi).toBe('3.1.0');
  });

  it('GET /health answers { status: "ok" } once the table answers, never cached', async () => {
    const r = await request(t.base, 'GET', '/health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('other methods on the public paths are 405 in the Core envelope', async () => {
    expectCoreError(await request(t.base, 'POST', '/health'), 405, 'invalid_request_error', 'method_not_allowed');
    expectCoreError(await request(t.base, 'DELETE', '/openapi.json'), 405, 'invalid_request_error', 'method_not_allowed');
  });
});

describe('routes no other integration test calls', () => {
  it('OPTIONS on every Core path answers preflight without a token', async () => {
    // Literal paths, one call each: test/contract/coverage.test.ts reads the calls from the source.
    expect((await request(t.base, 'OPTIONS', '/v1/items')).status).toBe(204);
    expect((await request(t.base, 'OPTIONS', '/v1/items/1')).status).toBe(204);
    expect((await request(t.base, 'OPTIONS', '/v1/events')).status).toBe(204);
    expect((await request(t.base, 'OPTIONS', '/v1/events/1')).status).toBe(204);
    const search = await request(t.base, 'OPTIONS', '/v1/search');
    expect(search.status).toBe(204);
    expect(search.headers.get('access-control-allow-methods')).toBe('POST');
    const recs = await request(t.base, 'OPTIONS', '/v1/recommendations');
    expect(recs.status).toBe(204);
    expect(recs.headers.get('access-control-allow-methods')).toBe('GET');
  });

  it('GET /api/events/templates lists the training templates', async () => {
    const type = await t.demo.platform('POST', '/api/event-types', { name: 'contract_view', weight: 1 });
    expect(type.status).toBe(201);
    const created = await t.demo.platform('POST', '/api/events/templates', { name: 'contract', event_types: [{ id: type.body.id }] });
    expect(created.status).toBe(201);
    const list = await t.demo.platform('GET', '/api/events/templates');
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: { id: number }) => x.id)).toContain(created.body.id);
  });
});
