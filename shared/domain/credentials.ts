import { documentAs, documentChecks } from '../schemas/doc.ts';
import * as z from 'zod/mini';
import { API_KEY_PATTERN, matchesHash, newApiKey, newClientId, newClientSecret, sha256Hex } from '../auth/secrets.ts';
import { nowSeconds } from '../clock.ts';
import { displayName, intParam, oneLine } from '../schemas/common.ts';
import { CORE_SCOPES, PLATFORM_SCOPES, type CoreScope, type PlatformScope } from '../routes.ts';
import type { AuditEntry } from './console-records.ts';
import type { ApiKeyRecord, ClientRecord, CredentialStore } from './credentials-types.ts';
import { Conflict, InvalidInput, NotFound, Unauthenticated } from './errors.ts';
import { platformList } from './present.ts';
import { logger } from '../observability.ts';

export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A scope named twice is a mistake in the request, not a second grant: 400. */
const onceEach = z.refine<string[]>((v) => new Set(v).size === v.length, 'name each scope once');

export const createClientBody = z.strictObject({
  name: displayName,
  scopes: z._default(documentChecks(z.array(z.enum(CORE_SCOPES as [CoreScope, ...CoreScope[]])).check(z.minLength(1), onceEach), { uniqueItems: true }), [...CORE_SCOPES]),
});
export type CreateClientBody = z.output<typeof createClientBody>;

export const createApiKeyBody = z.strictObject({
  name: displayName,
  environment: z._default(oneLine('environment', 64), 'production'),
  scopes: documentChecks(z.array(z.enum(PLATFORM_SCOPES as [PlatformScope, ...PlatformScope[]])).check(z.minLength(1), onceEach), { uniqueItems: true }),
});
export type CreateApiKeyBody = z.output<typeof createApiKeyBody>;

export const platformListQuery = z.strictObject({
  limit: documentAs(z._default(z.optional(intParam(1, 100)), 100), z._default(z.optional(z.int().check(z.gte(1), z.lte(100))), 100)),
  /** The `next_cursor` of the previous page, as the other Platform lists and the spec's list envelope take it. */
  starting_after: z.optional(z.string().check(z.minLength(1), z.maxLength(512))),
  /** The same, under the name these two lists first took it by (still accepted). */
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(512))),
});
export type PlatformListQuery = z.output<typeof platformListQuery>;

/** The page a list query asks for: `starting_after` or `cursor` (400 when both are sent and differ). */
function pageAfter(q: PlatformListQuery): string | undefined {
  if (q.starting_after !== undefined && q.cursor !== undefined && q.starting_after !== q.cursor) {
    throw new InvalidInput('Invalid query parameters.', { starting_after: ['send starting_after or cursor, not two different cursors'] });
  }
  return q.starting_after ?? q.cursor;
}

/** A page of a list, its bad cursor's 400 naming the parameter the caller sent it by (the store's says `cursor`). */
async function listPage<T>(q: PlatformListQuery, read: (after: string | undefined) => Promise<T>): Promise<T> {
  try {
    return await read(pageAfter(q));
  } catch (e) {
    const why = e instanceof InvalidInput ? e.fieldErrors?.cursor : undefined;
    if (e instanceof InvalidInput && why && q.cursor === undefined) throw new InvalidInput(e.message, { starting_after: why });
    throw e;
  }
}

const clientView = (c: ClientRecord) => ({ client_id: c.client_id, name: c.name, scopes: c.scopes, created: c.created });
const apiKeyView = (k: ApiKeyRecord) => ({
  id: k.id,
  prefix: k.id,
  name: k.name,
  environment: k.environment,
  scopes: k.scopes,
  created: k.created,
});

/**
 * The audit trail's entry of a credential's create or delete (resource `clients/<client_id>` or
 * `api-keys/<prefix>`; `actor`: the API key's prefix or the console user, null when none, as the
 * admin CLI's): the credential as its list shows it, never its secret, key or their hashes.
 * Written in one transaction with the credential's write. Until 2026-12-07 credentials, which
 * grant access to the tenant's data, left no entry.
 */
