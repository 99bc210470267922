import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AdminConnection } from '../shared/admin/commands.ts';
import { closeTable, makeTable, type TableRef } from '../shared/data/client.ts';
import { dynamoCredentialStore } from '../shared/data/credentials.ts';
import { localProvisioner } from '../shared/domain/credentials.ts';
import { assertLocalEndpoint, ensureTable, startDynalite } from './dynamo.ts';
import { lockDataDir, running } from './lock.ts';
import { LOCAL_TABLE, paths, urlsFor, type StackInfo } from './stack.ts';

export interface LocalConnection {
  table: TableRef;
  port: number;
  close(): Promise<void>;
}

/**
 * Reaches the local stack's table the way the server does: through the running server's
 * dynalite when one is up (stack.json), else by opening the data directory itself, locked
 * meanwhile (a server starting then says so instead of failing on the database's files).
 */
export async function connectLocal(dataDir: string, defaultPort: number): Promise<LocalConnection> {
  const p = paths(resolve(dataDir));
  // A stack.json that cannot be read (cut off as it was written) names no running server: the
  // data directory's lock says whether one holds it (until 2026-12-05 a SyntaxError was thrown).
  const info = existsSync(p.stack) ? readStackInfo(p.stack) : undefined;
  if (info) {
    if (running(info)) {
      assertLocalEndpoint(info.dynamodb_endpoint);
      return { table: makeTable(info.table, info.dynamodb_endpoint, 'us-east-1'), port: info.port, close: async () => {} };
    }
  }
  mkdirSync(resolve(dataDir), { recursive: true });
  const release = lockDataDir(resolve(dataDir), 'admin command');
  try {
    const dynamo = await startDynalite({ path: p.dynamodb });
    await ensureTable(dynamo.endpoint, LOCAL_TABLE);
    const table = makeTable(LOCAL_TABLE, dynamo.endpoint, 'us-east-1');
    return {
      table,
      port: defaultPort,
      close: async () => {
        closeTable(table);
        await dynamo.close();
        release();
      },
    };
  } catch (e) {
    release();
    throw e;
  }
}

/** The admin CLI's view of the local stack. */
export async function connectLocalAdmin(dataDir: string, defaultPort: number): Promise<AdminConnection> {
  const c = await connectLocal(dataDir, defaultPort);
  return { store: dynamoCredentialStore(c.table), urls: urlsFor(c.port), provisioner: localProvisioner, close: c.close };
}

/** The running server's stack.json, or undefined when it is not JSON. */
function readStackInfo(file: string): StackInfo | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
  } catch (e) {
    if (e instanceof SyntaxError) return undefined;
    throw e;
  }
}
