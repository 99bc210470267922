import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  ScanCommand,
  type AttributeValue,
  type TableDescription,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import type { AddressInfo } from 'node:net';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import dynalite from 'dynalite';
import './dynalite-indexes.mjs';
import './dynalite-key-sizes.mjs';
import { answerTransactions } from './dynalite-transactions.mjs';
import { createTableInput, TABLE_SCHEMA } from '../shared/data/table-schema.ts';
import { sleep } from '../shared/retry.ts';
import { SERVING_YOUNG_GENERATION_MB } from './young-generation.ts';

export interface LocalDynamo {
  endpoint: string;
  close(): Promise<void>;
}

/** How long a closing dynalite thread has to close its server before it is ended. */
export const DYNALITE_CLOSE_TIMEOUT_MS = 10_000;

/** The dynalite thread of this process's local stack, which its handler threads connect to. */
let running: { endpoint: string; connect(): MessagePort } | undefined;

/**
 * A new connection to the local stack's dynalite thread (for a thread to pass to
 * `useDynamoPort`), or undefined when this process runs none.
 */
export function connectLocalDynamo(): { endpoint: string; port: MessagePort } | undefined {
  return running && { endpoint: running.endpoint, port: running.connect() };
}

/** How the thread's Queries were answered (local/dynalite-query-cache.mjs): from memory, by dynalite, and the answers kept. */
export interface QueryCacheStats {
  hits: number;
  misses: number;
  kept: number;
}

/**
 * Starts dynalite on loopback in a thread of its own (the local stack's database); with `path`,
 * data persists in that folder (LevelDB). Besides its TCP endpoint, threads of this process
 * reach it over MessagePorts (`connectLocalDynamo`, dynamo-port.ts).
 * `threadScript` (tests) runs another script in its place.
 */
export async function startDynaliteThread(
  opts: { path?: string; port?: number; onStopped?: (reason: string) => void; closeTimeoutMs?: number; threadScript?: URL } = {},
): Promise<LocalDynamo & { openIterators(): Promise<number>; queryCache(): Promise<QueryCacheStats> }> {
  // Its young generation as the API threads' (young-generation.ts): the database's collections
  // pause every request waiting on it.
  const worker = new Worker(opts.threadScript ?? new URL('./dynalite-thread.mjs', import.meta.url), {
    workerData: { path: opts.path, port: opts.port },
    resourceLimits: { maxYoungGenerationSizeMb: SERVING_YOUNG_GENERATION_MB },
  });
  let closing = false;
  let stopped = false;
  // Watched from the start: LevelDB opens its folder while dynalite starts listening. Resolves
  // with why the thread ended (a close waits for that too).
  const exited = new Promise<{ exited: string }>((resolve) =>
    watchThread(worker, (reason) => {
      stopped = true;
      resolve({ exited: reason });
      if (!closing) opts.onStopped?.(reason);
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const first = (m: { port?: number; error?: string }) => {
      if (m.port === undefined && m.error === undefined) return;
      worker.off('message', first);
      if (m.port) resolve(m.port);
      else reject(new Error(m.error));
    };
    worker.on('message', first);
    worker.once('error', reject);
    // A thread that ends without an error (its code exiting) never says its port.
    worker.once('exit', (code) => reject(new Error(`the local database thread ended before it listened (exit code ${code})`)));
  });
  /** The next message of the thread that has `key`. */
  const reply = <T>(key: string, message: unknown) =>
    new Promise<T>((resolve) => {
      const on = (m: Record<string, unknown>) => {
        if (!(key in m)) return;
        worker.off('message', on);
        resolve(m[key] as T);
      };
      worker.on('message', on);
      worker.postMessage(message);
    });
  const self = {
    endpoint: `http://127.0.0.1:${port}`,
    connect: () => {
      const { port1, port2 } = new MessageChannel();
      worker.postMessage({ type: 'connect', port: port1 }, [port1]);
      return port2;
    },
  };
  running = self;
  return {
    endpoint: self.endpoint,
    /** LevelDB iterators open in the thread (on disk only): none once every Query has answered. */
    openIterators: async () => (await reply<{ openIterators: number }>('stats', 'stats')).openIterators,
    queryCache: async () => (await reply<{ queryCache: QueryCacheStats }>('stats', 'stats')).queryCache,
    close: async () => {
      closing = true;
      if (running === self) running = undefined;
      // A thread that stopped on its own answers nothing. One whose server does not close (a
      // connection with a request still arriving: dynalite's server.close waits for it) is ended
      // after the time limit: until 2026-12-07 this waited for its `closed` for good, and a start
      // that failed (which runs this too) held the process, and the data folder's next start.
      // One that ends while it closes ends the wait: until 2026-12-07 that waited the whole limit
      // and then said it did not close and was ended.
      if (!stopped) {
        const limit = opts.closeTimeoutMs ?? DYNALITE_CLOSE_TIMEOUT_MS;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), limit);
        });
        const answered = await Promise.race([reply<true>('closed', 'close'), late, exited]).finally(() => clearTimeout(timer));
        if (answered === 'late') {
          console.error(JSON.stringify({ level: 'WARN', message: `local DynamoDB: its thread did not close within ${limit} ms (a request still open?); it was ended` }));
        } else if (answered !== true) {
          console.error(JSON.stringify({ level: 'WARN', message: `local DynamoDB: its thread ended while it closed: ${answered.exited}` }));
        }
      }
      await worker.terminate();
    },
  };
}

