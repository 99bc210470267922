/** Console sign-in: who may use the console, and their sessions. */

export const CONSOLE_ROLES = ['admin', 'viewer'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** A signed-in console user: an email, the one tenant they work in, and what they may do there. */
export interface ConsoleUser {
  email: string;
  tenant: string;
  role: ConsoleRole;
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
}

/** A console session, stored under the SHA-256 of its id (the cookie's value). */
export interface ConsoleSession extends ConsoleUser {
  /** Sent back in `X-CSRF-Token` with every request that changes something. */
  csrf_token: string;
  created: number;
  expires_at: number;
}

export interface ConsoleSessionStore {
  put(idHash: string, s: ConsoleSession): Promise<void>;
  get(idHash: string): Promise<ConsoleSession | undefined>;
  delete(idHash: string): Promise<void>;
}

/**
 * Where console users are checked: the table locally, Cognito on AWS. Answers the user, or
 * undefined for an unknown email or a wrong password (never which of the two).
 */
export interface ConsoleIdentity {
  verify(email: string, password: string, mfaCode?: string): Promise<ConsoleUser | undefined>;
}
