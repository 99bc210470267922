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
  const dir = mkdtempSync(join(tmpdir(), 'jwt-kids-at-once-'));
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

describe('a kid remembered as first asked for, while other made-up kids arrive at once', () => {
  it('a made-up kid a fetched JWKS lacked is refused (401), not told to retry, though as many other kids are asked for while it is checked', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const published = { ...createPublicKey(key.key).export({ format: 'jwk' }), kid: key.kid, alg: 'RS256', use: 'sig' };
    const fetched = vi.spyOn(SimpleFetcher.prototype, 'fetch').mockImplementation(async () => new TextEncoder().encode(JSON.stringify({ keys: [published] })).buffer);
    const claims = { issuer, clientId: 'c', scope: 'recsearch/read', lifetimeSeconds: 600 };
    const retryOf = async (token: string) => keysRetryAfter(await verifyAccessToken(token).catch((e: unknown) => e));
    const forged = signAccessToken({ kid: 'made-up', key: key.key }, claims);
    // Its first try fetches the JWKS, which lacks its kid: refused, and the penalty box arms.
    expect(await retryOf(forged)).toBeUndefined();
    vi.advanceTimersByTime(1);
    // Tried again at once with as many other made-up kids (told to retry: within the box's wait).
    const flood = Array.from({ length: MAX_ASKED_KIDS }, (_, k) => signAccessToken({ kid: `flood-${k}`, key: key.key }, claims));
    const [again, ...others] = await Promise.all([retryOf(forged), ...flood.map(retryOf)]);
    expect(others.every((r) => r !== undefined && r > 0)).toBe(true);
    // Before the review of 8ef44855 its kid was let go while its check awaited (the others asked for meanwhile), read again
    // after it as not asked before: "first asked" now, and told to retry (503).
    expect(again).toBeUndefined();
    expect(fetched).toHaveBeenCalledTimes(1);
  });
});
