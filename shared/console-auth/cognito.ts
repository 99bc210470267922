import {
  AdminGetUserCommand,
  AdminInitiateAuthCommand,
  AdminRespondToAuthChallengeCommand,
  NotAuthorizedException,
  UserNotFoundException,
  type AdminGetUserCommandOutput,
  type AdminInitiateAuthCommandOutput,
  type AdminRespondToAuthChallengeCommandOutput,
  type CognitoIdentityProviderClient,
} from '@aws-sdk/client-cognito-identity-provider';
import { AuthenticationError } from '../errors.ts';
import { EMAIL_PATTERN, isRole, MfaRequired } from './identity.ts';
import type { ConsoleIdentity, ConsoleUser } from './types.ts';

/** The custom attributes of a console user in the pool (lib/auth.ts defines them). */
export const TENANT_ATTRIBUTE = 'custom:tenant';
export const ROLE_ATTRIBUTE = 'custom:role';

const rejected = (e: unknown) => e instanceof NotAuthorizedException || e instanceof UserNotFoundException;

/** The console user a pool user is: undefined without a tenant or a known role (no console user). */
function consoleUserOf(user: AdminGetUserCommandOutput, email: string): ConsoleUser | undefined {
  const attr = (name: string) => user.UserAttributes?.find((a) => a.Name === name)?.Value;
  const tenant = attr(TENANT_ATTRIBUTE);
  const role = attr(ROLE_ATTRIBUTE);
  if (!tenant || !isRole(role)) return undefined;
  return { email: (attr('email') ?? email).toLowerCase(), tenant, role };
}

/**
 * Deployed stack: console users are users of the service's Cognito pool, username = email,
 * with `custom:tenant` and `custom:role` set by an administrator (app clients cannot write them).
 * The password is checked server-side (ADMIN_USER_PASSWORD_AUTH through the console app client),
 * then a TOTP code when the pool asks for one; Cognito's own lockout applies.
 */
export function cognitoIdentity(client: CognitoIdentityProviderClient, userPoolId: string, clientId: string | undefined): ConsoleIdentity {
  return {
    async verify(email, password, mfaCode) {
      if (!EMAIL_PATTERN.test(email)) return undefined;
      // Only the sign-in function is given the console app client (lib/stack.ts).
      if (!clientId) throw new Error("Console sign-in needs CONSOLE_CLIENT_ID (the pool's console app client).");
      let auth: AdminInitiateAuthCommandOutput | AdminRespondToAuthChallengeCommandOutput;
      try {
        auth = await client.send(
          new AdminInitiateAuthCommand({ UserPoolId: userPoolId, ClientId: clientId, AuthFlow: 'ADMIN_USER_PASSWORD_AUTH', AuthParameters: { USERNAME: email, PASSWORD: password } }),
        );
        if (auth.ChallengeName === 'SOFTWARE_TOKEN_MFA') {
          if (!mfaCode) throw new MfaRequired();
          auth = await client.send(
            new AdminRespondToAuthChallengeCommand({
              UserPoolId: userPoolId,
              ClientId: clientId,
              ChallengeName: 'SOFTWARE_TOKEN_MFA',
              Session: auth.Session,
              ChallengeResponses: { USERNAME: email, SOFTWARE_TOKEN_MFA_CODE: mfaCode },
            }),
          );
        }
      } catch (e) {
        if (rejected(e)) return undefined;
        throw e;
      }
      if (auth.ChallengeName) throw new AuthenticationError(`Finish setting up this account first (Cognito asks for ${auth.ChallengeName}).`);
      if (!auth.AuthenticationResult) return undefined;
      const user = await client.send(new AdminGetUserCommand({ UserPoolId: userPoolId, Username: email }));
      return consoleUserOf(user, email);
    },
    /**
     * A session's check (every function that authenticates console sessions is granted
     * AdminGetUser): a deleted user (UserNotFoundException) or a disabled one is no user any more.
     * Any other failure (Cognito unreachable, throttled) is thrown: the caller keeps the session.
     */
    async lookup(email) {
      let user: AdminGetUserCommandOutput;
      try {
        user = await client.send(new AdminGetUserCommand({ UserPoolId: userPoolId, Username: email }));
      } catch (e) {
        if (e instanceof UserNotFoundException) return undefined;
        throw e;
      }
      return user.Enabled === false ? undefined : consoleUserOf(user, email);
    },
  };
}
