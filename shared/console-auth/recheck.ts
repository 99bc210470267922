import { logger } from '../observability.ts';
import type { ConsoleIdentity, ConsoleSession, ConsoleSessionStore } from './types.ts';

/*
 * A session acts with the role and tenant of its sign-in; its user is read again (Cognito's
 * AdminGetUser on AWS, the local user store locally) once its last check is `intervalSeconds`
 * old (CONSOLE_USER_CHECK_SECONDS, default 5 min), so a user demoted, disabled, deleted, moved
 * to another tenant or given a new password stops acting as before within that time, not after
 * the session's 8 hours.
 */

export interface RecheckDeps {
  identity: () => Promise<ConsoleIdentity>;
  sessions: ConsoleSessionStore;
  /** How old a session's last check may be before its user is read again (0: on every request). */
  intervalSeconds: number;
}

/** When the session's user was last read: at sign-in (`created`) or at its last check. */
export const lastChecked = (s: ConsoleSession): number => s.checked_at ?? s.created;

/**
 * The session `s` (stored under `idHash`) as of `now`: unchanged while its last check is fresh
 * (no call at all); else its user read again and the check recorded on its row (so other
 * containers skip it): undefined when the session ended (the user gone, disabled, no console
 * user any more, or of another tenant), else the session with the user's role now. When the user
 * cannot be read (a Cognito outage) the session goes on with the role it has, and a later
 * request checks again: an outage locks nobody out.
 */
export async function recheckSession(idHash: string, s: ConsoleSession, now: number, deps: RecheckDeps): Promise<ConsoleSession | undefined> {
  if (now - lastChecked(s) < deps.intervalSeconds) return s;
  let user: Awaited<ReturnType<ConsoleIdentity['lookup']>>;
  try {
    user = await (await deps.identity()).lookup(s.email);
  } catch (e) {
    logger.warn('console session: its user could not be read again; it keeps its role until a later request checks', { email: s.email, error: String(e) });
    return s;
  }
  // A password changed since the sign-in (Cognito: any change of the user) ends the session too:
  // until 2026-12-05 a session taken by someone else outlived the owner's new password.
  const changed = s.credential !== undefined && user?.credential !== undefined && user.credential !== s.credential;
  if (!user || user.tenant !== s.tenant || changed) {
    await deps.sessions.recordCheck(idHash, now, { end: true });
    logger.info('console session ended: its user is gone, disabled, moved to another tenant or changed since sign-in', { email: s.email });
    return undefined;
  }
  // Not applied: another container's later check recorded its own answer; this one is as fresh.
  await deps.sessions.recordCheck(idHash, now, { role: user.role });
  return { ...s, role: user.role, checked_at: now };
}
