import type { CoreScope, PlatformScope } from '../routes.ts';
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
  putClient(c: ClientRecord): Promise<void>;
  getClient(clientId: string): Promise<ClientRecord | undefined>;
  listClients(tenant: string, limit: number, cursor?: string): Promise<Page<ClientRecord> & { cursor: string | null }>;
  deleteClient(tenant: string, clientId: string): Promise<boolean>;
  putApiKey(k: ApiKeyRecord): Promise<void>;
  getApiKey(prefix: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(tenant: string, limit: number, cursor?: string): Promise<Page<ApiKeyRecord> & { cursor: string | null }>;
  deleteApiKey(tenant: string, id: string): Promise<boolean>;
}