/**
 * Calls `onStopped` once when `worker` ends, with why: the failure it reported first (`{ failure }`
 * message: LevelDB could not open its folder), else the error that ended it (a full disk's
 * ENOSPC from a LevelDB write), else its exit code. Without it, the database thread of a running
 * stack died in silence and every request failed from then on with "the connection closed".
 */
export function watchThread(worker: Worker, onStopped: (reason: string) => void): void {
  let failure: string | undefined;
  worker.on('message', (m: unknown) => {
    if (typeof m === 'object' && m !== null && 'failure' in m && typeof m.failure === 'string') failure ??= m.failure;
  });
  worker.on('error', (e: unknown) => {
    failure ??= e instanceof Error ? e.message : String(e);
  });
  worker.once('exit', (code) => onStopped(failure ?? `its thread exited (code ${code})`));
}

/** Starts dynalite on loopback in this thread (tests, short-lived tools). */
export async function startDynalite(opts: { path?: string; port?: number } = {}): Promise<LocalDynamo> {
  const server = dynalite({ ...(opts.path ? { path: opts.path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  answerTransactions(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Refuses anything but a loopback endpoint, so no test or local run can touch real AWS. */
export function assertLocalEndpoint(endpoint: string): void {
  const host = new URL(endpoint).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) {
    throw new Error(`Refusing non-local DynamoDB endpoint ${endpoint}`);
  }
}

/**
 * Creates the single table if it does not exist yet and waits until it is active. A table made by
 * an earlier version, without an index the schema has now (a data folder kept across an upgrade),
 * is rebuilt with it (`migrate`): dynalite cannot add an index to a table, as DynamoDB can.
 */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  assertLocalEndpoint(endpoint);
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const temp = `${tableName}${MIGRATING}`;
    if ((await describe(client, temp)) || missingIndexes(await describe(client, tableName)).length > 0) await migrate(client, tableName, temp);
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
    } catch (e) {
      if (!(e instanceof ResourceInUseException)) throw e;
    }
    await whenActive(client, tableName);
  } finally {
    client.destroy();
  }
}

/** The suffix of the table that holds the rows while `migrate` rebuilds the table. */
const MIGRATING = '-migrating';

async function describe(client: DynamoDBClient, name: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (e) {
    if (e instanceof ResourceNotFoundException) return undefined;
    throw e;
  }
}

/** The indexes of TABLE_SCHEMA an existing table lacks (none when there is no table). */
function missingIndexes(table: TableDescription | undefined): string[] {
  if (!table) return [];
  const have = new Set((table.GlobalSecondaryIndexes ?? []).map((g) => g.IndexName));
  return TABLE_SCHEMA.indexes.filter((i) => !have.has(i.name)).map((i) => i.name);
}

/**
 * Rebuilds `name` with TABLE_SCHEMA's indexes: its rows go to `temp` (made with the schema), the
 * table is made again and they come back. Safe to stop at any point and run again: while the
 * old table stands, it holds every row and the copy starts over; once it is gone, `temp` does.
 */
async function migrate(client: DynamoDBClient, name: string, temp: string): Promise<void> {
  const table = await describe(client, name);
  const missing = missingIndexes(table);
  if (!table || missing.length > 0) {
    if (table) {
      console.log(`local DynamoDB: adding ${missing.join(', ')} to ${name} (copying its rows once)`);
      await drop(client, temp);
      await client.send(new CreateTableCommand(createTableInput(temp)));
      await whenActive(client, temp);
      await copyRows(client, name, temp);
      await drop(client, name);
    }
    await client.send(new CreateTableCommand(createTableInput(name)));
    await whenActive(client, name);
  }
  const n = await copyRows(client, temp, name);
  await drop(client, temp);
  console.log(`local DynamoDB: ${name} rebuilt with ${n} rows`);
}

/** Copies every row of one table into another (a put per row: copying again is harmless). */
async function copyRows(client: DynamoDBClient, from: string, to: string): Promise<number> {
  let n = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: from, Limit: 500, ...(start ? { ExclusiveStartKey: start } : {}) }));
    const rows = page.Items ?? [];
    for (let i = 0; i < rows.length; i += 25) {
      let requests: WriteRequest[] = rows.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const r = await client.send(new BatchWriteItemCommand({ RequestItems: { [to]: requests } }));
        requests = r.UnprocessedItems?.[to] ?? [];
      }
    }
    n += rows.length;
    start = page.LastEvaluatedKey;
  } while (start);
  return n;
}

/** Deletes a table if it exists and waits until it is gone. */
async function drop(client: DynamoDBClient, name: string): Promise<void> {
  if (!(await describe(client, name))) return;
  await client.send(new DeleteTableCommand({ TableName: name }));
  await until(`Table ${name} was not deleted`, async () => !(await describe(client, name)));
}

/** Waits until a table and its indexes are active. */
async function whenActive(client: DynamoDBClient, name: string): Promise<void> {
  await until(`Table ${name} did not become active`, async () => {
    const d = await describe(client, name);
    return d?.TableStatus === 'ACTIVE' && (d.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE');
  });
}

/**
 * Polls `done` until it holds, for at most a minute. dynalite creates and deletes tables at once,
 * but a loaded machine (a test run on 2 cores) can take seconds to get there: wait by the clock,
 * not by a count of quick tries.
 */
async function until(failure: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(failure);
    await sleep(50);
  }
}
