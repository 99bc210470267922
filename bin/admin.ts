/**
 * Admin CLI for tenants and their credentials, against the local stack (running or not).
 *
 *   npm run --silent admin -- tenant create <tenant> --json
 *   npm run admin -- client create --tenant <t> --name <n> [--scopes service-api/read,service-api/write] [--json]
 *   npm run admin -- client list --tenant <t>
 *   npm run admin -- client delete --tenant <t> <client_id>
 *   npm run admin -- api-key create --tenant <t> --name <n> --scopes admin[,events,items,recommendations] [--environment e] [--json]
 *   npm run admin -- api-key list --tenant <t>
 *   npm run admin -- api-key revoke --tenant <t> <id>
 *
 * Settings as for `npm start`: DATA_DIR (default .data), PORT (default 3000).
 */
import { parseArgs } from 'node:util';
import { storesFor } from '../shared/data/index.ts';
import {
  createApiKey, createApiKeyBody, createClient, createClientBody, deleteClient, listApiKeys, listClients, revokeApiKey,
} from '../shared/domain/credentials.ts';
import { ApiError } from '../shared/errors.ts';
import { connectLocal } from '../shared/local/connect.ts';
import { provisionTenant } from '../shared/local/stack.ts';
import { parseOrThrow } from '../shared/schemas/common.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `usage:
  admin tenant create <tenant> [--json]
  admin client create --tenant <t> --name <n> [--scopes s1,s2] [--json]
  admin client list --tenant <t>
  admin client delete --tenant <t> <client_id>
  admin api-key create --tenant <t> --name <n> --scopes admin[,...] [--environment e] [--json]
  admin api-key list --tenant <t>
  admin api-key revoke --tenant <t> <id>`;

class UsageError extends Error {}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'boolean', default: false },
    tenant: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'string' },
    environment: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

function need(v: string | undefined, what: string): string {
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
}

const out = (v: unknown, human: string) => console.log(values.json ? JSON.stringify(v) : human);

async function main(): Promise<void> {
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const [resource, action, arg] = positionals;
  const conn = await connectLocal(process.env.DATA_DIR || '.data', Number(process.env.PORT || 3000));
  try {
    const store = storesFor(conn.table).credentials;
    const tenant = () => need(values.tenant, '--tenant');
    const scopes = () => values.scopes?.split(',').map((s) => s.trim()).filter(Boolean);
    switch (`${resource} ${action}`) {
      case 'tenant create': {
        const c = await provisionTenant(store, need(arg, '<tenant>'), conn.port);
        out(c, `Tenant ${c.tenant} created.\n${JSON.stringify(c, null, 2)}\nThe secret and key are shown only now.`);
        return;
      }
      case 'client create': {
        const body = parseOrThrow(createClientBody, { name: need(values.name, '--name'), ...(values.scopes ? { scopes: scopes() } : {}) }, 'client');
        const c = await createClient(store, tenant(), body);
        out(c, `client_id:     ${c.client_id}\nclient_secret: ${c.client_secret}\n(the secret is shown only now)`);
        return;
      }
      case 'client list': {
        const l = await listClients(store, tenant(), { limit: 100 });
        out(l, l.data.map((c) => `${c.client_id}  ${c.scopes.join(' ')}  ${c.name}`).join('\n') || '(no clients)');
        return;
      }
      case 'client delete':
        await deleteClient(store, tenant(), need(arg, '<client_id>'));
        out({ deleted: arg }, `Client ${arg} deleted; its tokens no longer work.`);
        return;
      case 'api-key create': {
        const body = parseOrThrow(
          createApiKeyBody,
          { name: need(values.name, '--name'), scopes: scopes() ?? [], ...(values.environment ? { environment: values.environment } : {}) },
          'API key',
        );
        const k = await createApiKey(store, tenant(), body);
        out(k, `id:  ${k.id}\nkey: ${k.key}\n(the key is shown only now)`);
        return;
      }
      case 'api-key list': {
        const l = await listApiKeys(store, tenant(), { limit: 100 });
        out(l, l.data.map((k) => `${k.id}  ${k.scopes.join(',')}  ${k.environment}  ${k.name}`).join('\n') || '(no API keys)');
        return;
      }
      case 'api-key revoke':
        await revokeApiKey(store, tenant(), need(arg, '<id>'));
        out({ revoked: arg }, `API key ${arg} revoked.`);
        return;
      default:
        throw new UsageError(`unknown command: ${positionals.join(' ') || '(none)'}`);
    }
  } finally {
    await conn.close();
  }
}

try {
  await main();
} catch (e) {
  if (e instanceof UsageError) console.error(`${e.message}\n${USAGE}`);
  else if (e instanceof ApiError) console.error(`error: ${e.message}${e.details ? ` ${JSON.stringify(e.details.fieldErrors)}` : ''}`);
  else console.error(e);
  process.exitCode = e instanceof UsageError ? 2 : 1;
}
