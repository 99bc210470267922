import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKey, signAccessToken } from '../../shared/auth/signer.ts';
import { TenantClient, expectCoreError, request, startTestStack, type TestStack } from '../helpers/stack.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ TOKEN_RATE_PER_SECOND: '1', TOKEN_BURST: '8' });
});
afterAll(() => t.stop());

const decode = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString());

async function newClient(scopes: string[]) {
  const r = await t.demo.platform('POST', '/api/clients', { name: `c-${randomUUID()}`, scopes });
  expect(r.status).toBe(201);
  return new TenantClient(t.base, { ...t.stack.credentials, client_id: r.body.client_id, client_secret: r.body.client_secret });
}

describe('POST /oauth2/token', () => {
  it('exchanges client credentials for a Cognito-shaped access token', async () => {
    const r = await t.demo.fetchToken();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('pragma')).toBe('no-cache');
    const claims = decode(r.body.access_token);
    expect(claims).toMatchObject({ client_id: t.stack.credentials.client_id, sub: t.stack.credentials.client_id, token_use: 'access', scope: 'service-api/read service-api/write' });
    expect(claims.iss).toMatch(/^http:\/\/localhost:\d+$/);
    expect(claims.exp - claims.iat).toBe(3600);
    expect(typeof claims.jti).toBe('string');
    const header = JSON.parse(Buffer.from(r.body.access_token.split('.')[0], 'base64url').toString());
    expect(header.alg).toBe('RS256');
  });

  it('narrows to a requested subset of scopes and refuses others', async () => {
    const c = await newClient(['service-api/read', 'service-api/write']);
    const r = await c.fetchToken('service-api/read');
    expect(decode(r.body.access_token).scope).toBe('service-api/read');
    const bad = await c.fetchToken('service-api/admin');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_scope');
    const readOnly = await newClient(['service-api/read']);
    expect((await readOnly.fetchToken('service-api/write')).body.error).toBe('invalid_scope');
    // Several scopes are separated by spaces only; a scope parameter naming none is no subset.
    const both = await c.fetchToken('service-api/read service-api/write');
    expect(decode(both.body.access_token).scope).toBe('service-api/read service-api/write');
    // A scope is a set (RFC 6749 §3.3): one asked for twice is granted once.
    expect(decode((await c.fetchToken('service-api/read  service-api/read')).body.access_token).scope).toBe('service-api/read');
    for (const scope of ['service-api/read,service-api/write', ' ']) {
      const refused = await c.fetchToken(scope);
      expect([refused.status, refused.body.error], scope).toEqual([400, 'invalid_scope']);
    }
  });

  it('answers RFC 6749 errors', async () => {
    const c = await newClient(['service-api/read']);
    const wrong = await c.fetchToken(undefined, { id: c.creds.client_id, secret: 'wrong' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await c.fetchToken(undefined, { id: 'nobody', secret: 'x' })).body.error).toBe('invalid_client');
    const noAuth = await request(t.base, 'POST', '/oauth2/token', { rawBody: 'grant_type=client_credentials', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(noAuth.status).toBe(401);
    const basic = `Basic ${Buffer.from(`${c.creds.client_id}:${c.creds.client_secret}`).toString('base64')}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic };
    const grant = await request(t.base, 'POST', '/oauth2/token', { rawBody: 'grant_type=password', headers: form });
    expect(grant.status).toBe(400);
    expect(grant.body.error).toBe('unsupported_grant_type');
    const missing = await request(t.base, 'POST', '/oauth2/token', { rawBody: '', headers: form });
    expect(missing.body.error).toBe('invalid_request');
    const json = await request(t.base, 'POST', '/oauth2/token', { rawBody: '{"grant_type":"client_credentials"}', headers: { ...form, 'content-type': 'application/json' } });
    expect(json.status).toBe(400);
    expect(json.body.error).toBe('invalid_request');
    // One way of authenticating the client (RFC 6749 §2.3): Basic and a secret in the form, or
    // Basic and another client's id in it, is an invalid request; the same id beside Basic is fine.
    const grantType = 'grant_type=client_credentials';
    const twice = await request(t.base, 'POST', '/oauth2/token', { rawBody: `${grantType}&client_id=${c.creds.client_id}&client_secret=${c.creds.client_secret}`, headers: form });
    expect([twice.status, twice.body.error]).toEqual([400, 'invalid_request']);
    const other = await request(t.base, 'POST', '/oauth2/token', { rawBody: `${grantType}&client_id=${t.stack.credentials.client_id}`, headers: form });
    expect([other.status, other.body.error]).toEqual([400, 'invalid_request']);
    const same = await request(t.base, 'POST', '/oauth2/token', { rawBody: `${grantType}&client_id=${c.creds.client_id}`, headers: form });
    expect(same.status).toBe(200);
  });

  it('treats a parameter sent without a value as omitted (RFC 6749 §3.1)', async () => {
    const c = await newClient(['service-api/read', 'service-api/write']);
    const basic = `Basic ${Buffer.from(`${c.creds.client_id}:${c.creds.client_secret}`).toString('base64')}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic };
    const token = (rawBody: string) => request(t.base, 'POST', '/oauth2/token', { rawBody, headers: form });
    const scope = await token('grant_type=client_credentials&scope=');
    expect(scope.status).toBe(200);
    expect(decode(scope.body.access_token).scope).toBe('service-api/read service-api/write');
    expect((await token('grant_type=client_credentials&client_secret=&client_id=')).status).toBe(200);
    // Included twice is still a repeated parameter, with a value or without: hardening.test.ts.
    const grant = await token('grant_type=');
    expect([grant.status, grant.body.error]).toEqual([400, 'invalid_request']);
  });

  it('has its own rate limit (429 slow_down) that does not touch resource traffic', async () => {
    const c = await newClient(['service-api/read']);
    const token = (await c.fetchToken()).body.access_token as string;
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) codes.push((await c.fetchToken()).status);
    expect(codes).toContain(429);
    const limited = await c.fetchToken();
    expect(limited.body).toEqual({ error: 'slow_down', error_description: expect.any(String) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Resource calls with an existing token keep working.
    for (let i = 0; i < 15; i++) expect((await c.core('GET', '/v1/items', undefined, { token })).status).toBe(200);
  });
});

describe('Core API authentication and scopes', () => {
  it('401 unauthorized_no_client_id_in_jwt for a missing, malformed, forged, expired or foreign token', async () => {
    const missing = await request(t.base, 'GET', '/v1/items');
    expectCoreError(missing, 401, 'authentication_error', 'unauthorized_no_client_id_in_jwt');
    // The challenge a 401 carries (RFC 6750 §3).
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expectCoreError(await request(t.base, 'GET', '/v1/items', { headers: { authorization: 'Bearer not.a.jwt' } }), 401, 'authentication_error', 'unauthorized_no_client_id_in_jwt');
    expectCoreError(await request(t.base, 'GET', '/v1/items', { headers: { authorization: 'Basic abc' } }), 401, 'authentication_error', 'unauthorized_no_client_id_in_jwt');
    expectCoreError(await request(t.base, 'POST', '/v1/search', { body: { query: 'x' } }), 401, 'authentication_error', 'unauthorized_no_client_id_in_jwt');
    expectCoreError(await request(t.base, 'GET', '/v1/recommendations?user_id=u'), 401, 'authentication_error', 'unauthorized_no_client_id_in_jwt');
    const key = loadSigningKey(join(t.dataDir, 'jwt-signing-key.json'));
    const iss = decode(await t.demo.accessToken()).iss as string;
    const clientId = t.stack.credentials.client_id;
    const scope = 'service-api/read service-api/write';
    const expired = signAccessToken(key, { issuer: iss, clientId, scope, lifetimeSeconds: -60 });
    expectCoreError(await t.demo.core('GET', '/v1/items', undefined, { token: expired }), 401, 'authentication_error', 'unauthorized_no_client_id_in_jwt');
    const otherIssuer = signAccessToken(key, { issuer: 'https://evil.example', clientId, scope, lifetimeSeconds: 600 });
    expectCoreError(await t.demo.core('GET', '/v1/items', undefined, { token: otherIssuer }), 401, 'authentication_error');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = signAccessToken({ kid: key.kid, key: privateKey }, { issuer: iss, clientId, scope, lifetimeSeconds: 600 });
    expectCoreError(await t.demo.core('GET', '/v1/items', undefined, { token: forged }), 401, 'authentication_error');
    const good = await t.demo.accessToken();
    const tampered = good
      .split('.')
      .map((p, i) => (i === 1 ? Buffer.from(JSON.stringify({ ...decode(good), client_id: 'other' })).toString('base64url') : p))
      .join('.');
    expectCoreError(await t.demo.core('GET', '/v1/items', undefined, { token: tampered }), 401, 'authentication_error');
    // RFC 6750 §3.1: a token sent and refused says so (`invalid_token`: get a new one); a request
    // without one (or with another scheme, §3) is challenged with no error code.
    for (const token of ['not.a.jwt', expired, otherIssuer, forged, tampered]) {
      const r = await request(t.base, 'GET', '/v1/items', { headers: { authorization: `Bearer ${token}` } });
      expect(r.headers.get('www-authenticate'), token).toBe('Bearer error="invalid_token"');
    }
    const basic = await request(t.base, 'GET', '/v1/items', { headers: { authorization: 'Basic abc' } });
    expect(basic.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('401, never 503, for tokens of key ids the local JWKS lacks, however many arrive one after another', async () => {
    // The local stack's JWKS is its file (AUTH_JWKS_FILE; the issuer is http, which aws-jwt-verify
    // does not fetch): a kid it lacks is a forged token's, whenever it comes. Until 2026-12-08 the
    // first was 401 and the ones after it, within the wait its failed fetch began, 503 unavailable.
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const iss = decode(await t.demo.accessToken()).iss as string;
    const claims = { issuer: iss, clientId: t.stack.credentials.client_id, scope: 'service-api/read service-api/write', lifetimeSeconds: 600 };
    const made = ['made-up-1', 'made-up-2', 'made-up-1', 'made-up-3'].map((kid) => signAccessToken({ kid, key: privateKey }, claims));
    for (const [i, token] of made.entries()) {
      const r = await t.demo.core('GET', '/v1/items', undefined, { token });
      expectCoreError(r, 401, 'authentication_error', 'unauthorized_no_client_id_in_jwt');
      expect(r.headers.get('www-authenticate'), `token ${i}`).toBe('Bearer error="invalid_token"');
    }
    // The stack's own tokens still verify.
    expect((await t.demo.core('GET', '/v1/items?limit=1')).status).toBe(200);
  });

  it('401 invalid_token naming the problem for a malformed Bearer header (a value with a space, or none)', async () => {
    const token = await t.demo.accessToken();
    const malformed = 'Bearer error="invalid_token", error_description="The Authorization header is malformed: expected Bearer and one token"';
    for (const authorization of [`Bearer ${token} extra`, 'Bearer a b', 'Bearer', 'bearer  ']) {
      const core = await request(t.base, 'GET', '/v1/items', { headers: { authorization } });
      expectCoreError(core, 401, 'authentication_error', 'unauthorized_no_client_id_in_jwt');
      expect(core.body.error.message, authorization).toMatch(/Authorization header is malformed/);
      expect(core.headers.get('www-authenticate'), authorization).toBe(malformed);
      const platform = await request(t.base, 'GET', '/api/clients', { headers: { authorization: authorization.replace(token, t.stack.credentials.api_key) } });
      expect(platform.status, authorization).toBe(401);
      expect(platform.body.error, authorization).toMatch(/Authorization header is malformed/);
      expect(platform.headers.get('www-authenticate'), authorization).toBe(malformed);
    }
    // Another scheme is still no Bearer credential: the bare challenge.
    expect((await request(t.base, 'GET', '/v1/items', { headers: { authorization: 'Basic a b' } })).headers.get('www-authenticate')).toBe('Bearer');
  });

  it('401 invalid_token naming the malformed header for two Authorization headers, as API Gateway joins them', async () => {
    const token = await t.demo.accessToken();
    const malformed = 'Bearer error="invalid_token", error_description="The Authorization header is malformed: expected Bearer and one token"';
    // Each header on its own line (fetch would join them into one): a valid credential first, then another.
    const twice = (path: string, first: string, second: string) =>
      new Promise<{ status: number; challenge: string | undefined; body: { error?: unknown } }>((resolve, reject) => {
        const req = httpRequest(`${t.base}${path}`, { method: 'GET', headers: ['host', new URL(t.base).host, 'authorization', first, 'authorization', second] }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            resolve({ status: res.statusCode ?? 0, challenge: res.headers['www-authenticate'], body: text ? JSON.parse(text) : {} });
          });
        });
        req.on('error', reject);
        req.end();
      });
    for (const second of [`Bearer ${token}`, 'Bearer x', token]) {
      const core = await twice('/v1/items', `Bearer ${token}`, second);
      expect([core.status, core.challenge], second).toEqual([401, malformed]);
      expect(core.body.error, second).toMatchObject({ type: 'authentication_error', code: 'unauthorized_no_client_id_in_jwt', message: expect.stringMatching(/Authorization header is malformed/) });
    }
    const key = `Bearer ${t.stack.credentials.api_key}`;
    const platform = await twice('/api/clients', key, key);
    expect([platform.status, platform.challenge]).toEqual([401, malformed]);
    expect(platform.body.error).toMatch(/Authorization header is malformed/);
  });

  it('403 permission_error when the token lacks the scope', async () => {
    const readOnly = await newClient(['service-api/read']);
    expect((await readOnly.core('GET', '/v1/items')).status).toBe(200);
    expect((await readOnly.core('GET', '/v1/events')).status).toBe(200);
    for (const [m, p, b] of [
      ['POST', '/v1/items', { name: 'x' }],
      ['PATCH', '/v1/items/1', { name: 'x' }],
      ['POST', '/v1/items/1', { name: 'x' }],
      ['DELETE', '/v1/items/1', undefined],
      ['POST', '/v1/events', [{ type: 'click', user_id: 'u', item_id: '1' }]],
    ] as const) {
      expectCoreError(await readOnly.core(m, p, b), 403, 'permission_error');
    }
    // The challenge RFC 6750 §3.1 gives a token without the scope: which scope would do.
    expect((await readOnly.core('DELETE', '/v1/items/1')).headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="service-api/write"');
    const writeOnly = await newClient(['service-api/write']);
    expect((await writeOnly.core('GET', '/v1/items')).headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="service-api/read"');
    expect((await writeOnly.core('POST', '/v1/items', { name: 'w' })).status).toBe(201);
    for (const p of ['/v1/items', '/v1/items/1', '/v1/events', '/v1/events/1', '/v1/recommendations?user_id=u']) expectCoreError(await writeOnly.core('GET', p), 403, 'permission_error');
    expectCoreError(await writeOnly.core('POST', '/v1/search', { query: 'x' }), 403, 'permission_error');
    expect((await readOnly.core('POST', '/v1/search', { query: 'x' })).status).toBe(200);
    expect((await readOnly.core('GET', '/v1/recommendations?user_id=u')).status).toBe(200);
  });

  it('tokens of a deleted client stop working at once', async () => {
    const c = await newClient(['service-api/read']);
    const token = await c.accessToken();
    expect((await c.core('GET', '/v1/items')).status).toBe(200);
    expect((await c.core('POST', '/v1/search', { query: 'x' })).status).toBe(200);
    const deleted = await t.demo.platform('DELETE', `/api/clients/${c.creds.client_id}`);
    // Each Platform response is a JSON object (the spec): a delete says what it deleted.
    expect(deleted.status).toBe(200);
    expect(deleted.headers.get('content-type')).toBe('application/json');
    expect(deleted.body).toEqual({ client_id: c.creds.client_id, deleted: true });
    // Read-only routes run while the client record is read back; their answer still waits for it,
    // and a gone client outranks any other error.
    expectCoreError(await c.core('GET', '/v1/items', undefined, { token }), 401, 'authentication_error');
    expectCoreError(await c.core('POST', '/v1/search', { query: 'x' }, { token }), 401, 'authentication_error');
    expectCoreError(await c.core('GET', '/v1/items?limit=0', undefined, { token }), 401, 'authentication_error');
    expectCoreError(await c.core('GET', '/v1/items/999999', undefined, { token }), 401, 'authentication_error');
    expectCoreError(await c.core('POST', '/v1/items', { name: 'x' }, { token }), 401, 'authentication_error');
    // Its token is refused as RFC 6750 §3.1 says of a revoked one, on either path (overlapped or not).
    expect((await c.core('GET', '/v1/items', undefined, { token })).headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await c.core('POST', '/v1/items', { name: 'x' }, { token })).headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await c.fetchToken()).body.error).toBe('invalid_client');
  });
});

describe('Platform API keys and clients', () => {
  it('creates, lists and deletes clients; secrets are shown once and never listed', async () => {
    // A scope named twice is refused, on a client and on an API key.
    for (const [path, scopes] of [
      ['/api/clients', ['service-api/read', 'service-api/read']],
      ['/api/api-keys', ['admin', 'admin']],
    ] as const) {
      const twice = await t.demo.platform('POST', path, { name: 'twice', scopes });
      expect(twice.status, path).toBe(400);
      expect(twice.body.error, path).toMatch(/each scope once/);
    }
    const r = await t.demo.platform('POST', '/api/clients', { name: 'backend', scopes: ['service-api/read'] });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ client_id: expect.any(String), client_secret: expect.any(String), name: 'backend', scopes: ['service-api/read'], created: expect.any(Number) });
    // The secret, shown this once, is in no cache.
    expect(r.headers.get('cache-control')).toBe('no-store');
    const list = await t.demo.platform('GET', '/api/clients');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ has_more: false, next_cursor: null });
    const listed = list.body.data.find((c: { client_id: string }) => c.client_id === r.body.client_id);
    expect(listed).toEqual({ client_id: r.body.client_id, name: 'backend', scopes: ['service-api/read'], created: r.body.created });
    expect(JSON.stringify(list.body)).not.toContain(r.body.client_secret);
    expect(await t.demo.platform('DELETE', `/api/clients/${r.body.client_id}`)).toMatchObject({ status: 200, body: { deleted: true } });
    expect((await t.demo.platform('DELETE', `/api/clients/${r.body.client_id}`)).status).toBe(404);
    expect((await t.demo.platform('POST', '/api/clients', { name: 'x', scopes: ['nope'] })).status).toBe(400);
  });

  it('writes each create and delete of a client or API key to the audit trail, without its secret', async () => {
    const actor = t.stack.credentials.api_key.slice(4, 12);
    const client = await t.demo.platform('POST', '/api/clients', { name: 'audited', scopes: ['service-api/read'] });
    expect(client.status).toBe(201);
    const key = await t.demo.platform('POST', '/api/api-keys', { name: 'audited', environment: 'staging', scopes: ['events'] });
    expect(key.status).toBe(201);
    expect((await t.demo.platform('DELETE', `/api/clients/${client.body.client_id}`)).status).toBe(200);
    expect((await t.demo.platform('DELETE', `/api/api-keys/${key.body.id}`)).status).toBe(200);
    const clientView = { client_id: client.body.client_id, name: 'audited', scopes: ['service-api/read'], created: client.body.created };
    const keyView = { id: key.body.id, prefix: key.body.id, name: 'audited', environment: 'staging', scopes: ['events'], created: key.body.created };
    for (const [resource, view, secret] of [
      [`clients/${client.body.client_id}`, clientView, client.body.client_secret],
      [`api-keys/${key.body.id}`, keyView, key.body.key],
    ] as const) {
      const trail = await t.demo.platform('GET', `/api/audit?resource=${resource}`);
      expect(trail.status, resource).toBe(200);
      expect(trail.body.data, resource).toEqual([
        { id: expect.any(Number), at: expect.any(Number), actor, action: 'delete', resource, before: view, after: null },
        { id: expect.any(Number), at: expect.any(Number), actor, action: 'create', resource, before: null, after: view },
      ]);
      // Neither the secret nor its hash is in the trail.
      expect(JSON.stringify(trail.body), resource).not.toContain(secret);
      expect(JSON.stringify(trail.body), resource).not.toMatch(/hash/);
    }
    // A malformed credential id is 400.
    expect((await t.demo.platform('GET', '/api/audit?resource=api-keys/short')).status).toBe(400);
  });

  it('pages the key and client lists by next_cursor, sent as starting_after (as every Platform list takes it) or as cursor', async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) expect((await t.demo.platform('POST', '/api/api-keys', { name, scopes: ['items'] })).status).toBe(201);
    const first = await t.demo.platform('GET', '/api/api-keys?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    const next = encodeURIComponent(first.body.next_cursor);
    const byStartingAfter = await t.demo.platform('GET', `/api/api-keys?limit=2&starting_after=${next}`);
    const byCursor = await t.demo.platform('GET', `/api/api-keys?limit=2&cursor=${next}`);
    expect(byStartingAfter.status).toBe(200);
    expect(byStartingAfter.body).toEqual(byCursor.body);
    const ids = (b: { data: { id: string }[] }) => b.data.map((k) => k.id);
    expect(ids(byStartingAfter.body).some((id) => ids(first.body).includes(id))).toBe(false);
    expect((await t.demo.platform('GET', `/api/api-keys?starting_after=${next}&cursor=${next}`)).status).toBe(200);
    const both = await t.demo.platform('GET', `/api/clients?starting_after=${next}&cursor=other`);
    expect(both.status).toBe(400);
    expect(both.body.error).toMatch(/starting_after/);
    // A cursor of another list is refused under the name it was sent by.
    for (const name of ['starting_after', 'cursor']) {
      const wrong = await t.demo.platform('GET', `/api/clients?${name}=${next}`);
      expect(wrong.status, name).toBe(400);
      expect(wrong.body.error, name).toMatch(new RegExp(`^Invalid cursor\\. ${name}:`));
    }
  });

  it('creates keys shaped svc_<8>_<token>, never lists them, and revokes immediately', async () => {
    const r = await t.demo.platform('POST', '/api/api-keys', { name: 'ci', environment: 'staging', scopes: ['admin'] });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(String), prefix: expect.any(String), key: expect.any(String), name: 'ci', environment: 'staging', scopes: ['admin'], created: expect.any(Number) });
    expect(r.body.key).toMatch(/^svc_[a-z0-9]{8}_[A-Za-z0-9_-]+$/);
    // The key, shown this once, is in no cache.
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body.key.slice(4, 12)).toBe(r.body.prefix);
    expect((await t.demo.platform('GET', '/api/clients', undefined, r.body.key)).status).toBe(200);
    const list = await t.demo.platform('GET', '/api/api-keys');
    expect(JSON.stringify(list.body)).not.toContain(r.body.key);
    expect(list.body.data.some((k: { id: string }) => k.id === r.body.id)).toBe(true);
    expect(await t.demo.platform('DELETE', `/api/api-keys/${r.body.id}`)).toMatchObject({ status: 200, body: { id: r.body.id, deleted: true } });
    const after = await t.demo.platform('GET', '/api/clients', undefined, r.body.key);
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: expect.any(String) });
  });

  it('401 for a missing or wrong key, 403 for a key without the scope, in the Platform envelope', async () => {
    const none = await request(t.base, 'GET', '/api/clients');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(Object.keys(none.body)).toEqual(['error']);
    const real = t.stack.credentials.api_key;
    const wrongSecret = `${real.slice(0, 13)}${'A'.repeat(43)}`;
    const wrong = await t.demo.platform('GET', '/api/clients', undefined, wrongSecret);
    expect(wrong.status).toBe(401);
    // A key sent and refused (wrong, revoked, an access token): RFC 6750 §3.1's `invalid_token`.
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await t.demo.platform('GET', '/api/clients', undefined, await t.demo.accessToken())).headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await t.demo.platform('GET', '/api/clients', undefined, 'svc_short')).status).toBe(401);
    const eventsKey = await t.demo.platform('POST', '/api/api-keys', { name: 'ev', scopes: ['events'] });
    const denied = await t.demo.platform('GET', '/api/clients', undefined, eventsKey.body.key);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: expect.any(String) });
    expect(denied.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="admin"');
    // Console scopes as api-decisions gives them: events keys train and read the versions; what
    // is served (label, approve, promote) and endpoints are admin's; recommendations keys get 403.
    expect((await t.demo.platform('GET', '/api/event-types', undefined, eventsKey.body.key)).status).toBe(200);
    expect((await t.demo.platform('GET', '/api/training-jobs', undefined, eventsKey.body.key)).status).toBe(200);
    expect((await t.demo.platform('GET', '/api/models', undefined, eventsKey.body.key)).status).toBe(200);
    for (const [m, p, b] of [
      ['PATCH', '/api/models/1', { label: 'x' }],
      ['POST', '/api/models/1/approve', undefined],
      ['POST', '/api/models/1/promote', { endpoint_name: 'main' }],
      ['GET', '/api/model-endpoints', undefined],
      ['GET', '/api/contexts', undefined],
    ] as const) {
      expect((await t.demo.platform(m, p, b, eventsKey.body.key)).status, `${m} ${p}`).toBe(403);
    }
    const recsKey = await t.demo.platform('POST', '/api/api-keys', { name: 'rk', scopes: ['recommendations'] });
    for (const p of ['/api/event-types', '/api/models', '/api/items/search?query=x']) expect((await t.demo.platform('GET', p, undefined, recsKey.body.key)).status, p).toBe(403);
    const bad = await t.demo.platform('POST', '/api/api-keys', { name: 'x', scopes: ['root'] });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['error']);
  });

  it('lets events keys call the event-type, template and training routes, items keys item search and index status, and no other key scope the rest', async () => {
    const keyOf = async (scope: string) => (await t.demo.platform('POST', '/api/api-keys', { name: `scope-${scope}`, scopes: [scope] })).body.key as string;
    const [eventsKey, itemsKey] = [await keyOf('events'), await keyOf('items')];
    // Each route named with a body it refuses (or nothing to find): an allowed key gets past the scope check to a 400 or 404, never a 403.
    const eventsRoutes = [
      ['POST', '/api/event-types', {}],
      ['PATCH', '/api/event-types/999999', {}],
      ['POST', '/api/events/templates', {}],
      ['GET', '/api/events/templates', undefined],
      ['GET', '/api/events/templates/999999', undefined],
      ['PATCH', '/api/events/templates/999999', {}],
      ['POST', '/api/training-jobs', {}],
      ['GET', '/api/training-jobs/none-such', undefined],
      ['POST', '/api/training-jobs/none-such/stop', undefined],
      ['GET', '/api/training-jobs/logs/none-such', undefined],
      ['GET', '/api/models/999999', undefined],
    ] as const;
    const itemsRoutes = [
      ['POST', '/api/items/search', { query: 'x' }],
      ['GET', '/api/items/search?query=x', undefined],
      ['GET', '/api/search-index', undefined],
    ] as const;
    const adminRoutes = [
      ['POST', '/api/rules', {}],
      ['GET', '/api/rules', undefined],
      ['POST', '/api/segments', {}],
      ['PATCH', '/api/segments/999999', {}],
      ['POST', '/api/experiments', {}],
      ['GET', '/api/experiments', undefined],
      ['PATCH', '/api/experiments/999999', {}],
      ['GET', '/api/rerank-controls?contextId=1', undefined],
      ['PUT', '/api/rerank-controls?contextId=1', {}],
      ['POST', '/api/model-endpoints', {}],
      ['POST', '/api/contexts', {}],
      ['POST', '/api/search-index/rebuild', undefined],
      ['POST', '/api/synonyms', {}],
      ['GET', '/api/analytics/searches', undefined],
      ['GET', '/api/audit', undefined],
      ['DELETE', '/api/users/nobody', undefined],
      ['POST', '/api/clients', {}],
      ['POST', '/api/api-keys', {}],
    ] as const;
    const statusOf = async (key: string, [m, p, b]: readonly [string, string, unknown]) => (await t.demo.platform(m, p, b, key)).status;
    for (const r of eventsRoutes) {
      expect(await statusOf(eventsKey, r), `events key: ${r[0]} ${r[1]}`).not.toBe(403);
      expect(await statusOf(itemsKey, r), `items key: ${r[0]} ${r[1]}`).toBe(403);
    }
    for (const r of itemsRoutes) {
      expect(await statusOf(itemsKey, r), `items key: ${r[0]} ${r[1]}`).toBe(200);
      expect(await statusOf(eventsKey, r), `events key: ${r[0]} ${r[1]}`).toBe(403);
    }
    for (const r of adminRoutes) {
      expect(await statusOf(eventsKey, r), `events key: ${r[0]} ${r[1]}`).toBe(403);
      expect(await statusOf(itemsKey, r), `items key: ${r[0]} ${r[1]}`).toBe(403);
    }
  });

  it('API keys are not accepted on the Core API, and access tokens not on the Platform API', async () => {
    expectCoreError(await t.demo.core('GET', '/v1/items', undefined, { token: t.stack.credentials.api_key }), 401, 'authentication_error');
    expect((await t.demo.platform('GET', '/api/clients', undefined, await t.demo.accessToken())).status).toBe(401);
  });
});

describe('credentials.json', () => {
  it('holds the demo tenant, its console user and the three URLs on one port', () => {
    const c = JSON.parse(readFileSync(join(t.dataDir, 'credentials.json'), 'utf8'));
    expect(Object.keys(c).sort()).toEqual(['api_key', 'auth_url', 'base_url', 'client_id', 'client_secret', 'console_email', 'console_password', 'console_url', 'tenant']);
    expect(c.console_email).toMatch(/@/);
    expect(c.console_password.length).toBeGreaterThanOrEqual(12);
    expect(c.tenant).toBe('demo');
    expect(c.base_url).toBe(c.console_url);
    expect(c.base_url).toBe(c.auth_url);
    expect(c.base_url).toBe(`http://localhost:${t.stack.port}`);
  });
});
