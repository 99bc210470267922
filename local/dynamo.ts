import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import type { AddressInfo } from 'node:net';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import dynalite from 'dynalite';
import { createTableInput } from '../shared/data/table-schema.ts';
import { sleep } from '../shared/retry.ts';

export interface LocalDynamo {
  endpoint: string;
  close(): Promise<void>;
}

/** The dynalite thread of this process's local stack, which its handler threads connect to. */
let running: { endpoint: string; connect(): MessagePort } | undefined;

/**
 * A new connection to the local stack's dynalite thread (for a thread to pass to
 * `useDynamoPort`), or undefined when this process runs none.
 */
export function connectLocalDynamo(): { endpoint: string; port: MessagePort } | undefined {
  return running && { endpoint: running.endpoint, port: running.connect() };
}

/**
 * Starts dynalite on loopback in a thread of its own (the local stack's database); with `path`,
 * data persists in that folder (LevelDB). Besides its TCP endpoint, threads of this process
 * reach it over MessagePorts (`connectLocalDynamo`, dynamo-port.ts).
 */
export async function startDynaliteThread(opts: { path?: string; port?: number } = {}): Promise<LocalDynamo & { openIterators(): Promise<number> }> {
  const worker = new Worker(new URL('./dynalite-thread.mjs', import.meta.url), { workerData: { path: opts.path, port: opts.port } });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (m: { port?: number; error?: string }) => (m.port ? resolve(m.port) : reject(new Error(m.error))));
    worker.once('error', reject);
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
    close: async () => {
      if (running === self) running = undefined;
      await reply('closed', 'close');
      await worker.terminate();
    },
  };
}

/** Starts dynalite on loopback in this thread (tests, short-lived tools). */
export async function startDynalite(opts: { path?: string; port?: number } = {}): Promise<LocalDynamo> {
  const server = dynalite({ ...(opts.path ? { path: opts.path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
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

/** Creates the single table if it does not exist yet and waits until it is active. */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  assertLocalEndpoint(endpoint);
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
    } catch (e) {
      if (!(e instanceof ResourceInUseException)) throw e;
    }
    // dynalite makes a table active at once, but a loaded machine (a test run on 2 cores) can take
    // seconds to get there: wait by the clock, not by a count of quick tries.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const d = await client.send(new DescribeTableCommand({ TableName: tableName }));
      const gsisActive = (d.Table?.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE');
      if (d.Table?.TableStatus === 'ACTIVE' && gsisActive) return;
      await sleep(50);
    }
    throw new Error(`Table ${tableName} did not become active`);
  } finally {
    client.destroy();
  }
}
