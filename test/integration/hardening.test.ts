import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCoreError, request, startTestStack, type Api, type TestStack } from '../helpers/stack.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(() => t.stop());

/** A Core call with a raw JSON text body (what a careless or hostile client sends). */
async function coreRaw(method: string, path: string, rawBody: string): Promise<Api> {
  const token = await t.demo.accessToken();
  return request(t.base, method, path, { rawBody, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
}

/** `{"a":{"a":...1...}}` nested `levels` deep, as text (too deep to build through JSON.stringify of an object). */
function nested(levels: number, open = '{"a":', close = '}'): string {
  return open.repeat(levels) + '1' + close.repeat(levels);
}

describe('bodies with keys named constructor or __proto__ (issue 18, defect 1)', () => {
  const EXTRA = ['"constructor":{"prototype":{}}', '"constructor":1', '"__proto__":null', '"__proto__":[1]', '"__proto__":{"name":"y"}'];

  it.each(EXTRA)('POST /v1/items with %s answers 400 validation_error, not 500', async (extra) => {
    const r = await coreRaw('POST', '/v1/items', `{"name":"x",${extra}}`);
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    const alone = await coreRaw('POST', '/v1/items', `{${extra}}`);
    expectCoreError(alone, 400, 'invalid_request_error', 'validation_error');
    const inArray = await coreRaw('POST', '/v1/items', `[{"name":"x",${extra}}]`);
    expectCoreError(inArray, 400, 'invalid_request_error', 'validation_error');
  });

  it.each(EXTRA)('PATCH /v1/items/{id} with %s answers 400 validation_error, not 500', async (extra) => {
    const created = await t.demo.core('POST', '/v1/items', { name: 'patch target' });
    expect(created.status).toBe(201);
    const r = await coreRaw('PATCH', `/v1/items/${created.body.id}`, `{"name":"x",${extra}}`);
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    const alone = await coreRaw('PATCH', `/v1/items/${created.body.id}`, `{${extra}}`);
    expectCoreError(alone, 400, 'invalid_request_error', 'validation_error');
    const after = await t.demo.core('GET', `/v1/items/${created.body.id}`);
    expect(after.body.name).toBe('patch target');
  });

  it.each(EXTRA)('POST /v1/search with %s answers 400 validation_error, not 500', async (extra) => {
    const r = await coreRaw('POST', '/v1/search', `{"query":"x",${extra}}`);
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    const alone = await coreRaw('POST', '/v1/search', `{${extra}}`);
    expectCoreError(alone, 400, 'invalid_request_error', 'validation_error');
  });

  it('nested: a stored key named constructor or __proto__ is a 400 (the marshaller refuses one, a copy drops the other)', async () => {
    for (const meta of ['{"constructor":"Acme"}', '{"a":{"constructor":{}}}', '{"a":{"__proto__":{"b":1}}}', '{"__proto__":null}']) {
      expectCoreError(await coreRaw('POST', '/v1/items', `{"name":"x","metadata":${meta}}`), 400, 'invalid_request_error', 'validation_error');
    }
    for (const extra of ['"constructor":{"a":1}', '"click":{"constructor":"x"}', '"extra":{"__proto__":[1]}']) {
      const r = await coreRaw('POST', '/v1/events', `[{"type":"click","user_id":"u","item_id":"1",${extra}}]`);
      expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    }
    const ok = await coreRaw('POST', '/v1/items', '{"name":"x","metadata":{"toString":"y","valueOf":{"hasOwnProperty":1}}}');
    expect(ok.status).toBe(201);
    expect(ok.body.metadata).toEqual({ toString: 'y', valueOf: { hasOwnProperty: 1 } });
  });

  it('names the offending field', async () => {
    const r = await coreRaw('POST', '/v1/search', '{"query":"x","constructor":1}');
    expect(Object.keys(r.body.error.details.fieldErrors)).toEqual(['constructor']);
    const p = await coreRaw('POST', '/v1/items', '{"name":"x","metadata":{"a":{"__proto__":1}}}');
    expect(Object.keys(p.body.error.details.fieldErrors)).toEqual(['metadata.a.__proto__']);
  });
});

describe('JSON nested thousands of levels deep (issue 18, defect 1)', () => {
  it('in item metadata: 400 validation_error on create and update', async () => {
    for (const levels of [5_000, 100_000]) {
      const body = `{"name":"deep","metadata":${nested(levels)}}`;
      const r = await coreRaw('POST', '/v1/items', body);
      expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
      expect(r.body.error.message).toMatch(/nest/);
    }
    const arr = await coreRaw('POST', '/v1/items', `[{"name":"deep","metadata":${nested(5_000, '[', ']')}}]`);
    expectCoreError(arr, 400, 'invalid_request_error', 'validation_error');
    const created = await t.demo.core('POST', '/v1/items', { name: 'shallow' });
    const patched = await coreRaw('PATCH', `/v1/items/${created.body.id}`, `{"metadata":${nested(5_000)}}`);
    expectCoreError(patched, 400, 'invalid_request_error', 'validation_error');
  });

  it('in an event\'s extra fields: 400 validation_error', async () => {
    const r = await coreRaw('POST', '/v1/events', `[{"type":"click","user_id":"u","item_id":"1","click":{},"extra":${nested(5_000)}}]`);
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
  });

  it('in a search body: 400 validation_error', async () => {
    const r = await coreRaw('POST', '/v1/search', `{"query":"x","filters":{"metadata":${nested(5_000)}}}`);
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
  });

  it('on a Platform route: 400 in the Platform envelope', async () => {
    const r = await request(t.base, 'POST', '/api/clients', {
      rawBody: `{"name":"deep","scopes":${nested(5_000, '[', ']')}}`,
      headers: { authorization: `Bearer ${t.demo.creds.api_key}`, 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body)).toEqual(['error']);
    expect(typeof r.body.error).toBe('string');
  });

  it('nesting the schemas allow is still accepted', async () => {
    const r = await coreRaw('POST', '/v1/items', `{"name":"ok","metadata":${nested(30)}}`);
    expect(r.status).toBe(201);
  });
});
