import { randomBytes } from 'node:crypto';
import type { TableRef } from '../shared/data/client.ts';
import { dynamoConsoleUserStore } from '../shared/data/console-auth.ts';
import { putLocalUser } from '../shared/console-auth/identity.ts';

/** What credentials.json holds for the console: the demo tenant's console user. */
export interface ConsoleLogin {
  console_email: string;
  console_password: string;
}

/**
 * The demo tenant's console user (role admin): the one `credentials.json` names, created if its
 * row is missing (a fresh data directory, or one from before the console), with a new random
 * password when the file has none.
 */
export async function ensureDemoConsoleUser(t: TableRef, tenant: string, known: Partial<ConsoleLogin>): Promise<ConsoleLogin> {
  const store = dynamoConsoleUserStore(t);
  const email = known.console_email ?? `admin@${tenant}.example.com`;
  const password = known.console_password ?? randomBytes(18).toString('base64url');
  if (!known.console_password || !(await store.get(email))) await putLocalUser(store, { email, tenant, role: 'admin' }, password);
  return { console_email: email, console_password: password };
}
