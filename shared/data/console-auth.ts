import type { ConsoleSession as Session, ConsoleSessionStore, ConsoleUserRecord, ConsoleUserStore } from '../console-auth/types.ts';
import type { TableRef } from './client.ts';
import { ConsoleSession, ConsoleUser } from './entities.ts';
import { applied, getRow, isStored, put, remove, stripKeys, update } from './ops.ts';

/*
 * Console sign-in records of the single table: local console users (the deployed stack keeps
 * them in Cognito) and console sessions, stored under the SHA-256 of their id, with a TTL.
 */
const userKey = (email: string) => ConsoleUser.key({ email });
const sessionKey = (idHash: string) => ConsoleSession.key({ id_hash: idHash });

export function dynamoConsoleUserStore(t: TableRef): ConsoleUserStore {
  return {
    put: async (u: ConsoleUserRecord) => {
      await put(t, { ...userKey(u.email), ...u, email: u.email.toLowerCase() });
    },
    get: async (email: string) => {
      const row = await getRow(t, userKey(email), { consistent: true });
      return row ? (stripKeys(row) as unknown as ConsoleUserRecord) : undefined;
    },
    delete: async (email: string) => {
      await remove(t, userKey(email.toLowerCase()));
    },
  };
}

export function dynamoConsoleSessionStore(t: TableRef): ConsoleSessionStore {
  return {
    put: async (idHash: string, s: Session) => {
      // DynamoDB's TTL removes the row some time after expiry; reads check `expires_at` themselves.
      await put(t, { ...sessionKey(idHash), ...s, ttl: s.expires_at });
    },
    get: async (idHash: string) => {
      // Strongly consistent: a session ended a moment ago must not authenticate.
      const row = await getRow(t, sessionKey(idHash), { consistent: true });
      return row ? (stripKeys(row) as unknown as Session) : undefined;
    },
    delete: async (idHash: string) => {
      await remove(t, sessionKey(idHash));
    },
    recordCheck: (idHash, checkedAt, outcome) =>
      // UpdateItem on the session's row only (the `consoleSessions` grant of shared/routes.ts), on
      // a stored row (an update never creates one: a session signed out meanwhile stays out).
      // Ending wins whenever it comes: until 2026-12-05 it too needed the last check to have
      // started earlier, so another container's check of the same second that saw the old user
      // (before a new password, a deletion) kept the session alive and fresh. It sets expires_at
      // to its own start, never later than now, so it revives nothing either. A check that does
      // not end it applies only over an older one, and sets only checked_at and the role: a
      // session ended stays ended.
      applied(() =>
        'end' in outcome
          ? update(t, sessionKey(idHash), { set: { checked_at: checkedAt, expires_at: checkedAt, ttl: checkedAt } }, { when: (x) => isStored(x) })
          : update(
              t,
              sessionKey(idHash),
              { set: { checked_at: checkedAt, role: outcome.role } },
              { when: (x) => x.and(isStored(x), x.or(x.absent('checked_at'), x.cmp('checked_at', '<', checkedAt))) },
            ),
      ),
  };
}
