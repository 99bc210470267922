import { CognitoIdentityProviderClient, CreateUserPoolClientCommand, DeleteUserPoolClientCommand } from '@aws-sdk/client-cognito-identity-provider';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { cognitoProvisioner } from '../../shared/auth/cognito-provisioner.ts';
import { cognitoIdentity } from '../../shared/console-auth/cognito.ts';
import { recheckSession } from '../../shared/console-auth/recheck.ts';
import type { ConsoleSessionStore } from '../../shared/console-auth/types.ts';
import { routes } from '../../shared/routes.ts';
import { createClient, deleteClient } from '../../shared/domain/credentials.ts';
import type { CredentialStore } from '../../shared/domain/credentials-types.ts';
import { grants } from '../../shared/grants.ts';
import { cognitoStub } from '../helpers/cognito-stub.ts';

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
    const failing = { auditId: async () => 1, putClient: async () => Promise.reject(new Error('throttled')) } as unknown as CredentialStore;
    await expect(createClient(failing, 't', { name: 'n', scopes: ['service-api/read'] }, provisioner)).rejects.toThrow('throttled');
    expect(cognitoActions(mock)).toEqual(['CreateUserPoolClient', 'DeleteUserPoolClient']);
    for (const action of cognitoActions(mock)) expect(granted('platform/clients/create')).toContain(action);
    mock.restore();
  });

  it('deletes a client whose Cognito delete failed on its retry: the app client first, then the record', async () => {
    const mock = mockClient(CognitoIdentityProviderClient);
    mock.on(DeleteUserPoolClientCommand).rejectsOnce(new Error('throttled')).resolves({});
    const provisioner = cognitoProvisioner(new CognitoIdentityProviderClient({ region: 'us-east-1' }), 'pool');
    const records = new Map([['c1', { client_id: 'c1', tenant: 't' }]]);
    const store = {
      auditId: async () => 1,
      getClient: async (id: string) => records.get(id),
      deleteClient: async (tenant: string, id: string) => records.get(id)?.tenant === tenant && records.delete(id),
    } as unknown as CredentialStore;
    // Another tenant's client is not found, and nothing is deleted.
    await expect(deleteClient(store, 'u', 'c1', provisioner)).rejects.toThrow('No client c1.');
    expect(mock.commandCalls(DeleteUserPoolClientCommand)).toHaveLength(0);
    await expect(deleteClient(store, 't', 'c1', provisioner)).rejects.toThrow('throttled');
    // Until 2026-12-05 the record was gone by then: the retry answered 404, the app client stayed.
    expect(records.has('c1')).toBe(true);
    await deleteClient(store, 't', 'c1', provisioner);
    expect(records.has('c1')).toBe(false);
    expect(mock.commandCalls(DeleteUserPoolClientCommand)).toHaveLength(2);
    mock.restore();
  });

  it('gives Cognito a name it takes (1-128 of [\\w\\s+=,.@-]) for any name the API accepts; the record keeps the name sent', async () => {
    const { mock, provisioner } = setup();
    const names: string[] = [];
    const stored: string[] = [];
    const store = { auditId: async () => 1, putClient: async (c: { name: string }) => void stored.push(c.name) } as unknown as CredentialStore;
    for (const name of ["Acme's web/app", 'café', 'a:b', '😀', `${'x'.repeat(127)}😀tail`, 'ok name_1+=,.@-']) {
      await createClient(store, 't', { name, scopes: ['service-api/read'] }, provisioner);
      const sent = (mock.commandCalls(CreateUserPoolClientCommand).at(-1)?.args[0].input.ClientName ?? '') as string;
      expect(sent, name).toMatch(/^[\w\s+=,.@-]{1,128}$/);
      names.push(sent);
    }
    expect(names).toEqual(['Acme-s web-app', 'caf-', 'a-b', '-', `${'x'.repeat(127)}-`, 'ok name_1+=,.@-']);
    expect(stored).toEqual(["Acme's web/app", 'café', 'a:b', '😀', `${'x'.repeat(127)}😀tail`, 'ok name_1+=,.@-']);
    mock.restore();
  });

  it("a console session's check of its user, in every function that authenticates console sessions (every Platform route's)", async () => {
    const cognito = await cognitoStub();
    cognito.answers.AdminGetUser = {
      Enabled: true,
      UserAttributes: [
        { Name: 'custom:tenant', Value: 't' },
        { Name: 'custom:role', Value: 'viewer' },
      ],
    };
    // The functions that check sessions have no console app client (only sign-in has CONSOLE_CLIENT_ID).
    const identity = cognitoIdentity(cognito.client(), 'pool', undefined);
    const sessions = { recordCheck: async () => true } as unknown as ConsoleSessionStore;
    const s = { email: 'a@example.com', tenant: 't', role: 'admin' as const, csrf_token: 'x', created: 0, expires_at: 10_000 };
    expect(await recheckSession('h', s, 1_000, { identity: async () => identity, sessions, intervalSeconds: 300 })).toMatchObject({ role: 'viewer' });
    expect(cognito.actions()).toEqual(['AdminGetUser']);
    const sessionFunctions = new Set(routes.filter((r) => r.api === 'platform').map((r) => r.handler));
    expect(sessionFunctions.size).toBeGreaterThan(30);
    for (const m of sessionFunctions) for (const action of cognito.actions()) expect(granted(m), m).toContain(action);
    await cognito.close();
  });

  it('a console sign-in with a TOTP code, in the sign-in function', async () => {
    const cognito = await cognitoStub();
    cognito.answers.AdminInitiateAuth = { ChallengeName: 'SOFTWARE_TOKEN_MFA', Session: 's' };
    cognito.answers.AdminRespondToAuthChallenge = { AuthenticationResult: { AccessToken: 'a' } };
    cognito.answers.AdminGetUser = {
      UserAttributes: [
        { Name: 'custom:tenant', Value: 't' },
        { Name: 'custom:role', Value: 'admin' },
      ],
    };
    expect(await cognitoIdentity(cognito.client(), 'pool', 'console-client').verify('a@example.com', 'pw', '123456')).toMatchObject({ role: 'admin' });
    expect(cognito.actions()).toEqual(['AdminGetUser', 'AdminInitiateAuth', 'AdminRespondToAuthChallenge']);
    for (const action of cognito.actions()) expect(granted('console-session/session')).toContain(action);
    await cognito.close();
  });

  it('a client delete', async () => {
    const { mock, provisioner } = setup();
    const store = { auditId: async () => 1, getClient: async () => ({ client_id: 'c1', tenant: 't' }), deleteClient: async () => true } as unknown as CredentialStore;
    await deleteClient(store, 't', 'c1', provisioner);
    expect(cognitoActions(mock)).toEqual(['DeleteUserPoolClient']);
    for (const action of cognitoActions(mock)) expect(granted('platform/clients/delete')).toContain(action);
    mock.restore();
  });
});
