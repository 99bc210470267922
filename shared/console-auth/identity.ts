import { AuthenticationError } from '../errors.ts';
import { dummyHash, hashPassword, verifyPassword } from './password.ts';
import { CONSOLE_ROLES, type ConsoleIdentity, type ConsoleRole, type ConsoleUser, type ConsoleUserStore } from './types.ts';
import { nowSeconds } from '../clock.ts';
import { sha256Hex } from '../auth/secrets.ts';

export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
export const isRole = (r: unknown): r is ConsoleRole => typeof r === 'string' && (CONSOLE_ROLES as readonly string[]).includes(r);

/** Signing in needs a one-time code as well (Cognito users with MFA). */
export class MfaRequired extends AuthenticationError {
  constructor() {
    super('MFA code required: send mfa_code with email and password.');
    this.name = 'MfaRequired';
  }
}

/** A local user's credential tag: a new password (a new salt, whatever the password) gives a new one. */
const credentialTag = (passwordHash: string): string => sha256Hex(passwordHash).slice(0, 16);

/** Local console users: rows of the table with an scrypt hash of the password. */
export function tableIdentity(store: ConsoleUserStore): ConsoleIdentity {
  return {
    async verify(email, password) {
      const rec = EMAIL_PATTERN.test(email) ? await store.get(email) : undefined;
      // An unknown email costs what a wrong password does.
      const ok = await verifyPassword(password, rec?.password_hash ?? (await dummyHash()));
      if (!rec || !ok || !isRole(rec.role)) return undefined;
      return { email: rec.email, tenant: rec.tenant, role: rec.role, credential: credentialTag(rec.password_hash) };
    },
    async lookup(email) {
      const rec = await store.get(email);
      return rec && isRole(rec.role) ? { email: rec.email, tenant: rec.tenant, role: rec.role, credential: credentialTag(rec.password_hash) } : undefined;
    },
  };
}

/**
 * Creates (or replaces) a local console user. The same password keeps its hash, so a change of
 * role or tenant alone leaves the user's sessions to their check (which applies it); a new password
 * ends them.
 */
export async function putLocalUser(store: ConsoleUserStore, user: ConsoleUser, password: string): Promise<void> {
  const email = user.email.toLowerCase();
  const held = (await store.get(email))?.password_hash;
  const password_hash = held !== undefined && (await verifyPassword(password, held)) ? held : await hashPassword(password);
  await store.put({ email, tenant: user.tenant, role: user.role, password_hash, created: nowSeconds() });
}
