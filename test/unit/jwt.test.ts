import { createPublicKey, createSign, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SimpleFetcher } from 'aws-jwt-verify/https';
import { FetchError } from 'aws-jwt-verify/error';
import { keysRetryAfter, verifyAccessToken } from '../../shared/auth/jwt.ts';
import { ensureSigningKey, loadSigningKey, signAccessToken, type SigningKey } from '../../shared/auth/signer.ts';

// https, as Cognito's: with a JWKS file, an issuer the verifier cannot fetch (http) makes the file the JWKS (shared/auth/jwt.ts).
const issuer = 'https://127.0.0.1:1/local-pool';
let key: SigningKey;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-'));
  ensureSigningKey(join(dir, 'key.json'), join(dir, 'jwks.json'));
  key = loadSigningKey(join(dir, 'key.json'));
  process.env.TABLE_NAME = 'unit';
  process.env.AUTH_ISSUER = issuer;
  process.env.AUTH_JWKS_FILE = join(dir, 'jwks.json');
});
afterEach(() => vi.useRealTimers());

describe('access token verification', () => {
  it('accepts a valid token, again from its cache, and rejects it once it expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const token = signAccessToken(key, { issuer, clientId: 'c1', scope: 'recsearch/read recsearch/write', lifetimeSeconds: 60 });
    const claims = { clientId: 'c1', scopes: ['recsearch/read', 'recsearch/write'] };
    expect(await verifyAccessToken(token)).toEqual(claims);
    vi.setSystemTime(Date.now() + 59_000);
    expect(await verifyAccessToken(token)).toEqual(claims);
    vi.setSystemTime(Date.now() + 2_000);
    await expect(verifyAccessToken(token)).rejects.toThrow();
  });

  it('rejects a forged token even when a genuine one with the same claims was verified', async () => {
    const token = signAccessToken(key, { issuer, clientId: 'c2', scope: 'recsearch/read', lifetimeSeconds: 60 });
    await verifyAccessToken(token);
    const [h, p] = token.split('.');
    const forged = `${h}.${p}.${Buffer.from('not a signature').toString('base64url')}`;
    await expect(verifyAccessToken(forged)).rejects.toThrow();
    const otherIssuer = signAccessToken(key, { issuer: 'http://elsewhere', clientId: 'c2', scope: 'recsearch/read', lifetimeSeconds: 60 });
    await expect(verifyAccessToken(otherIssuer)).rejects.toThrow();
  });
});

describe('a key rotated in while the JWKS may not be fetched again', () => {
  it('is no verdict on its token: the seconds until the penalty box ends, then the token verifies', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const jwk = (k: SigningKey) => ({ ...createPublicKey(k.key).export({ format: 'jwk' }), kid: k.kid, alg: 'RS256', use: 'sig' });
    const rotated: SigningKey = { kid: 'rotated-in', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey };
    // What the JWKS endpoint publishes: not yet the rotated key.
    let published = [jwk(key)];
    const fetched = vi.spyOn(SimpleFetcher.prototype, 'fetch').mockImplementation(async () => new TextEncoder().encode(JSON.stringify({ keys: published })).buffer);
    try {
      const claims = { issuer, clientId: 'c5', scope: 'recsearch/read', lifetimeSeconds: 600 };
      // A kid the JWKS lacks (fetched to look): the token's own failure, and the penalty box's 10 s begin.
      const unknownKid = await verifyAccessToken(signAccessToken({ kid: 'no-such-kid', key: rotated.key }, claims)).catch((e: unknown) => e);
      expect(unknownKid).toBeInstanceOf(Error);
      expect(keysRetryAfter(unknownKid)).toBeUndefined();
      expect(fetched).toHaveBeenCalledTimes(1);
      // Cognito publishes the rotated key and a token signed with it arrives 4 s later: the JWKS may not be fetched yet.
      published = [jwk(key), jwk(rotated)];
      vi.advanceTimersByTime(4_000);
      const token = signAccessToken(rotated, claims);
      const waiting = await verifyAccessToken(token).catch((e: unknown) => e);
      expect(waiting).toBeInstanceOf(Error);
      expect(keysRetryAfter(waiting)).toBe(6);
      expect(fetched).toHaveBeenCalledTimes(1);
      // Once the wait is over, the retry fetches the JWKS and the token verifies.
      vi.advanceTimersByTime(6_000);
      expect(await verifyAccessToken(token)).toEqual({ clientId: 'c5', scopes: ['recsearch/read'] });
      expect(fetched).toHaveBeenCalledTimes(2);
    } finally {
      fetched.mockRestore();
    }
  });
});

