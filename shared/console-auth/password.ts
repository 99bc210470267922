import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt parameters of new hashes (N = 2^15, r = 8, p = 1: ~32 MB, tens of ms). */
const N = 32768;
const R = 8;
const P = 1;
const KEYLEN = 32;

function derive(password: string, salt: Buffer, o: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { ...o, maxmem: 128 * o.N * o.r * 2 };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, KEYLEN, opts, (e, key) => (e ? reject(e) : resolve(key))));
}

/** `scrypt$N$r$p$salt$hash`, salt and hash base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` matches `stored` (constant-time); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![n, r, p].every((x) => Number.isInteger(x) && x > 0) || n > 1 << 20) return false;
  const expected = Buffer.from(parts[5] as string, 'base64url');
  const key = await derive(password, Buffer.from(parts[4] as string, 'base64url'), { N: n, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash no password matches, checked when the email is unknown so timing does not tell. */
let dummy: Promise<string> | undefined;
export const dummyHash = (): Promise<string> => (dummy ??= hashPassword(randomBytes(16).toString('hex')));
