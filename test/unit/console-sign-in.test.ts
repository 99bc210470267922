import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConsoleIdentity, ConsoleUser } from '../../shared/console-auth/types.ts';
import { ApiError } from '../../shared/errors.ts';
import { MfaRequired } from '../../shared/console-auth/identity.ts';

/** The identity provider the sign-in asks (Cognito's behaviour, as shared/console-auth/cognito.ts answers it). */
let verify: ConsoleIdentity['verify'];
vi.mock('../../shared/console-auth/users.ts', () => ({ consoleIdentity: async () => ({ verify: (...a: Parameters<ConsoleIdentity['verify']>) => verify(...a), lookup: async () => undefined }) }));
// No table: the session opened is the user.
vi.mock('../../shared/console-auth/session.ts', () => ({ openSession: async (user: ConsoleUser) => ({ id: 'id', session: user }) }));

const { signIn } = await import('../../shared/console-auth/sign-in.ts');
const ada: ConsoleUser = { email: 'ada@example.com', tenant: 'acme', role: 'admin' };

describe('console sign-in: what a failure holds', () => {
  beforeEach(() => {
    verify = async () => undefined;
  });

  it("an MFA user's first step (the right password, no code yet) holds no failure: many sign-ins in a row are not refused", async () => {
    // Found by a review (2026-12-05): each first step kept one of the email's five failures.
    verify = async (_email, _password, code) => {
      if (!code) throw new MfaRequired();
      return ada;
    };
    for (let k = 0; k < 12; k++) {
      await expect(signIn('ada@example.com', 'pw', undefined, `10.0.0.${k}`)).rejects.toBeInstanceOf(MfaRequired);
      await expect(signIn('ada@example.com', 'pw', '123456', `10.0.0.${k}`)).resolves.toMatchObject({ session: ada });
    }
  });

  it('a provider that cannot answer (Cognito throttling: 503) holds no failure either; wrong passwords still run into 429', async () => {
    verify = async () => {
      throw new ApiError('api_error', 'temporarily_unavailable', 'busy', { status: 503 });
    };
    for (let k = 0; k < 12; k++) await expect(signIn('bo@example.com', 'pw', undefined, '10.0.1.1')).rejects.toMatchObject({ status: 503 });
    verify = async () => undefined;
    const statuses: number[] = [];
    for (let k = 0; k < 12; k++) statuses.push(((await signIn('bo@example.com', 'wrong', undefined, '10.0.1.1').catch((e: unknown) => e)) as ApiError).status);
    expect(statuses).toContain(429);
    expect(statuses[0]).toBe(401);
  });
});
