import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleSession } from '../../shared/console-auth/types.ts';
import { dynamoConsoleSessionStore } from '../../shared/data/console-auth.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

const sessions = () => dynamoConsoleSessionStore(db.table);
const session = (created: number): ConsoleSession => ({ email: 'ada@example.com', tenant: 'acme', role: 'admin', csrf_token: 'x', created, expires_at: created + 28_800 });

describe("console sessions: recording a check of the session's user", () => {
  it("ends the session whenever the row is stored, even after another container's check of the same second (or later) that saw the old user", async () => {
    // Found by a review (2026-12-05): an end needed the last check to be older, so a same-second
    // check that saw the user before the new password kept the session alive and fresh.
    await sessions().put('same-second', session(1_000));
    expect(await sessions().recordCheck('same-second', 2_000, { role: 'admin' })).toBe(true);
    expect(await sessions().recordCheck('same-second', 2_000, { end: true })).toBe(true);
    expect(await sessions().get('same-second')).toMatchObject({ expires_at: 2_000, checked_at: 2_000 });
    await sessions().put('later', session(1_000));
    expect(await sessions().recordCheck('later', 2_001, { role: 'viewer' })).toBe(true);
    expect(await sessions().recordCheck('later', 2_000, { end: true })).toBe(true);
    expect((await sessions().get('later'))?.expires_at).toBe(2_000);
  });

  it('a check that does not end it applies only over an older one, and never revives an ended session', async () => {
    await sessions().put('ended', session(1_000));
    expect(await sessions().recordCheck('ended', 2_000, { end: true })).toBe(true);
    expect(await sessions().recordCheck('ended', 2_000, { role: 'viewer' })).toBe(false);
    expect(await sessions().recordCheck('ended', 2_005, { role: 'viewer' })).toBe(true);
    expect(await sessions().get('ended')).toMatchObject({ expires_at: 2_000, checked_at: 2_005, role: 'viewer' });
    expect(await sessions().recordCheck('ended', 2_003, { role: 'admin' })).toBe(false);
    expect((await sessions().get('ended'))?.role).toBe('viewer');
  });

  it('creates no row for a session signed out meanwhile, whatever the outcome', async () => {
    expect(await sessions().recordCheck('gone', 2_000, { end: true })).toBe(false);
    expect(await sessions().recordCheck('gone', 2_000, { role: 'admin' })).toBe(false);
    expect(await sessions().get('gone')).toBeUndefined();
  });
});
