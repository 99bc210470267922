import { describe, expect, it } from 'vitest';
import { recheckSession, type RecheckDeps } from '../../shared/console-auth/recheck.ts';
import type { ConsoleIdentity, ConsoleSession, ConsoleSessionStore, ConsoleUser } from '../../shared/console-auth/types.ts';

// A console session's user is read again every few minutes (shared/console-auth/recheck.ts):
// demoted, disabled, deleted or moved to another tenant takes effect within that interval.

const SIGNED_IN = 1_000_000;
const INTERVAL = 300;
const session = (over: Partial<ConsoleSession> = {}): ConsoleSession => ({
  email: 'ada@example.com',
  tenant: 'acme',
  role: 'admin',
  csrf_token: 'token',
  created: SIGNED_IN,
  expires_at: SIGNED_IN + 8 * 3600,
  ...over,
});

/** A session store holding one session, and an identity answering `user` (or throwing it). */
function setup(user: ConsoleUser | undefined | Error) {
  const rows = new Map<string, ConsoleSession>([['h', session()]]);
  const lookups: string[] = [];
  const identity: ConsoleIdentity = {
    verify: async () => undefined,
    lookup: async (email) => {
      lookups.push(email);
      if (user instanceof Error) throw user;
      return user;
    },
  };
  const sessions: ConsoleSessionStore = {
    put: async (id, s) => void rows.set(id, s),
    get: async (id) => rows.get(id),
    delete: async (id) => void rows.delete(id),
    recordCheck: async (id, at, outcome) => {
      // As the table's (shared/data/console-auth.ts): an end always applies, a role over an older check.
      const s = rows.get(id);
      if (!s) return false;
      if ('end' in outcome) rows.set(id, { ...s, checked_at: at, expires_at: at });
      else if ((s.checked_at ?? -1) >= at) return false;
      else rows.set(id, { ...s, checked_at: at, role: outcome.role });
      return true;
    },
  };
  const deps: RecheckDeps = { identity: async () => identity, sessions, intervalSeconds: INTERVAL };
  return { deps, rows, lookups };
}

describe("a console session's check of its user", () => {
  it('reads nobody while the last check is fresh', async () => {
    const { deps, lookups, rows } = setup(undefined);
    const s = session();
    expect(await recheckSession('h', s, SIGNED_IN + INTERVAL - 1, deps)).toBe(s);
    expect(await recheckSession('h', { ...s, checked_at: SIGNED_IN + 600 }, SIGNED_IN + 600 + INTERVAL - 1, deps)).toMatchObject({ role: 'admin' });
    expect(lookups).toEqual([]);
    expect(rows.get('h')?.checked_at).toBeUndefined();
  });

  it("takes the user's role now once the check is due, and records the check so the next requests skip it", async () => {
    const { deps, lookups, rows } = setup({ email: 'ada@example.com', tenant: 'acme', role: 'viewer' });
    const now = SIGNED_IN + INTERVAL;
    expect(await recheckSession('h', session(), now, deps)).toMatchObject({ role: 'viewer', checked_at: now, tenant: 'acme' });
    expect(lookups).toEqual(['ada@example.com']);
    expect(rows.get('h')).toMatchObject({ role: 'viewer', checked_at: now });
    // The stored record is fresh now: the next request makes no call.
    expect(await recheckSession('h', rows.get('h') as ConsoleSession, now + 10, deps)).toMatchObject({ role: 'viewer' });
    expect(lookups).toHaveLength(1);
  });

  it('ends the session of a user gone (deleted or disabled: the identity answers none) or moved to another tenant', async () => {
    for (const user of [undefined, { email: 'ada@example.com', tenant: 'other', role: 'admin' as const }]) {
      const { deps, rows } = setup(user);
      const now = SIGNED_IN + INTERVAL + 5;
      expect(await recheckSession('h', session(), now, deps)).toBeUndefined();
      expect(rows.get('h')).toMatchObject({ expires_at: now, checked_at: now });
    }
  });

  it("ends the session whose user's credential changed since its sign-in (a new password), and keeps one of a session from before the tag", async () => {
    const now = SIGNED_IN + INTERVAL;
    const changed = setup({ email: 'ada@example.com', tenant: 'acme', role: 'admin', credential: 'new' });
    expect(await recheckSession('h', session({ credential: 'old' }), now, changed.deps)).toBeUndefined();
    expect(changed.rows.get('h')?.expires_at).toBe(now);
    const same = setup({ email: 'ada@example.com', tenant: 'acme', role: 'admin', credential: 'old' });
    expect(await recheckSession('h', session({ credential: 'old' }), now, same.deps)).toMatchObject({ checked_at: now });
    const untagged = setup({ email: 'ada@example.com', tenant: 'acme', role: 'admin', credential: 'new' });
    expect(await recheckSession('h', session(), now, untagged.deps)).toMatchObject({ checked_at: now });
  });

  it('keeps the session and its role when the user cannot be read (an outage), and tries again on the next request', async () => {
    const { deps, lookups, rows } = setup(new Error('Cognito unreachable'));
    const s = session();
    expect(await recheckSession('h', s, SIGNED_IN + INTERVAL, deps)).toBe(s);
    expect(rows.get('h')?.checked_at).toBeUndefined();
    expect(await recheckSession('h', s, SIGNED_IN + INTERVAL + 1, deps)).toBe(s);
    expect(lookups).toHaveLength(2);
  });

  it('checks on every request with an interval of 0', async () => {
    const { deps, lookups } = setup({ email: 'ada@example.com', tenant: 'acme', role: 'admin' });
    await recheckSession('h', session(), SIGNED_IN, { ...deps, intervalSeconds: 0 });
    expect(lookups).toHaveLength(1);
  });
});
