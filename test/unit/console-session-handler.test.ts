import { describe, expect, it, vi } from 'vitest';
import type { ConsoleSession } from '../../shared/console-auth/types.ts';
import type { ApiContext } from '../../shared/http/types.ts';
import { logger } from '../../shared/observability.ts';
import { apiEvent } from '../helpers/api-event.ts';

// POST /console/session with the table failing to end the session the browser had: the
// sign-in (its new session opened) still answers it. No table: both stores are stood in for.
const opened: ConsoleSession = { email: 'ada@example.com', tenant: 'acme', role: 'admin', csrf_token: 'c'.repeat(43), created: 1_000, expires_at: 1_000 + 28_800 };
vi.mock('../../shared/console-auth/sign-in.ts', () => ({ signIn: async () => ({ id: 'n'.repeat(43), session: opened }) }));
vi.mock('../../shared/console-auth/session.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../shared/console-auth/session.ts')>()),
  endSession: async () => {
    throw new Error('ProvisionedThroughputExceededException');
  },
}));

const { handler } = await import('../../functions/console-session/session.ts');
const context = { awsRequestId: '9f1c2a3b-0000-4000-8000-000000000002', getRemainingTimeInMillis: () => 10_000 } as unknown as ApiContext;

describe('console sign-in when the session the browser had cannot be ended', () => {
  it('answers the sign-in with its new cookie and logs the failure, not a 500 that keeps the old cookie and orphans the new session', async () => {
    // Found by a review (2026-12-05): the delete's failure was the sign-in's (500).
    const errors = vi.spyOn(logger, 'error');
    const res = await handler(
      apiEvent('POST', '/console/session', '/console/session', {
        headers: { 'content-type': 'application/json', cookie: `rs_console_session=${'o'.repeat(43)}` },
        body: JSON.stringify({ email: 'ada@example.com', password: 'pw' }),
      }),
      context,
    );
    expect(res.statusCode).toBe(200);
    expect(String(res.headers?.['set-cookie'])).toMatch(new RegExp(`^rs_console_session=${'n'.repeat(43)};`));
    expect(JSON.parse(String(res.body))).toMatchObject({ email: 'ada@example.com', csrf_token: opened.csrf_token });
    expect(errors.mock.calls.some(([message]) => String(message).includes('could not be ended'))).toBe(true);
    errors.mockRestore();
  });
});
