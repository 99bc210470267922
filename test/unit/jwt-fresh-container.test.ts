import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SimpleFetcher } from 'aws-jwt-verify/https';
import { FetchError } from 'aws-jwt-verify/error';
import { keysRetryAfter, verifyAccessToken } from '../../shared/auth/jwt.ts';
import { signAccessToken, type SigningKey } from '../../shared/auth/signer.ts';

/*
 * A container as Lambda starts one: no JWKS preloaded (AUTH_JWKS_FILE unset), fetched with the
 * first token. This file's module holds its own verifier, which has never held a JWKS.
 */
const issuer = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_fresh';
let key: SigningKey;
beforeAll(() => {
  process.env.TABLE_NAME = 'unit';
  process.env.AUTH_ISSUER = issuer;
  delete process.env.AUTH_JWKS_FILE;
  key = { kid: 'cognito-key', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey };
});
afterEach(() => vi.useRealTimers());

describe('a fresh container whose JWKS cannot be fetched yet', () => {
  it('tries again at least once a second, not after waits doubling to 10 s: once the endpoint answers, its tokens verify within a second (review of 624d700c)', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const jwk = { ...createPublicKey(key.key).export({ format: 'jwk' }), kid: key.kid, alg: 'RS256', use: 'sig' };
    let down = true;
    const fetched = vi.spyOn(SimpleFetcher.prototype, 'fetch').mockImplementation(async (uri: string) => {
      if (down) throw new FetchError(uri, 'connect ETIMEDOUT');
      return new TextEncoder().encode(JSON.stringify({ keys: [jwk] })).buffer;
    });
    try {
      const token = signAccessToken(key, { issuer, clientId: 'c9', scope: 'recsearch/read', lifetimeSeconds: 3600 });
      const tried = async () =>
        verifyAccessToken(token).then(
          () => 'verified',
          (e: unknown) => keysRetryAfter(e),
        );
      // The endpoint fails for a while: each second, one fetch (a flood of tokens meanwhile fetches nothing).
      for (let s = 0; s < 6; s++) {
        expect(await tried(), `second ${s}`).toBe(1);
        expect(await Promise.all([tried(), tried(), tried()])).toEqual([1, 1, 1]);
        expect(fetched, `second ${s}`).toHaveBeenCalledTimes(s + 1);
        vi.advanceTimersByTime(1_000);
      }
      // Back: the next token a second later fetches the JWKS and verifies (after 624d700c the wait
      // had doubled to 8 s and then 10 s: every request of the container 503 for seconds more).
      down = false;
      expect(await tried()).toBe('verified');
      expect(fetched).toHaveBeenCalledTimes(7);
    } finally {
      fetched.mockRestore();
    }
  });
});
