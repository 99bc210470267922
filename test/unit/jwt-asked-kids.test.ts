import { createPublicKey } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimpleFetcher } from 'aws-jwt-verify/https';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { keysRetryAfter, MAX_ASKED_KIDS, verifyAccessToken } from '../../shared/auth/jwt.ts';
import { ensureSigningKey, loadSigningKey, signAccessToken, type SigningKey } from '../../shared/auth/signer.ts';

const issuer = 'http://127.0.0.1:1/local-pool';
let key: SigningKey;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-kids-'));
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

describe('kids remembered as first asked for, past the bound', () => {
  it('the least recently asked for is let go, not every one: a made-up kid a fetched JWKS lacked stays refused (401) while other unknown kids flood in', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const published = { ...createPublicKey(key.key).export({ format: 'jwk' }), kid: key.kid, alg: 'RS256', use: 'sig' };
    const fetched = vi.spyOn(SimpleFetcher.prototype, 'fetch').mockImplementation(async () => new TextEncoder().encode(JSON.stringify({ keys: [published] })).buffer);
    const claims = { issuer, clientId: 'c', scope: 'recsearch/read', lifetimeSeconds: 600 };
    const retryOf = async (token: string) => keysRetryAfter(await verifyAccessToken(token).catch((e: unknown) => e));
    const forged = signAccessToken({ kid: 'made-up', key: key.key }, claims);
    // Its first try fetches the JWKS, which lacks its kid: refused, and the penalty box arms.
    expect(await retryOf(forged)).toBeUndefined();
    expect(fetched).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    // As many other made-up kids as are remembered, within the box's wait (told to retry), the forged token again after each.
    let toldToRetry = 0;
    for (let k = 0; k < MAX_ASKED_KIDS; k++) {
      expect(await retryOf(signAccessToken({ kid: `flood-${k}`, key: key.key }, claims))).toBeGreaterThan(0);
      if ((await retryOf(forged)) !== undefined) toldToRetry++;
    }
    // Until 2026-12-07 the kids were all forgotten when full: the forged token's kid was "first asked" again, and it was told to retry.
    expect(toldToRetry).toBe(0);
    expect(fetched).toHaveBeenCalledTimes(1);
  });
});
