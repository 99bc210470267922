import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CognitoIdentityProviderClient, CreateUserPoolClientCommand, DeleteUserPoolClientCommand } from '@aws-sdk/client-cognito-identity-provider';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAdminCommand, type AdminConnection } from '../../shared/admin/commands.ts';
import { readStackOutputs } from '../../shared/admin/deployed.ts';
import { cognitoProvisioner } from '../../shared/auth/cognito-provisioner.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

const cfn = mockClient(CloudFormationClient);
const cognito = mockClient(CognitoIdentityProviderClient);
let db: TestTable;
let conn: AdminConnection;
let n = 0;

const OUTPUTS = [
  { OutputKey: 'BaseUrl', OutputValue: 'https://core.execute-api.eu-west-1.amazonaws.com/' },
  { OutputKey: 'ConsoleUrl', OutputValue: 'https://console.execute-api.eu-west-1.amazonaws.com/' },
  { OutputKey: 'AuthUrl', OutputValue: 'https://recsearch-123.auth.eu-west-1.amazoncognito.com' },
  { OutputKey: 'UserPoolId', OutputValue: 'eu-west-1_Pool' },
  { OutputKey: 'TableName', OutputValue: 'RecSearch-Table' },
];

beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

beforeEach(() => {
  cfn.reset();
  cognito.reset();
  cfn.on(DescribeStacksCommand, { StackName: 'RecSearch' }).resolves({ Stacks: [{ StackName: 'RecSearch', CreationTime: new Date(), StackStatus: 'CREATE_COMPLETE', Outputs: OUTPUTS }] });
  cognito.on(CreateUserPoolClientCommand).callsFake(async (input: { ClientName: string }) => {
    n += 1;
    return { UserPoolClient: { ClientId: `cognitoclient${n}`, ClientSecret: `secret-${n}`, ClientName: input.ClientName } };
  });
  cognito.on(DeleteUserPoolClientCommand).resolves({});
  conn = {
    store: db.stores.credentials,
    urls: { base_url: 'https://core.example', console_url: 'https://console.example', auth_url: 'https://auth.example' },
    provisioner: cognitoProvisioner(new CognitoIdentityProviderClient({ region: 'eu-west-1' }), 'eu-west-1_Pool'),
    close: async () => {},
  };
});

describe('admin CLI, deployed mode', () => {
  it('reads the stack outputs it needs', async () => {
    const o = await readStackOutputs(new CloudFormationClient({ region: 'eu-west-1' }), 'RecSearch');
    expect(o).toEqual({
      baseUrl: OUTPUTS[0]?.OutputValue,
      consoleUrl: OUTPUTS[1]?.OutputValue,
      authUrl: OUTPUTS[2]?.OutputValue,
      userPoolId: 'eu-west-1_Pool',
      tableName: 'RecSearch-Table',
    });
    cfn.on(DescribeStacksCommand).resolves({ Stacks: [{ StackName: 'Other', CreationTime: new Date(), StackStatus: 'CREATE_COMPLETE', Outputs: [] }] });
    await expect(readStackOutputs(new CloudFormationClient({ region: 'eu-west-1' }), 'Other')).rejects.toThrow(/no output BaseUrl/);
  });

  it('onboards a tenant with a Cognito client-credentials app client and the tenant mapping record', async () => {
    const r = await runAdminCommand(conn, { command: ['tenant', 'create', 'acme'] });
    const creds = r.json as Record<string, string>;
    expect(creds).toMatchObject({ tenant: 'acme', client_id: 'cognitoclient1', client_secret: 'secret-1', base_url: 'https://core.example', auth_url: 'https://auth.example' });
    expect(creds.api_key).toMatch(/^svc_[a-z0-9]{8}_/);
    const calls = cognito.commandCalls(CreateUserPoolClientCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toMatchObject({
      UserPoolId: 'eu-west-1_Pool',
      GenerateSecret: true,
      AllowedOAuthFlows: ['client_credentials'],
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthScopes: ['service-api/read', 'service-api/write'],
      AccessTokenValidity: 60,
      TokenValidityUnits: { AccessToken: 'minutes' },
    });
    // The Core handlers map the token's client_id to the tenant through this record.
    expect(await db.stores.credentials.getClient('cognitoclient1')).toMatchObject({ tenant: 'acme', scopes: ['service-api/read', 'service-api/write'] });
  });

  it('creates a client with the requested scopes and deletes it from Cognito too', async () => {
    await runAdminCommand(conn, { command: ['tenant', 'create', 'beta'] });
    const c = (await runAdminCommand(conn, { command: ['client', 'create'], tenant: 'beta', name: 'reader', scopes: 'service-api/read' })).json as { client_id: string };
    expect(cognito.commandCalls(CreateUserPoolClientCommand)[1]?.args[0].input.AllowedOAuthScopes).toEqual(['service-api/read']);
    await runAdminCommand(conn, { command: ['client', 'delete', c.client_id], tenant: 'beta' });
    expect(cognito.commandCalls(DeleteUserPoolClientCommand)[0]?.args[0].input).toEqual({ UserPoolId: 'eu-west-1_Pool', ClientId: c.client_id });
    expect(await db.stores.credentials.getClient(c.client_id)).toBeUndefined();
  });

  it('keeps API keys in the table as locally', async () => {
    await runAdminCommand(conn, { command: ['tenant', 'create', 'gamma'] });
    const k = (await runAdminCommand(conn, { command: ['api-key', 'create'], tenant: 'gamma', name: 'ops', scopes: 'items,events' })).json as { id: string; scopes: string[] };
    expect(k.scopes).toEqual(['items', 'events']);
    expect((await runAdminCommand(conn, { command: ['api-key', 'list'], tenant: 'gamma' })).text).toContain(k.id);
    await runAdminCommand(conn, { command: ['api-key', 'revoke', k.id], tenant: 'gamma' });
    expect(await db.stores.credentials.getApiKey(k.id)).toBeUndefined();
  });
});

describe('client creation failure', () => {
  it('removes the Cognito app client again when the mapping record cannot be stored', async () => {
    const failing = {
      ...conn,
      store: {
        ...db.stores.credentials,
        putClient: async () => {
          throw new Error('table unavailable');
        },
      },
    };
    await runAdminCommand(failing, { command: ['tenant', 'create', 'delta'] }).catch(() => undefined);
    await expect(runAdminCommand(failing, { command: ['client', 'create'], tenant: 'delta', name: 'x' })).rejects.toThrow(/table unavailable/);
    const created = cognito.commandCalls(CreateUserPoolClientCommand).at(-1)?.returnValue;
    const createdId = (await created)?.UserPoolClient?.ClientId;
    expect(cognito.commandCalls(DeleteUserPoolClientCommand).map((c) => c.args[0].input.ClientId)).toContain(createdId);
  });
});
