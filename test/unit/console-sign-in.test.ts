import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConsoleIdentity, ConsoleUser } from '../../shared/console-auth/types.ts';
import * as z from 'zod/mini';
import { AwsHttpError } from '../../shared/aws/signed-fetch.ts';
import { ApiError, AuthenticationError } from '../../shared/errors.ts';
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

  it('no failure the provider throws but an answer about the credentials holds one: a Cognito outage locks nobody out; a wrong one-time code still runs into 429', async () => {
    // Found by a review (2026-12-05): only a 5xx ApiError was given back, so Cognito's
    // InternalErrorException, a network failure, a timeout or an answer not understood each kept
    // one of the email's five failures.
    const failures: [string, () => unknown][] = [
      ['InternalErrorException', () => new AwsHttpError(500, 'InternalErrorException', 'boom')],
      ['InvalidParameterException', () => new AwsHttpError(400, 'InvalidParameterException', 'Auth flow not enabled for this client')],
      ['a network failure', () => new TypeError('fetch failed')],
      ['a timeout', () => new DOMException('The operation was aborted due to timeout', 'TimeoutError')],
      ['an answer not understood', () => z.parse(z.object({ Enabled: z.boolean() }), { Enabled: 'yes' })],
    ];
    for (const [k, [what, fail]] of failures.entries()) {
      verify = async () => {
        throw fail();
      };
      for (let n = 0; n < 12; n++) {
        const err = await signIn(`cy${k}@example.com`, 'pw', undefined, `10.0.2.${k}`).catch((e: unknown) => e);
        expect(err, `${what} #${n}`).not.toMatchObject({ status: 429 });
      }
    }
    verify = async () => {
      throw new AuthenticationError('Wrong or expired one-time code.');
    };
    const statuses: number[] = [];
    for (let n = 0; n < 12; n++) statuses.push(((await signIn('di@example.com', 'pw', '000000', '10.0.3.1').catch((e: unknown) => e)) as ApiError).status);
    expect(statuses[0]).toBe(401);
    expect(statuses).toContain(429);
  });
});
