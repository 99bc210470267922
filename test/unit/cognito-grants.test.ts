import { CognitoIdentityProviderClient, CreateUserPoolClientCommand, DeleteUserPoolClientCommand } from '@aws-sdk/client-cognito-identity-provider';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { cognitoProvisioner } from '../../shared/auth/cognito-provisioner.ts';
import { createClient, deleteClient } from '../../shared/domain/credentials.ts';
import type { CredentialStore } from '../../shared/domain/credentials-types.ts';
import { grants } from '../../shared/grants.ts';

/** The Cognito actions a test's calls performed (their command names without "Command"). */
function cognitoActions(mock: ReturnType<typeof mockClient>): string[] {
  return [...new Set(mock.calls().map((c) => (c.args[0] as { constructor: { name: string } }).constructor.name.replace(/Command$/, '')))].sort();
}

/**
 * Cognito calls are not checked by the local stack's IAM stand-in (local/grants.ts checks the
 * table, queues and artifacts): each path a Platform function takes through Cognito is run here
 * against a mock, and every action it performs must be in its route's grant (shared/routes.ts),
 * which the CDK stack turns into its role's policy.
 */
describe('Cognito actions are granted to the functions that perform them', () => {
  const setup = () => {
    const mock = mockClient(CognitoIdentityProviderClient);
    mock.on(CreateUserPoolClientCommand).resolves({ UserPoolClient: { ClientId: 'c1', ClientSecret: 's1' } });
    mock.on(DeleteUserPoolClientCommand).resolves({});
    return { mock, provisioner: cognitoProvisioner(new CognitoIdentityProviderClient({ region: 'us-east-1' }), 'pool') };
  };
  const granted = (handler: string) => [...(grants().get(handler)?.access.cognito ?? [])].sort();

  it('a client create, including the rollback when its record cannot be stored', async () => {
    const { mock, provisioner } = setup();
    const failing = { putClient: async () => Promise.reject(new Error('throttled')) } as unknown as CredentialStore;
    await expect(createClient(failing, 't', { name: 'n', scopes: ['service-api/read'] }, provisioner)).rejects.toThrow('throttled');
    expect(cognitoActions(mock)).toEqual(['CreateUserPoolClient', 'DeleteUserPoolClient']);
    for (const action of cognitoActions(mock)) expect(granted('platform/clients/create')).toContain(action);
    mock.restore();
  });

  it('a client delete', async () => {
    const { mock, provisioner } = setup();
    const store = { deleteClient: async () => true } as unknown as CredentialStore;
    await deleteClient(store, 't', 'c1', provisioner);
    expect(cognitoActions(mock)).toEqual(['DeleteUserPoolClient']);
    for (const action of cognitoActions(mock)) expect(granted('platform/clients/delete')).toContain(action);
    mock.restore();
  });
});
