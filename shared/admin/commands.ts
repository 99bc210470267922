import type { CredentialStore } from '../domain/credentials-types.ts';
import {
  createApiKey,
  createApiKeyBody,
  createClient,
  createClientBody,
  deleteClient,
  existingTenant,
  listApiKeys,
  listClients,
  onboardTenant,
  revokeApiKey,
  type ClientProvisioner,
  type ServiceUrls,
} from '../domain/credentials.ts';
import { parseOrThrow } from '../schemas/common.ts';
import { apiErrorOf } from '../http/error-mapping.ts';

/** Where the admin CLI acts: the local stack, or a deployed stack (DynamoDB + Cognito). */
export interface AdminConnection {
  store: CredentialStore;
  urls: ServiceUrls;
  provisioner: ClientProvisioner;
  close(): Promise<void>;
}

/** A failure an admin command explains in its message alone (no stack trace is printed). */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface AdminArgs {
  command: string[];
  tenant?: string | undefined;
  name?: string | undefined;
  scopes?: string | undefined;
  environment?: string | undefined;
}

export interface AdminResult {
  /** Printed with --json. */
  json: unknown;
  /** Printed otherwise. */
  text: string;
}

function need(v: string | undefined, what: string): string {
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
}

/** Runs one admin command against a connection. */
export async function runAdminCommand(conn: AdminConnection, a: AdminArgs): Promise<AdminResult> {
  // Errors as the API states them (a domain error gets its code, message and details), for the CLI to print.
  return command(conn, a).catch((e: unknown) => {
    throw apiErrorOf(e) ?? e;
  });
}

/** Every page of a Platform list, as one list (the CLI prints them all). */
async function everyPage<T>(page: (cursor: string | undefined) => Promise<{ data: T[]; has_more: boolean; next_cursor: string | null }>): Promise<{ data: T[]; has_more: false; next_cursor: null }> {
  const data: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const p = await page(cursor);
    data.push(...p.data);
    if (!p.has_more || !p.next_cursor) return { data, has_more: false, next_cursor: null };
    cursor = p.next_cursor;
  }
}

async function command(conn: AdminConnection, a: AdminArgs): Promise<AdminResult> {
  const [resource, action, arg] = a.command;
  const { store, provisioner } = conn;
  // The tenant named, checked to exist: a typo would otherwise make clients and keys of a tenant nobody created.
  const tenant = () => existingTenant(store, need(a.tenant, '--tenant'));
  const scopes = () =>
    a.scopes
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  switch (`${resource} ${action}`) {
    case 'tenant create': {
      const c = await onboardTenant(store, need(arg, '<tenant>'), conn.urls, provisioner);
      return { json: c, text: `Tenant ${c.tenant} created.\n${JSON.stringify(c, null, 2)}\nThe secret and key are shown only now.` };
    }
    case 'client create': {
      const body = parseOrThrow(createClientBody, { name: need(a.name, '--name'), ...(a.scopes ? { scopes: scopes() } : {}) }, 'client');
      const c = await createClient(store, await tenant(), body, provisioner);
      return { json: c, text: `client_id:     ${c.client_id}\nclient_secret: ${c.client_secret}\n(the secret is shown only now)` };
    }
    case 'client list': {
      const t = await tenant();
      const l = await everyPage((cursor) => listClients(store, t, { limit: 100, ...(cursor ? { cursor } : {}) }));
      return { json: l, text: l.data.map((c) => `${c.client_id}  ${c.scopes.join(' ')}  ${c.name}`).join('\n') || '(no clients)' };
    }
    case 'client delete': {
      const id = need(arg, '<client_id>');
      await deleteClient(store, await tenant(), id, provisioner);
      return { json: { deleted: id }, text: `Client ${id} deleted; its tokens no longer work.` };
    }
    case 'api-key create': {
      const body = parseOrThrow(createApiKeyBody, { name: need(a.name, '--name'), scopes: scopes() ?? [], ...(a.environment ? { environment: a.environment } : {}) }, 'API key');
      const k = await createApiKey(store, await tenant(), body);
      return { json: k, text: `id:  ${k.id}\nkey: ${k.key}\n(the key is shown only now)` };
    }
    case 'api-key list': {
      const t = await tenant();
      const l = await everyPage((cursor) => listApiKeys(store, t, { limit: 100, ...(cursor ? { cursor } : {}) }));
      return { json: l, text: l.data.map((k) => `${k.id}  ${k.scopes.join(',')}  ${k.environment}  ${k.name}`).join('\n') || '(no API keys)' };
    }
    case 'api-key revoke': {
      const id = need(arg, '<id>');
      await revokeApiKey(store, await tenant(), id);
      return { json: { revoked: id }, text: `API key ${id} revoked.` };
    }
    default:
      throw new UsageError(`unknown command: ${a.command.join(' ') || '(none)'}`);
  }
}