async function credentialEntry(store: CredentialStore, tenant: string, actor: string | undefined, action: 'create' | 'delete', resource: string, view: object): Promise<AuditEntry> {
  const [before, after] = action === 'create' ? [null, view] : [view, null];
  return { id: await store.auditId(tenant), at: nowSeconds(), actor: actor ?? null, action, resource, before, after };
}

/**
 * Where OAuth clients come from: locally this service generates id and secret; deployed,
 * a Cognito app client (see the admin CLI's deployed mode).
 */
export interface ClientProvisioner {
  provision(name: string, scopes: CoreScope[]): Promise<{ clientId: string; clientSecret: string }>;
  deprovision(clientId: string): Promise<void>;
}

export const localProvisioner: ClientProvisioner = {
  provision: async () => ({ clientId: newClientId(), clientSecret: newClientSecret() }),
  deprovision: async () => {},
};

const badTenantId = () => new InvalidInput('Tenant ids are 1-63 lowercase letters, digits or dashes.');

/** A tenant that exists (operators name it: the admin CLI's --tenant): its id, or why not. */
export async function existingTenant(store: CredentialStore, tenant: string): Promise<string> {
  if (!TENANT_PATTERN.test(tenant)) throw badTenantId();
  if (!(await store.getTenant(tenant))) throw new NotFound('tenant_not_found', `No tenant ${tenant}: create it first (tenant create ${tenant}).`);
  return tenant;
}

export async function createTenant(store: CredentialStore, tenant: string, name = tenant) {
  if (!TENANT_PATTERN.test(tenant)) throw badTenantId();
  const rec = { tenant, name, created: nowSeconds() };
  await store.createTenant(rec);
  return rec;
}

/**
 * Tries of a new client's or API key's random id: one a stored credential already has (the
 * store's `client_exists` / `api_key_exists`) is no fault of the request, which is written under a
 * new id. Until 2026-12-08 it was answered an undocumented 409 the caller could not fix. An 8-letter
 * key prefix (36^8 of them) collides this many times in a row only when the ids are not random.
 */
export const NEW_ID_TRIES = 5;

/**
 * `attempt` (which makes a new random id and writes under it) until its write is not refused for
 * the id taken (`code`): at most NEW_ID_TRIES times, then thrown as a fault of the service (500).
 */
async function underFreshId<T>(code: 'client_exists' | 'api_key_exists', attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof Conflict && e.code === code)) throw e;
      if (n >= NEW_ID_TRIES) throw new Error(`${NEW_ID_TRIES} random ids in a row were taken (${code}): the id generator is not random`, { cause: e });
    }
  }
}

export async function createClient(store: CredentialStore, tenant: string, body: CreateClientBody, provisioner = localProvisioner, actor?: string) {
  return underFreshId('client_exists', async () => {
    const { clientId, clientSecret } = await provisioner.provision(body.name, body.scopes);
    const rec: ClientRecord = {
      client_id: clientId,
      tenant,
      name: body.name,
      scopes: body.scopes,
      secret_hash: sha256Hex(clientSecret),
      created: nowSeconds(),
    };
    try {
      await store.putClient(rec, await credentialEntry(store, tenant, actor, 'create', `clients/${clientId}`, clientView(rec)));
    } catch (e) {
      // No mapping record, no client: an app client nobody can use must not linger in Cognito. If
      // it cannot be removed either, say which, for an operator to delete (the request fails anyway).
      await provisioner
        .deprovision(clientId)
        .catch((cause: unknown) => logger.error('an app client whose record could not be stored was not removed either', { client_id: clientId, cause: String(cause) }));
      throw e;
    }
    return { ...clientView(rec), client_secret: clientSecret };
  });
}

export async function listClients(store: CredentialStore, tenant: string, q: PlatformListQuery) {
  const page = await listPage(q, (after) => store.listClients(tenant, q.limit, after));
  return platformList(page.rows.map(clientView), page);
}

