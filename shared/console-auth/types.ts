/** Console sign-in: who may use the console, and their sessions. */

export const CONSOLE_ROLES = ['admin', 'viewer'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** A signed-in console user: an email, the one tenant they work in, and what they may do there. */
export interface ConsoleUser {
  email: string;
  tenant: string;
  role: ConsoleRole;
  /**
   * A tag of the user's credentials as the provider holds them (locally a digest of the password's
   * hash; Cognito's `UserLastModifiedDate`, which any change of the user moves): a session signed
   * in under another tag ends at its next check (recheck.ts). Absent on sessions opened before
   * 2026-12-05.
   */
  credential?: string;
}

/** A local console user (the deployed stack's live in the Cognito user pool). */
export interface ConsoleUserRecord extends ConsoleUser {
  /** `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>` (see password.ts). */
  password_hash: string;
  created: number;
}

export interface ConsoleUserStore {
  put(u: ConsoleUserRecord): Promise<void>;
  get(email: string): Promise<ConsoleUserRecord | undefined>;
  delete(email: string): Promise<void>;
}

/** A console session, stored under the SHA-256 of its id (the cookie's value). */
export interface ConsoleSession extends ConsoleUser {
  /** Sent back in `X-CSRF-Token` with every request that changes something. */
  csrf_token: string;
  created: number;
  expires_at: number;
  /**
   * When its user was last read again (seconds; absent: at sign-in, `created`): a session's user
   * is read again once this is `userCheckSeconds` old (shared/console-auth/recheck.ts).
   */
  checked_at?: number;
}

export interface ConsoleSessionStore {
  put(idHash: string, s: ConsoleSession): Promise<void>;
  get(idHash: string): Promise<ConsoleSession | undefined>;
  delete(idHash: string): Promise<void>;
  /**
   * Records a check of the session's user made at `checkedAt`: its role as read then, or the
   * session ended (`end`: it expires at `checkedAt`). Only on a stored session; an end always
   * applies, a role only over an older check (a check that started later, in another container,
   * wins) and never revives an ended session; false when not applied.
   */
  recordCheck(idHash: string, checkedAt: number, outcome: { role: ConsoleRole } | { end: true }): Promise<boolean>;
}

/**
 * Where console users are checked: the table locally, Cognito on AWS. Answers the user, or
 * undefined for an unknown email or a wrong password (never which of the two).
 */
export interface ConsoleIdentity {
  verify(email: string, password: string, mfaCode?: string): Promise<ConsoleUser | undefined>;
  /**
   * The user as they are now, without a password (a session's check): undefined when they are
   * gone, disabled or no console user any more (no tenant, no known role). Throws when the
   * provider cannot answer (a Cognito outage).
   */
  lookup(email: string): Promise<ConsoleUser | undefined>;
}