describe('a made-up kid while the JWKS may not be fetched again', () => {
  it('is the 401 of its token once a JWKS fetched since it was first asked for lacked it, not a wait', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    // Past any fetch the tests above made under their own fake clocks.
    vi.setSystemTime(Date.now() + 3_600_000);
    const published = { ...createPublicKey(key.key).export({ format: 'jwk' }), kid: key.kid, alg: 'RS256', use: 'sig' };
    const fetched = vi.spyOn(SimpleFetcher.prototype, 'fetch').mockImplementation(async () => new TextEncoder().encode(JSON.stringify({ keys: [published] })).buffer);
    try {
      const claims = { issuer, clientId: 'c6', scope: 'recsearch/read', lifetimeSeconds: 600 };
      const forged = signAccessToken({ kid: 'made-up-1', key: key.key }, claims);
      // Its first try fetches the JWKS, which lacks its kid: refused, and the penalty box arms.
      const first = await verifyAccessToken(forged).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(Error);
      expect(keysRetryAfter(first)).toBeUndefined();
      expect(fetched).toHaveBeenCalledTimes(1);
      // Sent again 2 s later: refused as before (the JWKS fetched for it lacked its kid), not told to retry.
      vi.advanceTimersByTime(2_000);
      const again = await verifyAccessToken(forged).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(Error);
      expect(keysRetryAfter(again)).toBeUndefined();
      // Another kid first asked for within the wait: no JWKS has been looked at for it yet, so the wait.
      const other = signAccessToken({ kid: 'made-up-2', key: key.key }, claims);
      expect(keysRetryAfter(await verifyAccessToken(other).catch((e: unknown) => e))).toBe(8);
      // The wait ends; the first token, sent again, fetches the JWKS (lacking both kids) and arms the box again.
      vi.advanceTimersByTime(8_000);
      expect(keysRetryAfter(await verifyAccessToken(forged).catch((e: unknown) => e))).toBeUndefined();
      expect(fetched).toHaveBeenCalledTimes(2);
      // The other kid is now refused too, not told to wait on a box any made-up kid can keep armed.
      const later = await verifyAccessToken(other).catch((e: unknown) => e);
      expect(later).toBeInstanceOf(Error);
      expect(keysRetryAfter(later)).toBeUndefined();
      expect(fetched).toHaveBeenCalledTimes(2);
    } finally {
      vi.advanceTimersByTime(10_000);
      fetched.mockRestore();
    }
  });
});

