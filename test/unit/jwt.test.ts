import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyAccessToken } from '../../shared/auth/jwt.ts';
import { ensureSigningKey, loadSigningKey, signAccessToken, type SigningKey } from '../../shared/auth/signer.ts';

const issuer = 'http://127.0.0.1:1/local-pool';
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
