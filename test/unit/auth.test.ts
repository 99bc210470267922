import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../shared/auth/rate-limit.ts';
import { API_KEY_PATTERN, matchesHash, newApiKey, newClientId, newClientSecret, sha256Hex } from '../../shared/auth/secrets.ts';
import { readConfig } from '../../shared/config.ts';

describe('secrets', () => {
  it('makes API keys of the form svc_<8>_<token> and matches them only by their hash', () => {
    const { prefix, key } = newApiKey();
    expect(prefix).toMatch(/^[a-z0-9]{8}$/);
    expect(API_KEY_PATTERN.exec(key)?.[1]).toBe(prefix);
    expect(matchesHash(key, sha256Hex(key))).toBe(true);
    expect(matchesHash(`${key}x`, sha256Hex(key))).toBe(false);
    expect(matchesHash(key, 'zz')).toBe(false);
    expect(newClientId()).toMatch(/^[a-z0-9]{26}$/);
  });

  it('makes client secrets and API key tokens of 256 random bits (docs/api.md, Token endpoint)', () => {
    expect(Buffer.from(newClientSecret(), 'base64url')).toHaveLength(32);
    expect(newClientSecret()).not.toBe(newClientSecret());
    const token = newApiKey().key.split('_').slice(2).join('_');
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
  });

  it('draws client ids from all 36 lowercase alphanumerics', () => {
    // 52,000 characters: the chance that any one of the 36 is missing by luck is below 1e-300.
    const seen = new Set(Array.from({ length: 2000 }, () => newClientId()).join(''));
    expect(seen.size).toBe(36);
  });
});

describe('token bucket', () => {
  it('allows the burst, then the rate, per key', () => {
    let now = 0;
    const b = new TokenBucket(2, 3, () => now);
    expect([b.take('a'), b.take('a'), b.take('a'), b.take('a')]).toEqual([true, true, true, false]);
    expect(b.take('b')).toBe(true);
    now = 0.5;
    expect([b.take('a'), b.take('a')]).toEqual([true, false]);
    now = 100;
    expect([b.take('a'), b.take('a'), b.take('a'), b.take('a')]).toEqual([true, true, true, false]);
  });

  it('says in whole seconds, rounded up and at least 1, when a refused key has a token again (Retry-After)', () => {
    let now = 0;
    const b = new TokenBucket(0.25, 2, () => now);
    expect([b.take('a'), b.take('a'), b.take('a')]).toEqual([true, true, false]);
    expect(b.retryAfter('a')).toBe(4);
    // 0.375 tokens refilled: 2.5 s to go is 3, not 2 (nor the 4 of a bucket not refilled since).
    now = 1.5;
    expect(b.retryAfter('a')).toBe(3);
    now = 3.9;
    expect(b.retryAfter('a')).toBe(1);
    expect(b.retryAfter('never-seen')).toBe(1);
  });

  it('gives back a refunded token, never past the burst', () => {
    const b = new TokenBucket(1, 2, () => 0);
    expect([b.take('a'), b.take('a'), b.take('a')]).toEqual([true, true, false]);
    b.refund('a');
    expect([b.take('a'), b.take('a')]).toEqual([true, false]);
    b.refund('a');
    b.refund('a');
    b.refund('a');
    expect([b.take('a'), b.take('a'), b.take('a')]).toEqual([true, true, false]);
  });

  it('past 10,000 keys forgets only full buckets: an emptied one stays empty', () => {
    const b = new TokenBucket(1, 2, () => 0);
    expect([b.take('a'), b.take('a'), b.take('a')]).toEqual([true, true, false]);
    for (let i = 0; i < 10_001; i++) b.take(`k${i}`);
    expect(b.take('a')).toBe(false);
  });
});

describe('config', () => {
  it('fails fast naming the missing variable', () => {
    expect(() => readConfig({ AUTH_ISSUER: 'x' })).toThrow(/TABLE_NAME/);
    expect(() => readConfig({ TABLE_NAME: 't', AUTH_ISSUER: 'x', TOKEN_BURST: 'many' })).toThrow(/TOKEN_BURST/);
  });

  it('derives the Cognito JWKS URI from the issuer', () => {
    const c = readConfig({ TABLE_NAME: 't', USER_REF_KEY: 'k', AUTH_ISSUER: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc' });
    expect(c.auth.jwksUri).toBe('https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/.well-known/jwks.json');
    expect(c.auth.tokenLifetimeSeconds).toBe(3600);
  });
});
