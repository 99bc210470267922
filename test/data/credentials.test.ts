import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { newClientSecret, sha256Hex } from '../../shared/auth/secrets.ts';
import { authenticateApiKey, createApiKey, createClient, NEW_ID_TRIES, type ClientProvisioner } from '../../shared/domain/credentials.ts';
import { Conflict as ConflictError, InvalidInput } from '../../shared/domain/errors.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

// API key prefixes a test makes newApiKey give next (a collision injected); random ones once they are used.
const forcedPrefixes = vi.hoisted((): string[] => []);
vi.mock('../../shared/auth/secrets.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../shared/auth/secrets.ts')>();
  return {
    ...real,
    newApiKey: () => {
      const forced = forcedPrefixes.shift();
      const k = real.newApiKey();
      return forced === undefined ? k : { prefix: forced, key: k.key.replace(`svc_${k.prefix}_`, `svc_${forced}_`) };
    },
  };
});

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

describe('credential store', () => {
  it('creates a tenant once', async () => {
    const s = db.stores.credentials;
    await s.createTenant({ tenant: 'a', name: 'A', created: 1 });
    await expect(s.createTenant({ tenant: 'a', name: 'A', created: 2 })).rejects.toBeInstanceOf(ConflictError);
    expect(await s.getTenant('a')).toEqual({ tenant: 'a', name: 'A', created: 1 });
  });

  it('stores clients, lists them per tenant with a cursor, deletes only the owner', async () => {
    const s = db.stores.credentials;
    for (let i = 0; i < 5; i++) {
      await s.putClient({ client_id: `c${i}`, tenant: i < 4 ? 'a' : 'b', name: `n${i}`, scopes: ['service-api/read'], secret_hash: 'ab', created: 10 + i });
    }
    expect((await s.getClient('c1'))?.tenant).toBe('a');
    const p1 = await s.listClients('a', 3);
    expect(p1.rows.map((c) => c.client_id)).toEqual(['c0', 'c1', 'c2']);
    expect(p1.hasMore).toBe(true);
    const p2 = await s.listClients('a', 3, p1.cursor as string);
    expect(p2.rows.map((c) => c.client_id)).toEqual(['c3']);
    expect(p2.cursor).toBeNull();
    expect(await s.deleteClient('b', 'c0')).toBe(false);
    expect(await s.deleteClient('a', 'c0')).toBe(true);
    expect(await s.getClient('c0')).toBeUndefined();
  });

  it("refuses another tenant's cursor, and one of the other list, rather than read it as a time in this tenant's list", async () => {
    const s = db.stores.credentials;
    // Tenant x's clients were created after y's first and before its second (and x has a key).
    for (const [id, tenant, created] of [
      ['y0', 'y', 50],
      ['x0', 'x', 100],
      ['x1', 'x', 101],
      ['y1', 'y', 200],
    ] as const) {
      await s.putClient({ client_id: id, tenant, name: id, scopes: ['service-api/read'], secret_hash: 'ab', created });
    }
    await s.putApiKey({ id: 'xkey0001', tenant: 'x', name: 'k', environment: 'dev', scopes: ['admin'], key_hash: 'ff', created: 100 });
    await s.putApiKey({ id: 'xkey0002', tenant: 'x', name: 'k', environment: 'dev', scopes: ['admin'], key_hash: 'ff', created: 300 });
    const xs = await s.listClients('x', 1);
    expect(xs.cursor).toEqual(expect.any(String));
    // Read as a time, x's cursor answered y's clients after it: y1, y0 skipped.
    await expect(s.listClients('y', 10, xs.cursor as string)).rejects.toMatchObject({ fieldErrors: { cursor: [expect.stringMatching(/another tenant's/)] } });
    await expect(s.listApiKeys('x', 10, xs.cursor as string)).rejects.toBeInstanceOf(InvalidInput);
    const keys = await s.listApiKeys('x', 1);
    await expect(s.listClients('x', 10, keys.cursor as string)).rejects.toBeInstanceOf(InvalidInput);
    // Its own list pages on.
    expect((await s.listClients('x', 10, xs.cursor as string)).rows.map((c) => c.client_id)).toEqual(['x1']);
    expect((await s.listApiKeys('x', 10, keys.cursor as string)).rows.map((k) => k.id)).toEqual(['xkey0002']);
  });

  it('stores API keys by prefix and deletes only the owner', async () => {
    const s = db.stores.credentials;
    await s.putApiKey({ id: 'abcd1234', tenant: 'a', name: 'k', environment: 'dev', scopes: ['admin'], key_hash: 'ff', created: 1 });
    await expect(s.putApiKey({ id: 'abcd1234', tenant: 'b', name: 'k', environment: 'dev', scopes: ['admin'], key_hash: 'ee', created: 1 })).rejects.toBeInstanceOf(ConflictError);
    expect((await s.listApiKeys('a', 10)).rows.map((k) => k.id)).toEqual(['abcd1234']);
    expect(await s.deleteApiKey('b', 'abcd1234')).toBe(false);
    expect(await s.deleteApiKey('a', 'abcd1234')).toBe(true);
    expect(await s.getApiKey('abcd1234')).toBeUndefined();
  });

  it('writes a credential and its audit entry together: a write refused leaves no entry', async () => {
    const s = db.stores.credentials;
    const trail = async (resource: string) => (await db.stores.console.auditPage('audited', resource, { limit: 10 })).rows.map((e) => [e.action, e.actor]);
    const entry = async (action: 'create' | 'delete', resource: string, actor: string) => ({ id: await s.auditId('audited'), at: 1, actor, action, resource, before: null, after: null });
    const client = { client_id: 'audited1', tenant: 'audited', name: 'n', scopes: ['service-api/read' as const], secret_hash: 'ab', created: 1 };
    await s.putClient(client, await entry('create', 'clients/audited1', 'first'));
    // The same id again: Conflict, and no second entry.
    await expect(s.putClient(client, await entry('create', 'clients/audited1', 'again'))).rejects.toBeInstanceOf(ConflictError);
    // Another tenant deleting it: false, and no entry.
    expect(await s.deleteClient('other', 'audited1', await entry('delete', 'clients/audited1', 'other'))).toBe(false);
    expect(await s.deleteClient('audited', 'audited1', await entry('delete', 'clients/audited1', 'owner'))).toBe(true);
    expect(await trail('clients/audited1')).toEqual([
      ['delete', 'owner'],
      ['create', 'first'],
    ]);
    const key = { id: 'audit001', tenant: 'audited', name: 'k', environment: 'dev', scopes: ['admin' as const], key_hash: 'ff', created: 1 };
    await s.putApiKey(key, await entry('create', 'api-keys/audit001', 'first'));
    expect(await s.deleteApiKey('other', 'audit001', await entry('delete', 'api-keys/audit001', 'other'))).toBe(false);
    expect(await s.deleteApiKey('audited', 'audit001', await entry('delete', 'api-keys/audit001', 'owner'))).toBe(true);
    expect(await trail('api-keys/audit001')).toEqual([
      ['delete', 'owner'],
      ['create', 'first'],
    ]);
  });
});

describe('credential reads', () => {
  it('are strongly consistent, so a client or key deleted a moment ago no longer authenticates on DynamoDB', async () => {
    const { dynamoCredentialStore } = await import('../../shared/data/credentials.ts');
    const sent: { ConsistentRead?: boolean | undefined }[] = [];
    const signed = {
      getItem: async (input: { ConsistentRead?: boolean | undefined }) => {
        sent.push(input);
        return {};
      },
      query: async () => ({ Items: [] }),
    };
    const s = dynamoCredentialStore({ ...db.table, signed: signed as unknown as typeof db.table.signed });
    expect(await s.getClient('gone')).toBeUndefined();
    expect(await s.getApiKey('gone')).toBeUndefined();
    expect(await s.getTenant('gone')).toBeUndefined();
    expect(sent.map((i) => i.ConsistentRead)).toEqual([true, true, true]);
  });

  it('keeps only a SHA-256 hash of an API key and of a client secret, never the key or secret itself', async () => {
    const s = db.stores.credentials;
    const created = await createApiKey(s, 'hashes', { name: 'ci', environment: 'dev', scopes: ['admin'] });
    const client = await createClient(s, 'hashes', { name: 'backend', scopes: ['service-api/read'] });
    const rows = JSON.stringify((await db.table.doc.send(new ScanCommand({ TableName: db.table.tableName }))).Items ?? []);
    expect(rows).not.toContain(created.key);
    // The secret is all after `svc_<prefix>_`: base64url may itself hold '_', so no split.
    const secret = created.key.slice(`svc_${created.prefix}_`.length);
    expect(secret).toHaveLength(43);
    expect(rows).not.toContain(secret);
    expect(rows).not.toContain(client.client_secret);
    expect(rows).toContain(sha256Hex(created.key));
    expect(rows).toContain(sha256Hex(client.client_secret));
    // The key still authenticates from its hash alone.
    expect(await authenticateApiKey(s, created.key)).toMatchObject({ tenant: 'hashes', id: created.prefix });
  });
});

describe("a new credential's random id that a stored one already has (no fault of the request)", () => {
  it('creates the API key under a new prefix, not 409 api_key_exists; the stored key is left as it was', async () => {
    const s = db.stores.credentials;
    const taken = { id: 'taken001', tenant: 'other', name: 'theirs', environment: 'dev', scopes: ['admin' as const], key_hash: 'ff', created: 1 };
    await s.putApiKey(taken);
    forcedPrefixes.push('taken001', 'taken001');
    const created = await createApiKey(s, 'collide', { name: 'mine', environment: 'dev', scopes: ['admin'] });
    expect(forcedPrefixes).toEqual([]);
    expect(created.prefix).not.toBe('taken001');
    expect(created.key.startsWith(`svc_${created.prefix}_`)).toBe(true);
    expect(await authenticateApiKey(s, created.key)).toMatchObject({ tenant: 'collide', name: 'mine' });
    expect(await s.getApiKey('taken001')).toEqual(taken);
    // One key, one audit entry (of the key written), for the tenant.
    expect((await s.listApiKeys('collide', 10)).rows.map((k) => k.id)).toEqual([created.prefix]);
    expect((await db.stores.console.auditPage('collide', `api-keys/${created.prefix}`, { limit: 10 })).rows.map((e) => e.action)).toEqual(['create']);
    expect((await db.stores.console.auditPage('collide', 'api-keys/taken001', { limit: 10 })).rows).toEqual([]);
  });

  it('creates the client under a new id, the colliding app client removed; the stored client is left as it was', async () => {
    const s = db.stores.credentials;
    const taken = { client_id: 'takenclient', tenant: 'other', name: 'theirs', scopes: ['service-api/read' as const], secret_hash: 'ab', created: 1 };
    await s.putClient(taken);
    const ids = ['takenclient', 'freshclient'];
    const provisioned: string[] = [];
    const removed: string[] = [];
    const provisioner: ClientProvisioner = {
      provision: async () => {
        const clientId = ids.shift() as string;
        provisioned.push(clientId);
        return { clientId, clientSecret: newClientSecret() };
      },
      deprovision: async (id) => {
        removed.push(id);
      },
    };
    const created = await createClient(s, 'collide', { name: 'mine', scopes: ['service-api/read'] }, provisioner);
    expect(created.client_id).toBe('freshclient');
    expect([provisioned, removed]).toEqual([['takenclient', 'freshclient'], ['takenclient']]);
    expect(await s.getClient('takenclient')).toEqual(taken);
    expect(await s.getClient('freshclient')).toMatchObject({ tenant: 'collide', name: 'mine', secret_hash: sha256Hex(created.client_secret) });
  });

  it(`gives up after ${NEW_ID_TRIES} taken ids in a row (ids that are not random: a fault of the service), with no 409`, async () => {
    const s = db.stores.credentials;
    await s.putApiKey({ id: 'taken002', tenant: 'other', name: 'theirs', environment: 'dev', scopes: ['admin'], key_hash: 'ff', created: 1 });
    forcedPrefixes.push(...Array.from({ length: NEW_ID_TRIES }, () => 'taken002'));
    const failed = await createApiKey(s, 'collide2', { name: 'mine', environment: 'dev', scopes: ['admin'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(forcedPrefixes).toEqual([]);
    expect(failed).toBeInstanceOf(Error);
    expect(failed).not.toBeInstanceOf(ConflictError);
    expect((await s.listApiKeys('collide2', 10)).rows).toEqual([]);
  });
});
