/**
 * Admin CLI for tenants and their credentials.
 *
 * Local stack (running or not; settings as for `npm start`: DATA_DIR, PORT):
 *   npm run --silent admin -- tenant create <tenant> --json
 * Deployed stack (your AWS credentials; the stack's outputs name the table and user pool):
 *   npm run --silent admin -- --stack RecSearch --region eu-west-1 tenant create <tenant> --json
 *
 * Commands: tenant create <t> | client create --tenant t --name n [--scopes a,b] |
 *   client list --tenant t | client delete --tenant t <client_id> |
 *   api-key create --tenant t --name n --scopes admin[,events,items,recommendations] [--environment e] |
 *   api-key list --tenant t | api-key revoke --tenant t <id>        (add --json for machine output)
 */
import { parseArgs } from 'node:util';
import { AdminError, runAdminCommand, UsageError, type AdminConnection } from '../shared/admin/commands.ts';
import { connectDeployed } from '../shared/admin/deployed.ts';
import { readServerConfig } from '../shared/config.ts';
import { ApiError } from '../shared/errors.ts';
import { connectLocalAdmin } from '../local/connect.ts';
import { StartupError } from '../local/lock.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `usage: admin [--stack NAME --region REGION] <command> [--json]
  tenant create <tenant>
  client create --tenant <t> --name <n> [--scopes service-api/read,service-api/write]
  client list --tenant <t>
  client delete --tenant <t> <client_id>
  api-key create --tenant <t> --name <n> --scopes admin[,events,items,recommendations] [--environment e]
  api-key list --tenant <t>
  api-key revoke --tenant <t> <id>`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      stack: { type: 'string' },
      region: { type: 'string' },
      tenant: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      environment: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  let conn: AdminConnection;
  if (values.stack) {
    // The AWS CLI's variables, as for any AWS tool run from a shell (not a service setting).
    const region = values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    if (!region) throw new UsageError('--stack needs --region (or AWS_REGION)');
    conn = await connectDeployed(values.stack, region);
  } else {
    const { dataDir, port } = readServerConfig();
    conn = await connectLocalAdmin(dataDir, port);
  }
  try {
    const r = await runAdminCommand(conn, { command: positionals, tenant: values.tenant, name: values.name, scopes: values.scopes, environment: values.environment });
    console.log(values.json ? JSON.stringify(r.json) : r.text);
  } finally {
    await conn.close();
  }
}

/**
 * An error its message explains, printed as one line (as `npm start` prints its own): the data
 * directory held by a server or another command, a bad setting, a deployed stack not found or not
 * this project's, an AWS service's refusal. Until 2026-12-05 each was printed with its stack trace.
 */
function explained(e: unknown): e is Error {
  if (!(e instanceof Error)) return false;
  return e instanceof StartupError || e instanceof AdminError || e.message.startsWith('Environment variable ') || '$metadata' in e;
}

try {
  await main();
} catch (e) {
  if (e instanceof UsageError || (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'))) {
    console.error(`${e.message}\n${USAGE}`);
    process.exitCode = 2;
  } else {
    console.error(e instanceof ApiError ? `error: ${e.message}${e.details ? ` ${JSON.stringify(e.details.fieldErrors)}` : ''}` : explained(e) ? `error: ${e.message}` : e);
    process.exitCode = 1;
  }
}