describe('a JWKS that cannot be fetched', () => {
  it('is fetched once per wait (1 s, doubling while it keeps failing), not once per token of an unknown kid; known kids keep verifying', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    // Past any fetch (and penalty box) the tests above made under their own fake clocks.
    vi.setSystemTime(Date.now() + 7_200_000);
    const rotated: SigningKey = { kid: 'rotated-while-down', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey };
    const jwk = (k: SigningKey) => ({ ...createPublicKey(k.key).export({ format: 'jwk' }), kid: k.kid, alg: 'RS256', use: 'sig' });
    let down = true;
    const fetched = vi.spyOn(SimpleFetcher.prototype, 'fetch').mockImplementation(async (uri: string) => {
      if (down) throw new FetchError(uri, 'connect ECONNREFUSED');
      return new TextEncoder().encode(JSON.stringify({ keys: [jwk(key), jwk(rotated)] })).buffer;
    });
    try {
      const claims = { issuer, clientId: 'c7', scope: 'recsearch/read', lifetimeSeconds: 600 };
      const flood = (n: number, from: number) => Array.from({ length: n }, (_, k) => signAccessToken({ kid: `flood-${from + k}`, key: key.key }, claims));
      const outcomes = async (tokens: string[]) =>
        Promise.all(
          tokens.map((tk) =>
            verifyAccessToken(tk).then(
              () => 'verified',
              (e: unknown) => keysRetryAfter(e),
            ),
          ),
        );
      // The first unknown kid fetches, and fails: no verdict on the token (retry in 1 s).
      expect(await outcomes(flood(1, 0))).toEqual([1]);
      expect(fetched).toHaveBeenCalledTimes(1);
      // A flood of tokens of made-up kids within that second, at once and one after another: no fetch.
      expect(await outcomes(flood(50, 1))).toEqual(Array(50).fill(1));
      for (const tk of flood(20, 100)) expect(await verifyAccessToken(tk).catch((e: unknown) => keysRetryAfter(e))).toBe(1);
      expect(fetched).toHaveBeenCalledTimes(1);
      // A token of a kid already held verifies meanwhile.
      expect(await verifyAccessToken(signAccessToken(key, claims))).toEqual({ clientId: 'c7', scopes: ['recsearch/read'] });
      // The wait over, the next fetches again; it fails again: the wait is 2 s.
      vi.advanceTimersByTime(1_000);
      expect(await outcomes(flood(10, 200))).toEqual(Array(10).fill(1));
      expect(fetched).toHaveBeenCalledTimes(2);
      expect(await outcomes(flood(1, 300))).toEqual([2]);
      vi.advanceTimersByTime(1_000);
      expect(await outcomes(flood(1, 400))).toEqual([1]);
      expect(fetched).toHaveBeenCalledTimes(2);
      // Back up: once the wait ends, a token of a key rotated in meanwhile fetches the JWKS and verifies.
      down = false;
      vi.advanceTimersByTime(1_000);
      expect(await verifyAccessToken(signAccessToken(rotated, claims))).toEqual({ clientId: 'c7', scopes: ['recsearch/read'] });
      expect(fetched).toHaveBeenCalledTimes(3);
    } finally {
      vi.advanceTimersByTime(10_000);
      fetched.mockRestore();
    }
  });

  it("is no wait for a made-up kid a JWKS fetched since it was first asked for lacked: the token's 401, as in the penalty box's wait (review of 624d700c)", async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    vi.setSystemTime(Date.now() + 10_800_000);
    const published = { ...createPublicKey(key.key).export({ format: 'jwk' }), kid: key.kid, alg: 'RS256', use: 'sig' };
    let down = false;
    const fetched = vi.spyOn(SimpleFetcher.prototype, 'fetch').mockImplementation(async (uri: string) => {
      if (down) throw new FetchError(uri, 'connect ECONNREFUSED');
      return new TextEncoder().encode(JSON.stringify({ keys: [published] })).buffer;
    });
    try {
      const claims = { issuer, clientId: 'c8', scope: 'recsearch/read', lifetimeSeconds: 600 };
      const verdict = async (kid: string) => keysRetryAfter(await verifyAccessToken(signAccessToken({ kid, key: key.key }, claims)).catch((e: unknown) => e));
      // The JWKS is fetched and lacks the kid: the token's 401 (no retry), and the penalty box's 10 s.
      expect(await verdict('absent-when-fetched')).toBeUndefined();
      expect(fetched).toHaveBeenCalledTimes(1);
      // The box's wait over, Cognito's endpoint fails for another made-up kid: the fetch's wait begins.
      vi.advanceTimersByTime(11_000);
      down = true;
      expect(await verdict('asked-while-down')).toBe(1);
      expect(fetched).toHaveBeenCalledTimes(2);
      // The first kid again within that wait: a JWKS fetched since it was first asked for lacked it,
      // so its 401 (after 624d700c: the 503, told to retry a token no retry makes valid).
      expect(await verdict('absent-when-fetched')).toBeUndefined();
      // The kid never seen in a JWKS waits still.
      expect(await verdict('asked-while-down')).toBe(1);
      expect(fetched).toHaveBeenCalledTimes(2);
    } finally {
      // Up again: a fetch that succeeds ends the failures' count for the tests after this one.
      down = false;
      vi.advanceTimersByTime(10_000);
      await verifyAccessToken(signAccessToken({ kid: 'after-the-outage', key: key.key }, { issuer, clientId: 'c8', scope: 'recsearch/read', lifetimeSeconds: 600 })).catch(() => undefined);
      vi.advanceTimersByTime(10_000);
      fetched.mockRestore();
    }
  });
});

