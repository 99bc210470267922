import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, ValidationError } from '../errors.ts';
import type { ApiKeyRecord, ClientRecord, CredentialStore, TenantRecord } from '../domain/credentials-types.ts';
import type { TableRef } from './client.ts';
import { keys } from './keys.ts';
import { applied, getRow, queryUpTo, stripKeys, type Row } from './ops.ts';

const encodeCursor = (sk: string) => Buffer.from(sk).toString('base64url');
function decodeCursor(c: string): string {
  const sk = Buffer.from(c, 'base64url').toString();
  if (!/^\d{16}#[A-Za-z0-9_-]+$/.test(sk)) throw new ValidationError('Invalid cursor.', { cursor: ['Not a cursor returned by this API.'] });
  return sk;
}

export function dynamoCredentialStore(t: TableRef): CredentialStore {
  async function putNew(item: Row, conflict: () => Error): Promise<void> {
    if (!(await applied(() => t.doc.send(new PutCommand({ TableName: t.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }))))) throw conflict();
  }
  async function get<T>(key: { pk: string; sk: string }): Promise<T | undefined> {
    // Strongly consistent: a client or key deleted a moment ago must not authenticate (the spec:
    // revocation is immediate), which an eventually consistent read cannot promise on DynamoDB.
    const row = await getRow(t, key, { consistent: true });
    return row ? (stripKeys(row) as T) : undefined;
  }
  async function listOfTenant<T>(pk: string, limit: number, cursor: string | undefined) {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await queryUpTo(
      t,
      {
        IndexName: 'gsi1',
        KeyConditionExpression: `gsi1pk = :pk${after ? ' AND gsi1sk > :after' : ''}`,
        ExpressionAttributeValues: { ':pk': pk, ...(after ? { ':after': after } : {}) },
      },
      limit + 1,
    );
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const last = page[page.length - 1];
    return { rows: page.map((r) => stripKeys(r) as T), hasMore, cursor: hasMore && last ? encodeCursor(String(last.gsi1sk)) : null };
  }
  function deleteOwned(key: { pk: string; sk: string }, tenant: string): Promise<boolean> {
    return applied(() =>
      t.doc.send(
        new DeleteCommand({
          TableName: t.tableName,
          Key: key,
          ConditionExpression: 'attribute_exists(pk) AND #tenant = :tenant',
          ExpressionAttributeNames: { '#tenant': 'tenant' },
          ExpressionAttributeValues: { ':tenant': tenant },
        }),
      ),
    );
  }

  return {
    createTenant: (r: TenantRecord) =>
      putNew({ ...keys.tenant(r.tenant), ...keys.tenantListing(r.tenant), ...r }, () => new ConflictError('tenant_exists', `Tenant ${r.tenant} already exists.`)),
    listTenants: async () => {
      const rows = await queryUpTo(t, { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': keys.tenantsPk } }, 100_000);
      return rows.map((r) => String(r.tenant));
    },
    getTenant: (tenant: string) => get<TenantRecord>(keys.tenant(tenant)),

    putClient: (c: ClientRecord) =>
      putNew(
        { ...keys.client(c.client_id), ...keys.clientOfTenant(c.tenant, c.created, c.client_id), ...c },
        () => new ConflictError('client_exists', `Client ${c.client_id} already exists.`),
      ),
    getClient: (clientId: string) => get<ClientRecord>(keys.client(clientId)),
    listClients: (tenant: string, limit: number, cursor?: string) => listOfTenant<ClientRecord>(keys.clientsOfTenantPk(tenant), limit, cursor),
    deleteClient: (tenant: string, clientId: string) => deleteOwned(keys.client(clientId), tenant),

    putApiKey: (k: ApiKeyRecord) =>
      putNew(
        { ...keys.apiKey(k.id), ...keys.apiKeyOfTenant(k.tenant, k.created, k.id), ...k },
        () => new ConflictError('api_key_exists', `API key ${k.id} already exists.`),
      ),
    getApiKey: (prefix: string) => get<ApiKeyRecord>(keys.apiKey(prefix)),
    listApiKeys: (tenant: string, limit: number, cursor?: string) => listOfTenant<ApiKeyRecord>(keys.apiKeysOfTenantPk(tenant), limit, cursor),
    deleteApiKey: (tenant: string, id: string) => deleteOwned(keys.apiKey(id), tenant),
  };
}
