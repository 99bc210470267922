import { createPublicKey } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimpleFetcher } from 'aws-jwt-verify/https';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ensureSigningKey, loadSigningKey, signAccessToken, type SigningKey } from '../../shared/auth/signer.ts';

/**
 * The auth module's per-container caches, bounded by letting go of the least recently used entry:
 * verified tokens, and key ids as first asked for. Each test loads the module afresh (its caches
 * empty).
 */
// https, as Cognito's: with a JWKS file, an issuer the verifier cannot fetch (http) makes the file the JWKS (shared/auth/jwt.ts).
const issuer = 'https://127.0.0.1:1/local-pool';
let key: SigningKey;
let jwt: typeof import('../../shared/auth/jwt.ts');
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-caches-'));
  ensureSigningKey(join(dir, 'key.json'), join(dir, 'jwks.json'));
  key = loadSigningKey(join(dir, 'key.json'));
  process.env.TABLE_NAME = 'unit';
  process.env.AUTH_ISSUER = issuer;
  process.env.AUTH_JWKS_FILE = join(dir, 'jwks.json');
});
beforeEach(async () => {
  vi.resetModules();
  jwt = await import('../../shared/auth/jwt.ts');
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const token = (clientId: string, lifetimeSeconds = 600) => signAccessToken(key, { issuer, clientId, scope: 'recsearch/read', lifetimeSeconds });

describe("the container's cache of verified tokens", () => {
  it('full, lets go of the least recently used token, not every one: a busy client is verified once while one-off tokens come and go', async () => {
    const checks = vi.spyOn(JwtVerifier.prototype, 'verify');
    const busy = token('busy');
    await jwt.verifyAccessToken(busy);
    // As many one-off tokens as the cache holds, the busy client's token presented after each.
    const oneOff = Array.from({ length: jwt.MAX_VERIFIED }, (_, k) => token(`one-off-${k}`));
    for (const t of oneOff) {
      await jwt.verifyAccessToken(t);
      expect(await jwt.verifyAccessToken(busy)).toEqual({ clientId: 'busy', scopes: ['recsearch/read'] });
    }
    const checksOf = (t: string) => checks.mock.calls.filter(([c]) => c === t).length;
    // Until 2026-12-07 the cache was emptied whole when full: the busy token was checked again.
    expect(checksOf(busy)).toBe(1);
    // The bound holds: the latest one-off token is held, the first was let go (checked again).
    const [first, latest] = [oneOff[0] as string, oneOff[jwt.MAX_VERIFIED - 1] as string];
    await jwt.verifyAccessToken(latest);
    await jwt.verifyAccessToken(first);
    expect([checksOf(latest), checksOf(first)]).toEqual([1, 2]);
  });

  it('keeps its expiry: a held token is refused once expired, though used since', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t = token('short', 60);
    await jwt.verifyAccessToken(t);
    vi.setSystemTime(Date.now() + 59_000);
    expect((await jwt.verifyAccessToken(t)).clientId).toBe('short');
    vi.setSystemTime(Date.now() + 2_000);
    await expect(jwt.verifyAccessToken(t)).rejects.toThrow();
  });
});

/**
 * A token of a made-up kid, refused (401) on its first try: the JWKS fetched for it (holding the
 * signing key alone) lacked its kid, and the penalty box armed; a millisecond later.
 */
async function refusedOnce() {
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  const published = { ...createPublicKey(key.key).export({ format: 'jwk' }), kid: key.kid, alg: 'RS256', use: 'sig' };
  const fetched = vi.spyOn(SimpleFetcher.prototype, 'fetch').mockImplementation(async () => new TextEncoder().encode(JSON.stringify({ keys: [published] })).buffer);
  const claims = { issuer, clientId: 'c', scope: 'recsearch/read', lifetimeSeconds: 600 };
  const retryOf = async (token: string) => jwt.keysRetryAfter(await jwt.verifyAccessToken(token).catch((e: unknown) => e));
  const forged = signAccessToken({ kid: 'made-up', key: key.key }, claims);
  expect(await retryOf(forged)).toBeUndefined();
  expect(fetched).toHaveBeenCalledTimes(1);
  vi.advanceTimersByTime(1);
  return { fetched, claims, retryOf, forged };
}

describe('kids remembered as first asked for, past the bound', () => {
  it('the least recently asked for is let go, not every one: a made-up kid a fetched JWKS lacked stays refused (401) while other unknown kids flood in', async () => {
    const { fetched, claims, retryOf, forged } = await refusedOnce();
    // As many other made-up kids as are remembered, within the box's wait (told to retry), the forged token again after each.
    let toldToRetry = 0;
    for (let k = 0; k < jwt.MAX_ASKED_KIDS; k++) {
      expect(await retryOf(signAccessToken({ kid: `flood-${k}`, key: key.key }, claims))).toBeGreaterThan(0);
      if ((await retryOf(forged)) !== undefined) toldToRetry++;
    }
    // Until 2026-12-07 the kids were all forgotten when full: the forged token's kid was "first asked" again, and it was told to retry.
    expect(toldToRetry).toBe(0);
    expect(fetched).toHaveBeenCalledTimes(1);
  });
});

describe('a kid remembered as first asked for, while other made-up kids arrive at once', () => {
  it('a made-up kid a fetched JWKS lacked is refused (401), not told to retry, though as many other kids are asked for while it is checked', async () => {
    const { fetched, claims, retryOf, forged } = await refusedOnce();
    // Tried again at once with as many other made-up kids (told to retry: within the box's wait).
    const flood = Array.from({ length: jwt.MAX_ASKED_KIDS }, (_, k) => signAccessToken({ kid: `flood-${k}`, key: key.key }, claims));
    const [again, ...others] = await Promise.all([retryOf(forged), ...flood.map(retryOf)]);
    expect(others.every((r) => r !== undefined && r > 0)).toBe(true);
    // Before the review of 8ef44855 its kid was let go while its check awaited (the others asked for meanwhile), read again
    // after it as not asked before: "first asked" now, and told to retry (503).
    expect(again).toBeUndefined();
    expect(fetched).toHaveBeenCalledTimes(1);
  });
});
