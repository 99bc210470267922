import * as z from 'zod/mini';
import { type AwsCallOptions, AwsClient, AwsHttpError } from '../aws/signed-fetch.ts';
import { deadlineSignal } from '../deadline.ts';
import { ApiError, AuthenticationError } from '../errors.ts';
import { EMAIL_PATTERN, isRole, MfaRequired } from './identity.ts';
import type { ConsoleIdentity, ConsoleUser } from './types.ts';

/** The custom attributes of a console user in the pool (lib/auth.ts defines them). */
export const TENANT_ATTRIBUTE = 'custom:tenant';
export const ROLE_ATTRIBUTE = 'custom:role';

/*
 * Cognito's user-pool API (JSON 1.1 over HTTPS) through the small SigV4 client
 * (shared/aws/signed-fetch.ts), not the Cognito SDK: every Platform function checks console
 * sessions (AdminGetUser), and the SDK's client would be ≈ 130 KB minified in each of them
 * (bench:bundle, docs/benchmarks.md). Three calls, their answers checked with zod.
 */

const authAnswer = z.object({
  ChallengeName: z.optional(z.string()),
  Session: z.optional(z.string()),
  AuthenticationResult: z.optional(z.looseObject({})),
});
const userAnswer = z.object({
  Enabled: z.optional(z.boolean()),
  /** Epoch seconds (JSON 1.1 timestamps are numbers); moved by any change of the user. */
  UserLastModifiedDate: z.optional(z.number()),
  UserAttributes: z.optional(z.array(z.object({ Name: z.string(), Value: z.optional(z.string()) }))),
});
type UserAnswer = z.infer<typeof userAnswer>;

/** Cognito's user-pool API in `region`, signed as `cognito-idp` (`url`: a stand-in's, in tests). */
export const cognitoClient = (region: string, { url = `https://cognito-idp.${region}.amazonaws.com`, ...options }: AwsCallOptions & { url?: string } = {}) =>
  new AwsClient({ url, region, service: 'cognito-idp' }, options);

async function call<T>(client: AwsClient, action: string, input: object, answer: z.ZodMiniType<T>): Promise<T> {
  const res = await client.send('POST', '/', {
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `AWSCognitoIdentityProviderService.${action}` },
    body: JSON.stringify(input),
    // Abandoned at the request's deadline: a sign-in whose call never answers gives its held
    // failure back when it is answered 503, not when the call fails (on Lambda, at a later thaw).
    signal: deadlineSignal(),
  });
  return z.parse(answer, await res.json());
}

/** Cognito's answer naming `codes` (a wrong password, an unknown user): the caller's "no such user". */
const answered = (e: unknown, ...codes: string[]) => e instanceof AwsHttpError && codes.includes(e.code);

/**
 * What a sign-in's call to Cognito that failed throws: Cognito throttling the pool after the
 * client's own retries is a 503 to retry (until 2026-12-05 a 500; the user read after the
 * password, until later that day); anything else as it is.
 */
const signInFailure = (e: unknown): unknown =>
  answered(e, 'TooManyRequestsException', 'LimitExceededException')
    ? new ApiError('api_error', 'temporarily_unavailable', 'Sign-in is busy right now; try again in a few seconds.', { status: 503, headers: { 'retry-after': '5' } })
    : e;

/** The console user a pool user is: undefined without a tenant or a known role (no console user). */
function consoleUserOf(user: UserAnswer, email: string): ConsoleUser | undefined {
  const attr = (name: string) => user.UserAttributes?.find((a) => a.Name === name)?.Value;
  const tenant = attr(TENANT_ATTRIBUTE);
  const role = attr(ROLE_ATTRIBUTE);
  if (!tenant || !isRole(role)) return undefined;
  const changed = user.UserLastModifiedDate;
  return { email: (attr('email') ?? email).toLowerCase(), tenant, role, ...(changed !== undefined ? { credential: String(changed) } : {}) };
}

/**
 * Deployed stack: console users are users of the service's Cognito pool, username = email,
 * with `custom:tenant` and `custom:role` set by an administrator (app clients cannot write them).
 * The password is checked server-side (ADMIN_USER_PASSWORD_AUTH through the console app client),
 * then a TOTP code when the pool asks for one; Cognito's own lockout applies.
 */
export function cognitoIdentity(client: AwsClient, userPoolId: string, clientId: string | undefined): ConsoleIdentity {
  const getUser = (email: string) => call(client, 'AdminGetUser', { UserPoolId: userPoolId, Username: email }, userAnswer);
  return {
    async verify(email, password, mfaCode) {
      if (!EMAIL_PATTERN.test(email)) return undefined;
      // Only the sign-in function is given the console app client (lib/stack.ts).
      if (!clientId) throw new Error("Console sign-in needs CONSOLE_CLIENT_ID (the pool's console app client).");
      let auth: z.infer<typeof authAnswer>;
      try {
        auth = await call(
          client,
          'AdminInitiateAuth',
          { UserPoolId: userPoolId, ClientId: clientId, AuthFlow: 'ADMIN_USER_PASSWORD_AUTH', AuthParameters: { USERNAME: email, PASSWORD: password } },
          authAnswer,
        );
        if (auth.ChallengeName === 'SOFTWARE_TOKEN_MFA') {
          if (!mfaCode) throw new MfaRequired();
          auth = await call(
            client,
            'AdminRespondToAuthChallenge',
            {
              UserPoolId: userPoolId,
              ClientId: clientId,
              ChallengeName: 'SOFTWARE_TOKEN_MFA',
              Session: auth.Session,
              ChallengeResponses: { USERNAME: email, SOFTWARE_TOKEN_MFA_CODE: mfaCode },
            },
            authAnswer,
          );
        }
      } catch (e) {
        if (answered(e, 'NotAuthorizedException', 'UserNotFoundException')) return undefined;
        // A mistyped or expired one-time code, or an account Cognito holds back: 401s the user
        // can act on (until 2026-12-05 they were 500 "The service failed to answer").
        if (answered(e, 'CodeMismatchException', 'ExpiredCodeException')) throw new AuthenticationError('Wrong or expired one-time code.');
        if (answered(e, 'PasswordResetRequiredException', 'UserNotConfirmedException')) throw new AuthenticationError('Finish setting up this account first (reset its password, or confirm it).');
        // Throttling: a 503 (signInFailure). InvalidParameterException is thrown (a 500 the
        // handler logs): Cognito answers it for a misconfigured pool or client ("Auth flow not
        // enabled for this client"), which must not look like every user mistyping (for some hours
        // of 2026-12-05 it was a wrong password); it holds no failure against the sign-in limits
        // (sign-in.ts).
        throw signInFailure(e);
      }
      if (auth.ChallengeName) throw new AuthenticationError(`Finish setting up this account first (Cognito asks for ${auth.ChallengeName}).`);
      if (!auth.AuthenticationResult) return undefined;
      let user: UserAnswer;
      try {
        user = await getUser(email);
      } catch (e) {
        throw signInFailure(e);
      }
      return consoleUserOf(user, email);
    },
    /**
     * A session's check (every function that authenticates console sessions is granted
     * AdminGetUser): a deleted user (UserNotFoundException) or a disabled one is no user any more.
     * Any other failure (Cognito unreachable, throttled) is thrown: the caller keeps the session.
     */
    async lookup(email) {
      let user: UserAnswer;
      try {
        user = await getUser(email);
      } catch (e) {
        if (answered(e, 'UserNotFoundException')) return undefined;
        throw e;
      }
      return user.Enabled === false ? undefined : consoleUserOf(user, email);
    },
  };
}
