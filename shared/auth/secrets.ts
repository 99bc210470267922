import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHANUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Random lowercase alphanumeric string (rejection sampling, no modulo bias). */
export function randomAlphanum(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 252 && out.length < length) out += ALPHANUM[b % 36];
    }
  }
  return out;
}

export const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Constant-time comparison of a presented secret with a stored SHA-256 hex digest. */
export function matchesHash(presented: string, storedHex: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = Buffer.from(storedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * What any client id can look like: Cognito's ClientId pattern and length (1 to 128 of
 * [\w+]); the local ids (below) are a subset. Nothing else is looked up.
 */
export const CLIENT_ID_PATTERN = /^[\w+]{1,128}$/;

/** Cognito-like client id (26 lowercase alphanumerics) and a 256-bit secret. */
export const newClientId = (): string => randomAlphanum(26);
export const newClientSecret = (): string => randomBytes(32).toString('base64url');

export const API_KEY_PATTERN = /^svc_([a-z0-9]{8})_([A-Za-z0-9_-]{32,128})$/;
export function newApiKey(): { prefix: string; key: string } {
  const prefix = randomAlphanum(8);
  return { prefix, key: `svc_${prefix}_${randomBytes(32).toString('base64url')}` };
}
