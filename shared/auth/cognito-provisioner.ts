import { type CognitoIdentityProviderClient, CreateUserPoolClientCommand, DeleteUserPoolClientCommand, ResourceNotFoundException } from '@aws-sdk/client-cognito-identity-provider';
import type { ClientProvisioner } from '../domain/credentials.ts';
import type { CoreScope } from '../routes.ts';

/** Access-token lifetime of every app client, as the spec's default (60 minutes). */
export const ACCESS_TOKEN_MINUTES = 60;

/**
 * The app client's name in Cognito: 1-128 characters of `[\w\s+=,.@-]` (ASCII word characters).
 * The name the API took (any one line of up to 256) stays the client record's; Cognito gets it
 * with every other character as `-`, cut at 128 characters. Until 2026-12-05 it got the name as
 * sent, and refused one such as "Acme's app" or "café": a 500 for a name the API accepts.
 */
export function cognitoClientName(name: string): string {
  const kept = Array.from(name, (ch) => (/^[A-Za-z0-9_ +=,.@-]$/.test(ch) ? ch : '-'))
    .slice(0, 128)
    .join('');
  return kept.trim() === '' ? 'client' : kept;
}

/**
 * Deployed stack: each OAuth client is a Cognito app client with the client-credentials flow,
 * a generated secret and the requested resource-server scopes.
 */
export function cognitoProvisioner(client: CognitoIdentityProviderClient, userPoolId: string): ClientProvisioner {
  return {
    async provision(name: string, scopes: CoreScope[]) {
      const out = await client.send(
        new CreateUserPoolClientCommand({
          UserPoolId: userPoolId,
          ClientName: cognitoClientName(name),
          GenerateSecret: true,
          AllowedOAuthFlows: ['client_credentials'],
          AllowedOAuthFlowsUserPoolClient: true,
          AllowedOAuthScopes: scopes,
          AccessTokenValidity: ACCESS_TOKEN_MINUTES,
          TokenValidityUnits: { AccessToken: 'minutes' },
          ExplicitAuthFlows: [],
          SupportedIdentityProviders: [],
          PreventUserExistenceErrors: 'ENABLED',
          EnableTokenRevocation: true,
        }),
      );
      const c = out.UserPoolClient;
      if (!c?.ClientId || !c.ClientSecret) throw new Error('Cognito returned no client id or secret');
      return { clientId: c.ClientId, clientSecret: c.ClientSecret };
    },
    async deprovision(clientId: string) {
      try {
        await client.send(new DeleteUserPoolClientCommand({ UserPoolId: userPoolId, ClientId: clientId }));
      } catch (e) {
        if (!(e instanceof ResourceNotFoundException)) throw e;
      }
    },
  };
}
