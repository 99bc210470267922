import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../local/stack.ts';
import { TenantClient, expectCoreError, request, spawnServer, startTestStack, type Api, type TestStack } from '../helpers/stack.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(() => t.stop());

/** A Core call with a raw JSON text body (what a careless or hostile client sends). */
async function coreRaw(method: string, path: string, rawBody: string | Uint8Array): Promise<Api> {
  const token = await t.demo.accessToken();
  return request(t.base, method, path, { rawBody, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
}

/** `{"a":{"a":...1...}}` nested `levels` deep, as text (too deep to build through JSON.stringify of an object). */
function nested(levels: number, open = '{"a":', close = '}'): string {
  return `${open.repeat(levels)}1${close.repeat(levels)}`;
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

  it("in an event's extra fields: 400 validation_error", async () => {
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

/** `npm start` as its own process, everything it writes kept (logger output included). */
async function serverWithOutput(env: Record<string, string>): Promise<{ base: string; creds: Credentials; output: () => string; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-logs-'));
  const s = await spawnServer(dataDir, env);
  return {
    ...s,
    stop: async () => {
      await s.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe('no log line holds a key, secret or token (issue 18, defect 2)', () => {
  it('through creating an API key and a client, exchanging a token and using both, at the most verbose logging', async () => {
    // DEBUG, and the event logging an operator might turn on to debug: still no secret written.
    const s = await serverWithOutput({ POWERTOOLS_LOG_LEVEL: 'DEBUG', POWERTOOLS_LOGGER_LOG_EVENT: 'true' });
    const basic = (id: string, secret: string) => Buffer.from(`${id}:${secret}`).toString('base64');
    const secrets: string[] = [s.creds.api_key, s.creds.client_secret, basic(s.creds.client_id, s.creds.client_secret)];
    try {
      const demo = new TenantClient(s.base, s.creds);
      const key = await demo.platform('POST', '/api/api-keys', { name: 'logged?', environment: 'staging', scopes: ['admin'] });
      expect(key.status).toBe(201);
      secrets.push(key.body.key);
      const client = await demo.platform('POST', '/api/clients', { name: 'logged?', scopes: ['service-api/read', 'service-api/write'] }, key.body.key);
      expect(client.status).toBe(201);
      secrets.push(client.body.client_secret, basic(client.body.client_id, client.body.client_secret));
      const app = new TenantClient(s.base, { ...s.creds, client_id: client.body.client_id, client_secret: client.body.client_secret });
      const token = await app.accessToken();
      secrets.push(token);
      expect((await app.core('POST', '/v1/items', { name: 'a' })).status).toBe(201);
      expect((await app.core('GET', '/v1/items')).status).toBe(200);
      expect((await app.fetchToken(undefined, { id: client.body.client_id, secret: `${client.body.client_secret}x` })).status).toBe(401);
      expect((await app.core('GET', '/v1/items', undefined, { token: `${token}x` })).status).toBe(401);
      expect((await demo.platform('GET', '/api/clients', undefined, `${key.body.key}x`)).status).toBe(401);
      // The embedding worker logs each item it embeds (DEBUG): wait for a log line, so the check
      // below is known to see the loggers' output.
      const end = Date.now() + 15_000;
      while (!/"level":"DEBUG"/.test(s.output()) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    } finally {
      await s.stop();
    }
    const out = s.output();
    // The loggers did write (so the check below means something).
    expect(out).toMatch(/"level":"DEBUG"/);
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(16);
      expect(out.includes(secret), `a log line holds ${secret.slice(0, 8)}...`).toBe(false);
    }
  });
});

/** A token request with the Basic credentials and form given. */
function tokenRequest(id: string, secret: string, form: string): Promise<Api> {
  return request(t.base, 'POST', '/oauth2/token', {
    rawBody: form,
    headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
  });
}

function expectOauthError(r: Api, status: number, error: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toEqual({ error, error_description: expect.any(String) });
}

describe('client ids that cannot exist (issue 18, defect 4)', () => {
  it.each([
    ['3,000 characters', 'a'.repeat(3000)],
    ['129 characters', 'a'.repeat(129)],
    ['non-ASCII', 'é'.repeat(10)],
    ['a NUL', 'ab\u0000cd'],
    ['punctuation', 'a/b#c'],
  ])('a Basic client_id of %s is 401 invalid_client, not 500', async (_what, id) => {
    expectOauthError(await tokenRequest(id, 'secret', 'grant_type=client_credentials'), 401, 'invalid_client');
  });

  it('a real client still gets its token', async () => {
    const r = await tokenRequest(t.demo.creds.client_id, t.demo.creds.client_secret, 'grant_type=client_credentials');
    expect(r.status).toBe(200);
  });
});

describe('repeated token request parameters (issue 18, defect 6; RFC 6749 §3.1)', () => {
  it.each([
    'grant_type=client_credentials&scope=service-api/read&scope=service-api/write',
    'grant_type=client_credentials&grant_type=client_credentials',
    'grant_type=client_credentials&grant_type=password',
    'grant_type=client_credentials&scope=&scope=service-api/read',
  ])('%s is 400 invalid_request', async (form) => {
    expectOauthError(await tokenRequest(t.demo.creds.client_id, t.demo.creds.client_secret, form), 400, 'invalid_request');
  });
});

describe('console ids above 2^53 (issue 18, defect 6)', () => {
  const platform = (method: string, path: string, body?: unknown) => t.demo.platform(method, path, body);

  it.each([
    ['GET', '/api/models/9007199254740993'],
    ['GET', '/api/models/9007199254740992'],
    ['GET', '/api/models/99999999999999999999'],
    ['POST', '/api/models/9007199254740993/approve'],
    ['PATCH', '/api/models/9007199254740993', { label: 'x' }],
    ['POST', '/api/models/9007199254740993/promote', { endpoint_name: 'main' }],
    ['GET', '/api/events/templates/9007199254740993'],
    ['PATCH', '/api/events/templates/9007199254740993', { status: 'Published' }],
    ['PATCH', '/api/event-types/9007199254740993', { weight: 2 }],
  ] as const)('%s %s is 404 naming the id as sent (never rounded to another id), as on the Core routes', async (method, path, body?: unknown) => {
    const r = await platform(method, path, body);
    expect(r.status, JSON.stringify(r.body)).toBe(404);
    expect(Object.keys(r.body)).toEqual(['error']);
    expect(r.body.error).toContain(` ${/\/(\d+)/.exec(path)?.[1]}.`);
  });

  it('the largest safe id is an ordinary id (404 when there is none)', async () => {
    expect((await platform('GET', '/api/models/9007199254740991')).status).toBe(404);
    expect((await platform('GET', '/api/events/templates/9007199254740991')).status).toBe(404);
  });
});

describe('job names that are not a job of the tenant (issue 18, defect 7)', () => {
  const names = ['nope', 'train-0', 'train-01', 'train-99', 'train-9007199254740993', 'train-99999999999999999999', 'TRAIN-1', 'train-1x', 'x'.repeat(300)];

  it.each(names)('%s is 404 on every job route', async (name) => {
    const enc = encodeURIComponent(name);
    for (const [method, path] of [
      ['GET', `/api/training-jobs/${enc}`],
      ['GET', `/api/training-jobs/logs/${enc}`],
      ['POST', `/api/training-jobs/${enc}/stop`],
    ] as const) {
      const r = await t.demo.platform(method, path);
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(404);
      expect(Object.keys(r.body)).toEqual(['error']);
    }
  });
});

describe('a path parameter whose percent-encoding is not UTF-8', () => {
  it('is 400 naming it, not taken as sent: DELETE /api/users/%FF erased the user named "%FF" and answered 200', async () => {
    const named = await t.demo.core('POST', '/v1/events', [{ type: 'click', user_id: '%FF', item_id: '1' }]);
    expect(named.status, JSON.stringify(named.body)).toBe(201);
    const r = await t.demo.platform('DELETE', '/api/users/%FF');
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid path parameter. user_id: Not valid percent-encoded UTF-8.' });
    expect((await t.demo.core('GET', `/v1/events?user_id=${encodeURIComponent('%FF')}`)).body.data).toHaveLength(1);
    // The user named "%FF", addressed as that name encoded, is erased.
    expect((await t.demo.platform('DELETE', `/api/users/${encodeURIComponent('%FF')}`)).body).toMatchObject({ user_id: '%FF', deleted_events: 1 });
    expectCoreError(await t.demo.core('GET', '/v1/items/%FF'), 400, 'invalid_request_error', 'validation_error');
    expect((await t.demo.platform('GET', '/api/training-jobs/train-1%FF')).status).toBe(400);
  });
});

describe('search query length (issue 18, defect 8)', () => {
  it('a query over 1,000 characters is refused with the limit in the message', async () => {
    const r = await t.demo.core('POST', '/v1/search', { query: 'a'.repeat(1001) });
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    const message = r.body.error.details.fieldErrors.query.join(' ');
    expect(message).toMatch(/1,?000 characters/);
    expect(message).not.toMatch(/required/);
    expect((await t.demo.core('POST', '/v1/search', { query: 'a'.repeat(1000) })).status).toBe(200);
  });

  it('a missing query is still "query is required"', async () => {
    const r = await t.demo.core('POST', '/v1/search', {});
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    expect(r.body.error.details.fieldErrors.query.join(' ')).toMatch(/required/);
  });
});

describe('a body sent to a route that takes none (docs/api.md: unknown fields are 400)', () => {
  const platform = (method: string, path: string, rawBody: string) =>
    request(t.base, method, path, { rawBody, headers: { authorization: `Bearer ${t.demo.creds.api_key}`, 'content-type': 'application/json' } });

  it('a field is refused, naming it, on the Platform and the Core API', async () => {
    const r = await platform('POST', '/api/search-index/rebuild', '{"force":true}');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: expect.stringMatching(/force.*Unknown field/) });
    // Each field's messages in one sentence: no message's own period before a separator ("Unknown field.; name: ...").
    const two = await platform('POST', '/api/contexts', '{"force":true,"x":1}');
    expect(two.body).toEqual({ error: 'Invalid request body. name: name is required; force: Unknown field; x: Unknown field.' });
    const c = await coreRaw('DELETE', '/v1/items/999999', '{"cascade":true}');
    expectCoreError(c, 400, 'invalid_request_error', 'validation_error');
    expect(c.body.error.details.fieldErrors).toEqual({ cascade: ['Unknown field.'] });
  });

  it('text that is not JSON is invalid_json, and a list or a value is no body either', async () => {
    expect(await platform('POST', '/api/search-index/rebuild', '{oops')).toMatchObject({ status: 400, body: { error: expect.stringMatching(/JSON/) } });
    expectCoreError(await coreRaw('DELETE', '/v1/items/999999', '[1]'), 400, 'invalid_request_error', 'validation_error');
    expect((await platform('POST', '/api/search-index/rebuild', '"x"')).status).toBe(400);
  });

  it('none, a blank one or {} is as no body', async () => {
    for (const raw of ['', '  ', '{}']) expect((await platform('POST', '/api/search-index/rebuild', raw)).status, JSON.stringify(raw)).toBe(202);
    expectCoreError(await coreRaw('DELETE', '/v1/items/999999', '{}'), 404, 'not_found_error', 'item_not_found');
  });

  it('a blank one over the 1 MiB limit is 413, as `{}` and as many spaces is (it was taken as none: 202, 404)', async () => {
    const blank = ' '.repeat(1024 * 1024 + 1);
    const r = await platform('POST', '/api/search-index/rebuild', blank);
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: 'The request body exceeds 1048576 bytes.' });
    expectCoreError(await coreRaw('DELETE', '/v1/items/999999', blank), 413, 'invalid_request_error', 'body_too_large');
    expect((await platform('DELETE', '/api/rules/999', `{}${blank}`)).status).toBe(413);
    // At the limit, blank is still no body.
    expect((await platform('POST', '/api/search-index/rebuild', ' '.repeat(1024 * 1024))).status).toBe(202);
  });
});

describe('text that is not what it seems (a Core review: two users read as one)', () => {
  it('a body that is not UTF-8 is 400 invalid_json, not U+FFFD in its place', async () => {
    const latin1 = (text: string) => Buffer.from(text, 'latin1');
    for (const body of [latin1('[{"type":"click","user_id":"caf\u00e9","item_id":"1"}]'), latin1('[{"type":"click","user_id":"caf\u00e8","item_id":"1"}]')]) {
      const r = await coreRaw('POST', '/v1/events', body);
      expectCoreError(r, 400, 'invalid_request_error', 'invalid_json');
      expect(r.body.error.message).toMatch(/not valid UTF-8/);
    }
    expectCoreError(await coreRaw('POST', '/v1/items', latin1('{"name":"caf\u00e9"}')), 400, 'invalid_request_error', 'invalid_json');
    // The same text as UTF-8 is taken, after a byte order mark too (RFC 8259 §8.1: a parser may ignore one; a UTF-8 file saved by Notepad or PowerShell starts with one).
    expect((await coreRaw('POST', '/v1/items', Buffer.from('{"name":"caf\u00e9"}', 'utf8'))).body).toMatchObject({ name: 'caf\u00e9' });
    expect((await coreRaw('POST', '/v1/items', Buffer.from('\uFEFF{"name":"bom"}', 'utf8'))).body).toMatchObject({ name: 'bom' });
    const platformBom = await request(t.base, 'POST', '/api/search-index/rebuild', {
      rawBody: '\uFEFF{}',
      headers: { authorization: `Bearer ${t.demo.creds.api_key}`, 'content-type': 'application/json' },
    });
    expect(platformBom.status).toBe(202);
    // A compressed body is told so (neither API Gateway's HTTP API nor the local server decodes one), not that its bytes are no UTF-8.
    const gzipped = await request(t.base, 'POST', '/v1/items', {
      rawBody: gzipSync('{"name":"zipped"}'),
      headers: { authorization: `Bearer ${await t.demo.accessToken()}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expectCoreError(gzipped, 400, 'invalid_request_error', 'invalid_json');
    expect(gzipped.body.error.message).toBe('The request body is sent compressed (Content-Encoding: gzip), which this API does not read: send it uncompressed.');
    // The token endpoint answers in its own codes.
    const basic = `Basic ${Buffer.from(`${t.stack.credentials.client_id}:${t.stack.credentials.client_secret}`).toString('base64')}`;
    const token = await request(t.base, 'POST', '/oauth2/token', {
      rawBody: latin1('grant_type=client_credentials&scope=caf\u00e9'),
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(token.status).toBe(400);
    expect(token.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/not valid UTF-8/) });
    // A compressed token request is told so too, in its own codes (it was told its bytes are no UTF-8).
    const zippedToken = await request(t.base, 'POST', '/oauth2/token', {
      rawBody: gzipSync('grant_type=client_credentials'),
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
    });
    expect(zippedToken.status).toBe(400);
    expect(zippedToken.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/sent compressed \(Content-Encoding: gzip\)/) });
  });

  it('a query parameter sent twice, or percent-encoded bytes that are not UTF-8, is 400 naming it', async () => {
    const twice = await t.demo.core('GET', '/v1/items?category=hats&category=shoes');
    expectCoreError(twice, 400, 'invalid_request_error', 'validation_error');
    expect(twice.body.error.details.fieldErrors).toEqual({ category: [expect.stringMatching(/more than once/)] });
    expectCoreError(await t.demo.core('GET', '/v1/recommendations?user_id=u1&user_id=u2'), 400, 'invalid_request_error', 'validation_error');
    expect((await t.demo.platform('GET', '/api/contexts?limit=2&limit=3')).body.error).toMatch(/limit: Sent more than once/);
    const bytes = await t.demo.core('GET', '/v1/events?user_id=caf%FF');
    expectCoreError(bytes, 400, 'invalid_request_error', 'validation_error');
    expect(bytes.body.error.details.fieldErrors).toEqual({ user_id: ['Not valid percent-encoded UTF-8.'] });
    // Encoded as UTF-8, the same is taken; so are a list in one value and a key sent once.
    expect((await t.demo.core('GET', '/v1/events?user_id=caf%C3%A9')).status).toBe(200);
    expect((await t.demo.core('GET', '/v1/items?category=a%2Cb&limit=1')).status).toBe(200);
    // A % without two hex digits is itself (as URLSearchParams and browsers read it).
    expect((await t.demo.core('GET', '/v1/items?category=100%&limit=1')).status).toBe(200);
  });
});

describe('query parameters named as Object.prototype names its members', () => {
  it('are parameters like any other: unknown ones are 400, on the Platform and the Core API', async () => {
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const r = await t.demo.platform('GET', `/api/contexts?${name}=1&limit=1`);
      expect(r.status, name).toBe(400);
      expect(r.body.error, name).toMatch(/Unknown field/);
      expectCoreError(await t.demo.core('GET', `/v1/items?${name}=1`), 400, 'invalid_request_error', 'validation_error');
    }
  });

  it('a parameter with an empty name is named as sent (empty), not as the body', async () => {
    const r = await t.demo.core('GET', '/v1/items?=5');
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    expect(r.body.error.details.fieldErrors).toEqual({ '': ['Unknown field.'] });
  });
});

describe('names a person gives records', () => {
  it('are refused when nothing in them shows (spaces, zero-width characters), on contexts, keys, clients, templates, rules and segments; the message names the field once', async () => {
    const P = (method: string, path: string, body: unknown) => t.demo.platform(method, path, body);
    for (const [path, body] of [
      ['/api/contexts', { name: '   ' }],
      ['/api/api-keys', { name: ' ', scopes: ['admin'] }],
      ['/api/clients', { name: '\t' }],
      ['/api/events/templates', { name: '  ', event_types: [{ id: 1 }] }],
      ['/api/rules', { name: '  ', context_id: 1, conditions: [], boost: 2 }],
      // Nothing that shows: a zero-width space, a no-break space with a soft hyphen, a Hangul filler.
      ['/api/rules', { name: '\u200b', context_id: 1, conditions: [], boost: 2 }],
      ['/api/segments', { name: '\u00a0\u00ad', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } }],
      ['/api/contexts', { name: '\u3164' }],
      // Past the BMP: tag characters alone (the OpenAPI pattern, BMP only, lets them by).
      ['/api/contexts', { name: '\u{E0041}\u{E0042}' }],
    ] as const) {
      const r = await P('POST', path, body);
      expect(r.status, path).toBe(400);
      expect(r.body.error, path).toMatch(/name: name must not be blank/);
      expect(r.body.error, path).not.toMatch(/blank.*blank/);
    }
    // An empty one is empty, said once (until 2026-12-08 "name must not be empty, name must not be blank").
    for (const [path, body, field] of [
      ['/api/contexts', { name: '' }, 'name'],
      ['/api/clients', { name: '' }, 'name'],
      ['/api/api-keys', { name: '', scopes: ['admin'] }, 'name'],
      ['/api/api-keys', { name: 'k', environment: '', scopes: ['admin'] }, 'environment'],
    ] as const) {
      const r = await P('POST', path, body);
      expect(r.status, path).toBe(400);
      expect(r.body.error, path).toBe(`Invalid request body. ${field}: ${field} must not be empty.`);
    }
    // A name with one character that shows among them is a name.
    const named = await P('POST', '/api/contexts', { name: '\u200b\u00e9\u200d' });
    expect(named.status).toBe(201);
    // Control characters (NUL, line breaks): a name is one line a console shows.
    for (const name of ['a\u0000b', 'two\nlines', 'two\u2028lines', 'two\u2029paragraphs']) {
      const r = await P('POST', '/api/contexts', { name });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.body.error).toMatch(/name: name must not hold control characters/);
    }
    // So is an API key's environment.
    for (const [environment, message] of [
      ['a\u0000b', /environment: environment must not hold control characters/],
      ['prod\n', /environment: environment must not hold control characters/],
      ['   ', /environment: environment must not be blank/],
    ] as const) {
      const r = await P('POST', '/api/api-keys', { name: 'k', environment, scopes: ['items'] });
      expect(r.status, JSON.stringify(environment)).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    // An event type named constructor could never carry its payload (an object key items and events refuse).
    expect(await P('POST', '/api/event-types', { name: 'constructor', weight: 1 })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/name may not be constructor/) } });
    const bad = await P('POST', '/api/model-endpoints', { endpoint_name: '-x' });
    expect(bad.body.error).toMatch(/endpoint_name: 1-64 letters/);
    expect(bad.body.error).not.toMatch(/endpoint_name: endpoint_name/);
  });
});

describe('an answer naming every field in error (a Core review: 400s past what Lambda may answer)', () => {
  /** The bytes of an answer as Lambda writes it (the body a JSON string in its JSON): past 6 MB API Gateway answers its own 500. */
  const lambdaBytes = (r: Api) => Buffer.byteLength(JSON.stringify({ statusCode: r.status, body: JSON.stringify(r.body) }));
  const LAMBDA_ANSWER = 6 * 1024 * 1024;
  const keys = (n: number) => Array.from({ length: n }, (_, i) => `${i.toString(36)}_at`);

  it('names at most the first 1000, and says how many there are: 500 events of 189 bad `*_at` properties (1 MB) took 6.3 MB', async () => {
    const events = Array.from({ length: 500 }, () => ({ type: 'a', user_id: 'u', item_id: 1, ...Object.fromEntries(keys(189).map((k) => [k, ''])) }));
    const body = JSON.stringify(events);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);
    const r = await coreRaw('POST', '/v1/events', body);
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    expect(lambdaBytes(r)).toBeLessThan(LAMBDA_ANSWER / 4);
    expect(Object.keys(r.body.error.details.fieldErrors)).toHaveLength(1000);
    expect(r.body.error.details.fieldErrors['0.0_at']).toEqual(['0_at is a time: integer Unix seconds (or null)']);
    expect(r.body.error.message).toBe(`Invalid request body. The first 1000 of ${500 * 189} fields in error are named.`);
    // The Platform API's sentence alike.
    const p = await request(t.base, 'POST', '/api/contexts', {
      rawBody: JSON.stringify({ name: 'x', ...Object.fromEntries(keys(1050).map((k) => [k, 1])) }),
      headers: { authorization: `Bearer ${t.demo.creds.api_key}`, 'content-type': 'application/json' },
    });
    expect(p.status).toBe(400);
    expect(p.body.error).toMatch(/^Invalid request body\. 0_at: Unknown field; .*; rr_at: Unknown field\. The first 1000 of 1050 fields in error are named\.$/);
    // A thousand or fewer: every one named, the message as it was. A batch of 500 events with one
    // bad field each is told all 500 (with 100 named at most, events 100-499 went unnamed).
    const each = await coreRaw('POST', '/v1/events', JSON.stringify(Array.from({ length: 500 }, () => ({ type: 'a', user_id: 'u', item_id: 1, occurred_at: '' }))));
    expect(Object.keys(each.body.error.details.fieldErrors)).toHaveLength(500);
    expect(each.body.error.details.fieldErrors['499.occurred_at']).toBeDefined();
    expect(each.body.error.message).toBe('Invalid request body.');
  });

  it('names fewer when their text is large, at least one', async () => {
    // Keys of quotes: each takes 4 bytes as Lambda writes it, in the field's path and its message.
    const big = (i: number) => `${String(i).padStart(3, '0')}${'"'.repeat(20_000)}_at`;
    const event = { type: 'a', user_id: 'u', item_id: 1, ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [big(i), ''])) };
    const r = await coreRaw('POST', '/v1/events', JSON.stringify([event]));
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    const named = Object.keys(r.body.error.details.fieldErrors).length;
    expect(named).toBeGreaterThanOrEqual(1);
    expect(named).toBeLessThan(20);
    expect(r.body.error.message).toBe(`Invalid request body. The first ${named} of 21 fields in error are named.`);
    expect(lambdaBytes(r)).toBeLessThan(LAMBDA_ANSWER / 4);
  });
});

describe('numbers DynamoDB cannot store, in a field of a narrower range', () => {
  it("are told the field's own range, not 0 where 0 is refused: a run's learning_rate, a policy's min_factor", async () => {
    const P = (method: string, path: string, body: unknown) => t.demo.platform(method, path, body);
    const rate = await P('POST', '/api/training-jobs', { template_id: 1, options: { learning_rate: 1e-300 } });
    expect(rate.status).toBe(400);
    expect(rate.body).toEqual({ error: 'Invalid request body. options.learning_rate: learning_rate cannot be stored: use a value from 1e-130 to 1.' });
    const factor = await P('POST', '/api/events/templates', { name: 'tiny', event_types: [{ id: 1 }], auto_promote: { endpoint_name: 'main', min_factor: 1e-200 } });
    expect(factor.status).toBe(400);
    expect(factor.body).toEqual({ error: 'Invalid request body. auto_promote.min_factor: min_factor cannot be stored: use a value from 1e-130 to 10.' });
    // A template's weight (1 to 100): out of its range, said so alone (until the review of 80641b60 also "use 0 or a magnitude from 1e-130 ...", 0 being out of it).
    for (const weight of [1e-200, 1e300]) {
      const w = await P('POST', '/api/events/templates', { name: 'tiny', event_types: [{ id: 1, weight }] });
      expect(w.status).toBe(400);
      expect(w.body).toEqual({ error: 'Invalid request body. event_types.0.weight: weight must be between 1 and 100.' });
    }
    // A field that takes 0 is still told so.
    const threshold = await P('POST', '/api/events/templates', { name: 'tiny', event_types: [{ id: 1 }], thresholds: { per_signal_min: 1e-200, total_min: 0 } });
    expect(threshold.body.error).toContain('per_signal_min cannot be stored: use 0 or a magnitude from 1e-130 to 9007199254740991');
  });
});
