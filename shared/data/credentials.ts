import type { AuditEntry } from '../domain/console-records.ts';
import type { ApiKeyRecord, ClientRecord, CredentialStore, TenantRecord } from '../domain/credentials-types.ts';
import { Conflict } from '../domain/errors.ts';
import { scopedCursor } from './cursor.ts';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { writtenWithEntry } from './audited-write.ts';
import { ApiKey, Client, Tenant } from './entities.ts';
import type { QueryInput } from './entity.ts';
import { applied, getRow, isNew, isStored, queryUpTo, stripKeys, type Row } from './ops.ts';

/** A tenant's clients and API keys are listed on their `ofTenant` index, by creation time and id. */
const LISTING_SK = Client.indexes.ofTenant.skAttr;

/**
 * A list's cursor: its last row's listing key (creation time and id), naming the tenant and the list
 * it is of: another tenant's cursor (or one of the other list) is refused, not read as a time in this
 * tenant's list.
 */
const cursors = scopedCursor(/^\d{16}#[A-Za-z0-9_-]+$/, "This cursor is from another tenant's or another kind's list.");
type Listing = 'clients' | 'api_keys';

export function dynamoCredentialStore(t: TableRef): CredentialStore {
  async function putNew(tenant: string, item: Row, conflict: () => Error, entry?: AuditEntry): Promise<void> {
    if (!(await applied(() => writtenWithEntry(t, tenant, { put: item, when: isNew }, entry)))) throw conflict();
  }
  async function get<T>(key: { pk: string; sk: string }): Promise<T | undefined> {
    // Strongly consistent: a client or key deleted a moment ago must not authenticate (the spec:
    // revocation is immediate), which an eventually consistent read cannot promise on DynamoDB.
    const row = await getRow(t, key, { consistent: true });
    return row ? (stripKeys(row) as T) : undefined;
  }
  async function listOfTenant<T>(tenant: string, list: Listing, listing: (after: { gt: string } | undefined) => QueryInput, limit: number, cursor: string | undefined) {
    const after = cursor === undefined ? undefined : cursors.decode(cursor, [tenant, list]);
    const rows = await queryUpTo(t, listing(after ? { gt: after } : undefined), limit + 1);
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const last = page[page.length - 1];
    return { rows: page.map((r) => stripKeys(r) as T), hasMore, cursor: hasMore && last ? cursors.encode(String(last[LISTING_SK]), [tenant, list]) : null };
  }
  function deleteOwned(key: { pk: string; sk: string }, tenant: string, entry: AuditEntry | undefined): Promise<boolean> {
    return applied(() => writtenWithEntry(t, tenant, { remove: key, when: (x) => x.and(isStored(x), x.eq('tenant', tenant)) }, entry));
  }

  return {
    createTenant: (r: TenantRecord) => putNew(r.tenant, { ...Tenant.keys({ tenant: r.tenant }), ...r }, () => new Conflict('tenant_exists', `Tenant ${r.tenant} already exists.`)),
    listTenants: async () => {
      const rows = await queryUpTo(t, Tenant.indexes.all.query({}), 100_000);
      return rows.map((r) => String(r.tenant));
    },
    getTenant: (tenant: string) => get<TenantRecord>(Tenant.key({ tenant })),

    // The control records' counter (shared/data/console.ts): one trail, its ids in the order taken.
    auditId: (tenant: string) => allocateIds(t, tenant, 'audit', 1),

    putClient: (c: ClientRecord, entry?: AuditEntry) =>
      putNew(c.tenant, { ...Client.keys({ client_id: c.client_id, tenant: c.tenant, created: c.created }), ...c }, () => new Conflict('client_exists', `Client ${c.client_id} already exists.`), entry),
    getClient: (clientId: string) => get<ClientRecord>(Client.key({ client_id: clientId })),
    listClients: (tenant: string, limit: number, cursor?: string) => listOfTenant<ClientRecord>(tenant, 'clients', (after) => Client.indexes.ofTenant.query({ tenant }, after), limit, cursor),
    deleteClient: (tenant: string, clientId: string, entry?: AuditEntry) => deleteOwned(Client.key({ client_id: clientId }), tenant, entry),

    putApiKey: (k: ApiKeyRecord, entry?: AuditEntry) =>
      putNew(k.tenant, { ...ApiKey.keys({ id: k.id, tenant: k.tenant, created: k.created }), ...k }, () => new Conflict('api_key_exists', `API key ${k.id} already exists.`), entry),
    getApiKey: (prefix: string) => get<ApiKeyRecord>(ApiKey.key({ id: prefix })),
    listApiKeys: (tenant: string, limit: number, cursor?: string) => listOfTenant<ApiKeyRecord>(tenant, 'api_keys', (after) => ApiKey.indexes.ofTenant.query({ tenant }, after), limit, cursor),
    deleteApiKey: (tenant: string, id: string, entry?: AuditEntry) => deleteOwned(ApiKey.key({ id }), tenant, entry),
  };
}