describe('claims an access token must carry', () => {
  /** A token with a valid signature over exactly these claims. */
  function signed(claims: Record<string, unknown>): string {
    const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const body = `${b64({ kid: key.kid, alg: 'RS256' })}.${b64(claims)}`;
    return `${body}.${createSign('RSA-SHA256').update(body).sign(key.key).toString('base64url')}`;
  }
  const now = () => Math.floor(Date.now() / 1000);
  const claims = (extra: Record<string, unknown> = {}) => ({ iss: issuer, token_use: 'access', client_id: 'c3', scope: 'recsearch/read', iat: now(), exp: now() + 60, ...extra });

  it.each([
    ['an id token', { token_use: 'id' }],
    ['no token_use', { token_use: undefined }],
    ['no client_id', { client_id: undefined }],
    ['an empty client_id', { client_id: '' }],
    ['a numeric client_id', { client_id: 7 }],
  ])('refuses %s although its signature verifies', async (_what, extra) => {
    await expect(verifyAccessToken(signed(claims(extra)))).rejects.toThrow();
  });

  it('grants no scope for a missing or blank scope claim, and refuses a non-string one', async () => {
    for (const scope of [undefined, '', ' ']) {
      expect(await verifyAccessToken(signed(claims({ scope }))), JSON.stringify(scope)).toEqual({ clientId: 'c3', scopes: [] });
    }
    for (const scope of [['recsearch/write'], 7]) await expect(verifyAccessToken(signed(claims({ scope })))).rejects.toThrow();
    expect((await verifyAccessToken(signed(claims({ scope: ' recsearch/read  recsearch/write ' })))).scopes).toEqual(['recsearch/read', 'recsearch/write']);
  });
});

describe('the local signing key', () => {
  it('is kept across restarts (the same key and JWKS), readable by its owner only, and made again whole when a file is lost', () => {
    const dir = mkdtempSync(join(tmpdir(), 'jwt-keep-'));
    const [keyFile, jwksFile] = [join(dir, 'key.json'), join(dir, 'jwks.json')];
    ensureSigningKey(keyFile, jwksFile);
    const [firstKey, firstJwks] = [readFileSync(keyFile, 'utf8'), readFileSync(jwksFile, 'utf8')];
    ensureSigningKey(keyFile, jwksFile);
    expect([readFileSync(keyFile, 'utf8'), readFileSync(jwksFile, 'utf8')]).toEqual([firstKey, firstJwks]);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    rmSync(jwksFile);
    ensureSigningKey(keyFile, jwksFile);
    const { kid } = loadSigningKey(keyFile);
    expect(JSON.parse(readFileSync(jwksFile, 'utf8')).keys).toEqual([expect.objectContaining({ kid, alg: 'RS256', use: 'sig', kty: 'RSA' })]);
  });

  it('signs Cognito-shaped access token claims', () => {
    const token = signAccessToken(key, { issuer, clientId: 'c4', scope: 'recsearch/read', lifetimeSeconds: 60 });
    const payload = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString());
    expect(payload).toEqual({
      sub: 'c4',
      client_id: 'c4',
      token_use: 'access',
      scope: 'recsearch/read',
      iss: issuer,
      iat: expect.any(Number),
      auth_time: payload.iat,
      exp: payload.iat + 60,
      version: 2,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });
});
