import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../shared/config.ts';
import { userRef } from '../../shared/domain/erasure.ts';

const sha256Prefix = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

describe("userRef: how the maintenance pass's logs name a user", () => {
  // Found by a review (2026-12-07): the ref was the SHA-256 of the user id alone, so anyone holding
  // the logs could match a guessable id (an email, a sequential number) against them.
  it('is a 16-hex-digit HMAC-SHA-256 under the deployment key, not the SHA-256 of the id', () => {
    const ref = userRef('deployment-key', 'acme', 'alice@example.com');
    expect(ref).toMatch(/^[0-9a-f]{16}$/);
    expect(ref).not.toBe(sha256Prefix('alice@example.com'));
    expect(ref).toBe(createHmac('sha256', 'deployment-key').update('acme\0alice@example.com').digest('hex').slice(0, 16));
  });

  it('is stable within a deployment (one key) and differs across keys and tenants', () => {
    expect(userRef('deployment-key', 'acme', '42')).toBe(userRef('deployment-key', 'acme', '42'));
    expect(userRef('another-deployment', 'acme', '42')).not.toBe(userRef('deployment-key', 'acme', '42'));
    expect(userRef('deployment-key', 'other', '42')).not.toBe(userRef('deployment-key', 'acme', '42'));
  });

  it('takes its key from USER_REF_KEY, which is required: unset or empty, reading it fails naming it, no constant stands in', () => {
    // Found by a review (2026-12-08): unset, a constant stood in, and the refs were as guessable as the ids.
    expect(readConfig({ TABLE_NAME: 't', USER_REF_KEY: 'k' }).maintenance.userRefKey).toBe('k');
    expect(() => readConfig({ TABLE_NAME: 't' })).toThrow('Missing required environment variable USER_REF_KEY');
    expect(() => readConfig({ TABLE_NAME: 't', USER_REF_KEY: '' })).toThrow('Missing required environment variable USER_REF_KEY');
  });
});
