import type { CoreScope, PlatformScope } from '../routes.ts';
import type { AuditEntry } from './console-records.ts';
import type { Page } from './types.ts';

export interface TenantRecord {
  tenant: string;
  name: string;
  created: number;
}

export interface ClientRecord {
  client_id: string;
  tenant: string;
  name: string;
  scopes: CoreScope[];
  /** hex SHA-256 of the secret; the secret itself is never stored. */
  secret_hash: string;
  created: number;
}

export interface ApiKeyRecord {
  /** The key's 8-character prefix doubles as its id. */
  id: string;
  tenant: string;
  name: string;
  environment: string;
  scopes: PlatformScope[];
  /** hex SHA-256 of the full key. */
  key_hash: string;
  created: number;
}

export interface CredentialStore {
  createTenant(t: TenantRecord): Promise<void>;
  getTenant(tenant: string): Promise<TenantRecord | undefined>;
  /** Every tenant id (maintenance jobs only). */
  listTenants(): Promise<string[]>;
  /** An id of the tenant's audit trail (shared with the control records' entries). */
  auditId(tenant: string): Promise<number>;
  /** Stores a new client (Conflict when its id is taken); with `entry`, its audit entry in the same transaction. */
  putClient(c: ClientRecord, entry?: AuditEntry): Promise<void>;
  getClient(clientId: string): Promise<ClientRecord | undefined>;
  listClients(tenant: string, limit: number, cursor?: string): Promise<Page<ClientRecord> & { cursor: string | null }>;
  /** false when the tenant has no such client; with `entry`, its audit entry is written with the deletion. */
  deleteClient(tenant: string, clientId: string, entry?: AuditEntry): Promise<boolean>;
  /** Stores a new API key (Conflict when its prefix is taken); with `entry`, its audit entry in the same transaction. */
  putApiKey(k: ApiKeyRecord, entry?: AuditEntry): Promise<void>;
  getApiKey(prefix: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(tenant: string, limit: number, cursor?: string): Promise<Page<ApiKeyRecord> & { cursor: string | null }>;
  /** false when the tenant has no such key; with `entry`, its audit entry is written with the deletion. */
  deleteApiKey(tenant: string, id: string, entry?: AuditEntry): Promise<boolean>;
}
