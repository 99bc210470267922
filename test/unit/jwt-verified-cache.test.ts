import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_VERIFIED, verifyAccessToken } from '../../shared/auth/jwt.ts';
import { ensureSigningKey, loadSigningKey, signAccessToken, type SigningKey } from '../../shared/auth/signer.ts';

const issuer = 'http://127.0.0.1:1/local-pool';
let key: SigningKey;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-cache-'));
  ensureSigningKey(join(dir, 'key.json'), join(dir, 'jwks.json'));
  key = loadSigningKey(join(dir, 'key.json'));
  process.env.TABLE_NAME = 'unit';
  process.env.AUTH_ISSUER = issuer;
  process.env.AUTH_JWKS_FILE = join(dir, 'jwks.json');
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
    await verifyAccessToken(busy);
    // As many one-off tokens as the cache holds, the busy client's token presented after each.
    const oneOff = Array.from({ length: MAX_VERIFIED }, (_, k) => token(`one-off-${k}`));
    for (const t of oneOff) {
      await verifyAccessToken(t);
      expect(await verifyAccessToken(busy)).toEqual({ clientId: 'busy', scopes: ['recsearch/read'] });
    }
    const checksOf = (t: string) => checks.mock.calls.filter(([c]) => c === t).length;
    // Until 2026-12-07 the cache was emptied whole when full: the busy token was checked again.
    expect(checksOf(busy)).toBe(1);
    // The bound holds: the latest one-off token is held, the first was let go (checked again).
    const [first, latest] = [oneOff[0] as string, oneOff[MAX_VERIFIED - 1] as string];
    await verifyAccessToken(latest);
    await verifyAccessToken(first);
    expect([checksOf(latest), checksOf(first)]).toEqual([1, 2]);
  });

  it('keeps its expiry: a held token is refused once expired, though used since', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t = token('short', 60);
    await verifyAccessToken(t);
    vi.setSystemTime(Date.now() + 59_000);
    expect((await verifyAccessToken(t)).clientId).toBe('short');
    vi.setSystemTime(Date.now() + 2_000);
    await expect(verifyAccessToken(t)).rejects.toThrow();
  });
});