/**
 * Deletes a client: its app client first (deployed: Cognito's), then its record, so a failure
 * between the two leaves the record for a retry to delete (the app client already gone is no
 * error). Until 2026-12-05 the record went first: a failed Cognito delete answered 500, its retry
 * 404, and the app client stayed (its tokens refused: the record is read on every request).
 */
export async function deleteClient(store: CredentialStore, tenant: string, clientId: string, provisioner = localProvisioner, actor?: string) {
  const gone = () => new NotFound('client_not_found', `No client ${clientId}.`);
  const rec = await store.getClient(clientId);
  if (rec?.tenant !== tenant) throw gone();
  await provisioner.deprovision(clientId);
  if (!(await store.deleteClient(tenant, clientId, await credentialEntry(store, tenant, actor, 'delete', `clients/${clientId}`, clientView(rec))))) throw gone();
}

export async function createApiKey(store: CredentialStore, tenant: string, body: CreateApiKeyBody, actor?: string) {
  return underFreshId('api_key_exists', async () => {
    const { prefix, key } = newApiKey();
    const rec: ApiKeyRecord = {
      id: prefix,
      tenant,
      name: body.name,
      environment: body.environment,
      scopes: body.scopes,
      key_hash: sha256Hex(key),
      created: nowSeconds(),
    };
    await store.putApiKey(rec, await credentialEntry(store, tenant, actor, 'create', `api-keys/${rec.id}`, apiKeyView(rec)));
    return { ...apiKeyView(rec), key };
  });
}

export async function listApiKeys(store: CredentialStore, tenant: string, q: PlatformListQuery) {
  const page = await listPage(q, (after) => store.listApiKeys(tenant, q.limit, after));
  return platformList(page.rows.map(apiKeyView), page);
}

export async function revokeApiKey(store: CredentialStore, tenant: string, id: string, actor?: string) {
  const gone = () => new NotFound('api_key_not_found', `No API key ${id}.`);
  const rec = await store.getApiKey(id);
  if (rec?.tenant !== tenant) throw gone();
  if (!(await store.deleteApiKey(tenant, id, await credentialEntry(store, tenant, actor, 'delete', `api-keys/${id}`, apiKeyView(rec))))) throw gone();
}

/** Resolves a presented Platform API key; throws 401 unless it is live. */
export async function authenticateApiKey(store: CredentialStore, presented: string): Promise<ApiKeyRecord> {
  const m = API_KEY_PATTERN.exec(presented);
  const rec = m?.[1] ? await store.getApiKey(m[1]) : undefined;
  if (!rec || !matchesHash(presented, rec.key_hash)) throw new Unauthenticated('Invalid API key.');
  return rec;
}

/** Resolves a client by id and secret for the token endpoint; undefined when they do not match. */
export async function authenticateClient(store: CredentialStore, clientId: string, secret: string): Promise<ClientRecord | undefined> {
  const rec = await store.getClient(clientId);
  return rec && matchesHash(secret, rec.secret_hash) ? rec : undefined;
}

/** The URLs a tenant's applications use: one host locally, three on AWS. */
export interface ServiceUrls {
  base_url: string;
  console_url: string;
  auth_url: string;
}

/** What onboarding hands over once, in the shape of the local `credentials.json`. */
export interface TenantCredentials extends ServiceUrls {
  tenant: string;
  client_id: string;
  client_secret: string;
  api_key: string;
}

/** A new tenant with a read+write OAuth client and an admin Platform API key. */
export async function onboardTenant(store: CredentialStore, tenant: string, urls: ServiceUrls, provisioner = localProvisioner): Promise<TenantCredentials> {
  await createTenant(store, tenant);
  const client = await createClient(store, tenant, { name: `${tenant} default client`, scopes: [...CORE_SCOPES] }, provisioner);
  const key = await createApiKey(store, tenant, { name: `${tenant} admin key`, environment: 'development', scopes: ['admin'] });
  return { tenant, ...urls, client_id: client.client_id, client_secret: client.client_secret, api_key: key.key };
}
