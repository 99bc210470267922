import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

// Issue 18, defect 3: the token endpoint's limit was keyed by the Basic client_id before the
// secret was checked, so anyone who knows a client id (it is in every token) could lock the
// client out, and rotating ids from one address was never limited.

let t: TestStack;
beforeAll(async () => {
  // Burst 10 at 1 a second: the tests send their requests in a few dozen milliseconds, and
  // allow for a slow machine refilling a token or two meanwhile.
  t = await startTestStack({ TOKEN_RATE_PER_SECOND: '1', TOKEN_BURST: '10', TOKEN_LIFETIME_SECONDS: '900' });
});
afterAll(() => t.stop());

interface Reply {
  status: number;
  body: { error?: string; error_description?: string; access_token?: string; expires_in?: number };
}

/**
 * A token request sent from the loopback address given (all of 127.0.0.0/8 is this host on
 * Linux, so 127.0.0.2 is a second client address to a server on 127.0.0.1).
 */
function tokenFrom(
  localAddress: string,
  id: string,
  secret: string,
  body = 'grant_type=client_credentials',
  headers: Record<string, string> = {},
): Promise<Reply & { retryAfter: string | undefined }> {
  const url = new URL('/oauth2/token', t.base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Reply['body'], retryAfter: res.headers['retry-after'] }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const A = '127.0.0.2';
const B = '127.0.0.3';
const C = '127.0.0.4';

describe('token endpoint rate limits (issue 18, defect 3)', () => {
  it('refuses a repeated parameter and a body no token request needs at once; a limited address is told when to retry', async () => {
    const { client_id: id, client_secret: secret } = t.demo.creds;
    const D = '127.0.0.6';
    expect(await tokenFrom(D, id, secret, 'grant_type=client_credentials&scope=a&grant_type=x')).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', error_description: 'grant_type may be sent only once.' },
    });
    // A security review's find: the repeated-parameter check was quadratic, and 100,000
    // parameters (0.9 MB) held the whole server 21 s.
    const huge = Array.from({ length: 100_000 }, (_, i) => `a${i}=1`).join('&');
    const started = Date.now();
    expect(await tokenFrom(D, id, secret, huge)).toMatchObject({ status: 400, body: { error: 'invalid_request', error_description: 'The request body is longer than 8192 characters.' } });
    expect(Date.now() - started).toBeLessThan(2000);
    const many = Array.from({ length: 900 }, (_, i) => `a${i}=1`).join('&');
    expect((await tokenFrom(D, id, secret, `${many}&a0=2`)).body.error_description).toBe('a0 may be sent only once.');
    // Wrong secrets until the address is limited: the 429 says when to retry.
    let last = await tokenFrom(D, id, 'wrong');
    for (let i = 0; i < 20 && last.status !== 429; i++) last = await tokenFrom(D, id, 'wrong');
    expect(last.status).toBe(429);
    expect(Number(last.retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('refuses a form that is not percent-encoded UTF-8 as an invalid request, not an unknown scope', async () => {
    // Until 2026-12-07 scope=%FF read as U+FFFD and was answered invalid_scope, naming a scope never sent.
    const { client_id: id, client_secret: secret } = t.demo.creds;
    const E = '127.0.0.9';
    for (const body of ['grant_type=client_credentials&scope=%FF', 'grant_type=client_credentials&scope=service-api%2', 'grant_type=client_credentials%']) {
      const r = await tokenFrom(E, id, secret, body);
      expect([r.status, r.body.error], body).toEqual([400, 'invalid_request']);
      expect(r.body.error_description).toMatch(/percent-encoded UTF-8/);
    }
    // Encoded well, as before: an escaped slash and a + for a space.
    expect((await tokenFrom(E, id, secret, 'grant_type=client_credentials&scope=service-api%2Fread+service-api%2Fread')).status).toBe(200);
  });

  it('30 wrong secrets for a client from one address do not stop that client getting tokens from another', async () => {
    const { client_id: id, client_secret: secret } = t.demo.creds;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await tokenFrom(A, id, `wrong-${i}`)).status);
    // The attacker's address is the one slowed down.
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(16);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    const last = await tokenFrom(A, id, 'wrong-again');
    if (last.status === 429) expect(last.body).toEqual({ error: 'slow_down', error_description: expect.any(String) });
    // The client itself, from its own address, is not.
    const mine = await tokenFrom(B, id, secret);
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(typeof mine.body.access_token).toBe('string');
  });

  it('rotating invented client ids from one address gets 429 slow_down', async () => {
    const replies: Reply[] = [];
    for (let i = 0; i < 20; i++) replies.push(await tokenFrom(C, `invented${i}x${Date.now()}`, 'guess'));
    const statuses = replies.map((r) => r.status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(8);
    expect(replies.find((r) => r.status === 429)?.body).toEqual({ error: 'slow_down', error_description: expect.any(String) });
  });

  it("a client's own bucket is charged by its successful requests only, and still limits them", async () => {
    const r = await t.demo.platform('POST', '/api/clients', { name: 'lockout-own', scopes: ['service-api/read'] });
    expect(r.status).toBe(201);
    const { client_id: id, client_secret: secret } = r.body as { client_id: string; client_secret: string };
    // Successes from one address spend nothing of that address's allowance for failures.
    const D = '127.0.0.5';
    const ok: number[] = [];
    for (let i = 0; i < 12; i++) ok.push((await tokenFrom(D, id, secret)).status);
    expect(ok.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(ok.slice(10)).toContain(429);
    // Its empty bucket is not an answer to a wrong secret: that is still invalid_client.
    expect((await tokenFrom(D, id, 'wrong')).status).toBe(401);
  });
});

describe('token requests as RFC 6749 has them', () => {
  const E = '127.0.0.7';
  /** Every byte of `s` percent-encoded, as a client may send either part of Basic (RFC 6749 §2.3.1). */
  const percentEncoded = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

  it('reads Basic case-insensitively and both its parts form-urlencoded, takes a body of exactly 8,192 characters, and only the form media type', async () => {
    const { client_id: id, client_secret: secret } = t.demo.creds;
    const encoded = await tokenFrom(E, percentEncoded(id), percentEncoded(secret));
    expect(encoded.status, JSON.stringify(encoded.body)).toBe(200);
    const padded = (length: number) => {
      const start = 'grant_type=client_credentials&pad=';
      return `${start}${'x'.repeat(length - start.length)}`;
    };
    expect((await tokenFrom(E, id, secret, padded(8192))).status).toBe(200);
    expect(await tokenFrom(E, id, secret, padded(8193))).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const notForm = await tokenFrom(E, id, secret, 'grant_type=client_credentials', { 'content-type': 'text/plain; charset=application/x-www-form-urlencoded' });
    expect(notForm).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    // The scheme's name is case-insensitive (RFC 9110 §11.1); an empty client id is no client.
    const lower = await tokenFrom(E, id, secret, 'grant_type=client_credentials', { authorization: `basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
    expect(lower.status).toBe(200);
    expect(await tokenFrom(E, '', secret)).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });

  it('issues tokens of TOKEN_LIFETIME_SECONDS', async () => {
    const r = await tokenFrom(E, t.demo.creds.client_id, t.demo.creds.client_secret);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ expires_in: 900 });
    const claims = JSON.parse(Buffer.from((r.body.access_token as string).split('.')[1] as string, 'base64url').toString());
    expect(claims.exp - claims.iat).toBe(900);
  });
});
