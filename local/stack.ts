// First: the local defaults hold before any module below reads them as it loads.
import './defaults.ts';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureSigningKey } from '../shared/auth/signer.ts';
import { decideAutoPromotion } from '../shared/domain/automation.ts';
import { replaceFile } from '../shared/files.ts';
import { makeTable } from '../shared/data/client.ts';
import type { DemoSize } from '../shared/demo/generate.ts';
import type { DemoRun } from '../shared/demo/run.ts';
import type { DemoSummary } from '../shared/demo/seed.ts';
import { storesFor } from '../shared/data/index.ts';
import { readConfig, readLocalConfig } from '../shared/config.ts';
import { Conflict } from '../shared/domain/errors.ts';
import { onboardTenant, type ServiceUrls, type TenantCredentials } from '../shared/domain/credentials.ts';
import { useWorkQueue } from '../shared/queue/messages.ts';
import { queues as queueSpecs, workers, type QueueName } from '../shared/queue/workers.ts';
import { connectLocalDynamo, ensureTable, startDynaliteThread } from './dynamo.ts';
import { useDynamoPort } from './dynamo-port.ts';
import { enforceGrants, guardedQueue } from './grants.ts';
import { LocalQueue, LocalWorkQueue, type SqsHandler } from './queue.ts';
import { threadedHandler, type ThreadedHandler } from './threaded-handler.ts';
import { startHttpServer } from './server.ts';
import { scheduledFunction } from './api-pool.ts';
import type { AccessEntry } from './access-log.ts';
import { lockDataDir, StartupError, startTimeOf, unwritableDataDir } from './lock.ts';
import { prepareConsole } from './console-static.ts';
import { ensureDemoConsoleUser, type ConsoleLogin } from './console-user.ts';

export const LOCAL_TABLE = 'recsearch-local';

/** credentials.json: the demo tenant's credentials, and its console user's email and password. */
export type Credentials = TenantCredentials & Partial<ConsoleLogin>;

export const paths = (dataDir: string) => ({
  credentials: join(dataDir, 'credentials.json'),
  stack: join(dataDir, 'stack.json'),
  dynamodb: join(dataDir, 'dynamodb'),
  signingKey: join(dataDir, 'jwt-signing-key.json'),
  jwks: join(dataDir, 'jwks.json'),
  blobs: join(dataDir, 'blobs'),
  /** The demo seed's progress (shared/demo/progress.ts). */
  demo: join(dataDir, 'demo.json'),
  deadLetters: (queue: string) => join(dataDir, `dead-letters-${queue}.jsonl`),
  queue: (queue: string) => join(dataDir, `queue-${queue}.jsonl`),
});

/** What a running local stack records about itself, so the admin CLI can reach it. */
export interface StackInfo {
  pid: number;
  /** The server's start time by its pid (`startTimeOf`), to tell it from a later process given the same pid. */
  start?: string | undefined;
  port: number;
  base_url: string;
  dynamodb_endpoint: string;
  table: string;
}

/** Locally the three bases share one host and port. */
export const urlsFor = (port: number): ServiceUrls => {
  const url = `http://localhost:${port}`;
  return { base_url: url, console_url: url, auth_url: url };
};

export interface LocalStack {
  port: number;
  /** How many worker threads run the API handlers (0: this thread). */
  apiThreads: number;
  /** The in-process queues (one per queue name) the handlers send work messages to. */
  workQueue: LocalWorkQueue;
  /** Runs the maintenance pass now (the local stand-in for the scheduled Lambda). */
  maintain(): Promise<unknown>;
  dataDir: string;
  credentials: Credentials;
  credentialsFile: string;
  /** The demo seed running in the background (undefined: none this start); `close` stops it. */
  demo: Promise<DemoSummary | undefined> | undefined;
  close(): Promise<void>;
}

export interface StackOptions {
  dataDir: string;
  port?: number;
  host?: string;
  /** Extra environment for the handlers (rate limits, token lifetime, ...). */
  env?: Record<string, string>;
  /** Called once per request answered (`npm start` prints it). */
  accessLog?: (e: AccessEntry) => void;
  /** Called when the stack cannot go on (its database thread stopped): `npm start` says why and exits. */
  onFatal?: (message: string) => void;
  /**
   * Seed the demo tenant with the demo shop when this start creates it (and finish a seed an
   * earlier start left half done), in the background, printing progress with `log`.
   */
  demo?: {
    size: DemoSize;
    log: (line: string) => void;
    /** How long the stack's close waits for the seed to stop (DEMO_STOP_TIMEOUT_MS by default) before it closes without it. */
    stopTimeoutMs?: number;
  };
  /** Each queue keeps the bodies sent on it (`LocalQueue.sent`, for tests); off for `npm start`. */
  recordSentMessages?: boolean;
}

/**
 * The credentials an earlier start wrote (`credentials.json`). One that cannot be read, is not
 * JSON or lacks a field (edited by hand, a disk error) stops the start: going on would write the
 * file again without the secrets, which are stored only hashed and cannot be made again.
 */
function readCredentials(file: string, dataDir: string): Credentials {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new StartupError(`${file} cannot be read (${(e as Error).message}).`);
  }
  let value: unknown;
  let problem: string | undefined;
  try {
    value = JSON.parse(text);
  } catch (e) {
    problem = `not JSON: ${(e as Error).message}`;
  }
  if (!problem && (typeof value !== 'object' || value === null || Array.isArray(value))) problem = 'not a JSON object';
  const absent = problem ? [] : CREDENTIAL_FIELDS.filter((f) => typeof (value as Record<string, unknown>)[f] !== 'string' || (value as Record<string, unknown>)[f] === '');
  if (absent.length) problem = `no ${absent.join(', ')}`;
  if (problem) {
    throw new StartupError(
      `${file} is damaged (${problem}); the server stopped rather than write it again without its secrets. Put back a copy of it, or remove ${dataDir} to start afresh (new credentials for its data: npm run admin -- client create / api-key create, docs/configuration.md).`,
    );
  }
  return value as Credentials;
}

/** What credentials.json must hold (the URLs are written again at each start). */
const CREDENTIAL_FIELDS = ['tenant', 'client_id', 'client_secret', 'api_key'] as const;

/**
 * Starts dynalite on the data directory, the handlers behind one HTTP port, and the demo tenant.
 * The data directory is locked to this stack (lock.ts) until it closes. A start that fails
 * stops what it had started, then throws (a StartupError says in one line what to do).
 */
export async function startLocalStack(opts: StackOptions): Promise<LocalStack> {
  const dataDir = resolve(opts.dataDir);
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (e) {
    throw unwritableDataDir(dataDir, e);
  }
  const release = lockDataDir(dataDir);
  // Its settings leave process.env once it closed (or failed to start), as they were before it.
  const releaseEnv = holdStackEnv();
  const undo: (() => unknown)[] = [releaseEnv, release];
  try {
    const stack = await startStack(opts, dataDir, undo);
    return {
      ...stack,
      close: async () => {
        try {
          await stack.close();
          release();
        } finally {
          releaseEnv();
        }
      },
    };
  } catch (e) {
    for (const step of undo.reverse()) await Promise.resolve(step()).catch(() => undefined);
    throw e;
  }
}

/** Stacks of this process holding process.env (`holdStackEnv`) and not released yet, and process.env as it was before the first. */
let envHeld = 0;
let envBefore: NodeJS.ProcessEnv | undefined;

/**
 * A local stack's start writes its settings into process.env (its table, database endpoint, key
 * files, issuer, and the `env` it was given); left there after its close, a later stack of the
 * same process, or a server it spawns (which inherits process.env), started with the settings of
 * one stopped before (LOCAL_API_THREADS, a retry delay, a closed database's endpoint). Called as
 * a stack starts (startLocalStack does); the function it answers, once the stack closed (or failed
 * to start), puts process.env back as it was when the first stack still running started (the
 * test stacks did so since 35a6d201; until 2026-12-07 a stack started otherwise left them).
 */
export function holdStackEnv(): () => void {
  if (envHeld++ === 0) envBefore = { ...process.env };
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--envHeld > 0 || !envBefore) return;
    const before = envBefore;
    envBefore = undefined;
    for (const k of Object.keys(process.env)) if (!(k in before)) delete process.env[k];
    for (const [k, v] of Object.entries(before)) if (process.env[k] !== v) process.env[k] = v;
  };
}

async function startStack(opts: StackOptions, dataDir: string, undo: (() => unknown)[]): Promise<LocalStack> {
  const p = paths(dataDir);
  const dynamo = await startDynaliteThread({
    path: p.dynamodb,
    onStopped: (reason) => {
      const message = `the local database (dynalite, ${p.dynamodb}) stopped: ${reason}${/ENOSPC/.test(reason) ? ' (the disk is full)' : ''}. Every request that needs it fails until the server is started again; what was acknowledged before is kept.`;
      if (opts.onFatal) opts.onFatal(message);
      else console.error(JSON.stringify({ level: 'ERROR', message }));
    },
  });
  undo.push(() => dynamo.close());
  await ensureTable(dynamo.endpoint, LOCAL_TABLE);
  // This thread's tables (handlers run here unless LOCAL_API_THREADS is set) use a port too.
  const own = connectLocalDynamo();
  if (own) useDynamoPort(own.endpoint, own.port);
  ensureSigningKey(p.signingKey, p.jwks);

  Object.assign(process.env, {
    TABLE_NAME: LOCAL_TABLE,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    AUTH_JWKS_FILE: p.jwks,
    AUTH_SIGNING_KEY_FILE: p.signingKey,
    BLOB_DIR: p.blobs,
    // The key by which the maintenance pass's logs name a user (shared/domain/erasure.ts `userRef`):
    // the environment's own (docs/configuration.md), else derived from the data folder's signing
    // key, the local stack's one secret (kept with the data). Until 2026-12-08 the derived one
    // replaced the environment's, so an operator's key went unused.
    USER_REF_KEY: envBefore?.USER_REF_KEY || createHash('sha256').update('user_ref\0').update(readFileSync(p.signingKey)).digest('hex'),
    ...opts.env,
  });
  // Read now, once the stack's environment is applied (a process may start several stacks).
  const local = readLocalConfig();
  // Every service setting read now: a bad value stops the start with the variable's name, where
  // the handlers, which read each setting on its first use, would answer 500 to every request.
  readConfig();
  enforceGrants(local.iam);

  // SQS and its event sources: an in-process queue per queue, delivering to the same worker handlers.
  // Each worker runs in its own thread, as its own Lambda would: a long index build never
  // blocks the API.
  // A data folder with credentials is a restart: its training runs are recovered (below) before
  // the training queue delivers, or a run the journal delivers again would be started by this
  // process and then ended as interrupted by the recovery.
  const fresh = !existsSync(p.credentials);
  // Read before anything starts: a file that is not the credentials stops the start, with what to do.
  const kept = fresh ? undefined : readCredentials(p.credentials, dataDir);
  const localQueues = new Map<QueueName, LocalQueue>();
  const threads: ThreadedHandler[] = [];
  for (const [name, spec] of Object.entries(queueSpecs) as [QueueName, (typeof queueSpecs)[QueueName]][]) {
    const worker = workers.find((w) => w.queue === name);
    let handler: SqsHandler | undefined;
    if (worker) {
      // The training worker (one run at a time) has its Lambda's time limit, as on AWS: the
      // maintenance pass ends a worker's run still InProgress past it (WORKER_RUN_LOST_SECONDS),
      // taking its invocation for over. The embedding worker's batches share their thread (four at once).
      const thread = await threadedHandler(worker.handler, name === 'training' ? { timeoutSeconds: worker.timeoutSeconds } : {});
      undo.push(() => thread.close());
      threads.push(thread);
      handler = thread.handler;
    }
    localQueues.set(
      name,
      new LocalQueue(name, handler, {
        batchSize: worker?.batchSize ?? 10,
        maxReceiveCount: spec.maxReceiveCount,
        retryDelayMs: local.retryDelayMs,
        deadLetterFile: p.deadLetters(name),
        journalFile: p.queue(name),
        // Embedding batches are I/O-bound: several at once, as Lambda scales a busy queue's
        // consumers; training runs one at a time.
        concurrency: name === 'embedding' ? 4 : 1,
        recordSent: opts.recordSentMessages ?? false,
        held: name === 'training' && !fresh,
      }),
    );
  }
  const workQueue = new LocalWorkQueue(localQueues);
  useWorkQueue(guardedQueue(workQueue));
  undo.push(() => {
    for (const q of localQueues.values()) q.stop();
    useWorkQueue(undefined);
  });
  // As its own function, in a thread of its own (the schedule's and a test's `maintain()` alike).
  const maintenancePass = scheduledFunction('workers/maintain');
  undo.push(() => maintenancePass.close());
  const maintain = () => maintenancePass.invoke();
  // A run the stack's close ends is not a failure to report.
  let closing = false;
  const maintenance = setInterval(
    () =>
      void maintain().catch((e: unknown) => {
        if (!closing) console.error('maintenance failed', e);
      }),
    local.maintenanceSeconds * 1000,
  );
  maintenance.unref();
  undo.push(() => clearInterval(maintenance));
  // The console web app: built now in the background if missing or stale (requests for it wait).
  if (local.consoleBuild) void prepareConsole().catch(() => undefined);
  const http = await startHttpServer({ host: opts.host ?? '127.0.0.1', port: opts.port ?? 3000, jwksFile: p.jwks, accessLog: opts.accessLog });
  undo.push(() => http.close());
  // Handlers read their configuration on first use, so the issuer can follow the bound port.
  process.env.AUTH_ISSUER = `http://localhost:${http.port}`;
  // LOCAL_API_THREADS > 0: API handlers run in that many threads, as concurrent Lambda containers.
  if (local.apiThreads > 0) await http.useThreads(local.apiThreads);

  const table = makeTable(LOCAL_TABLE, dynamo.endpoint, 'us-east-1');
  const stores = storesFor(table);
  const store = stores.credentials;
  // Imported only when a seed runs: the demo pulls in search and training code, whose settings
  // are read at import (a test stack sets them after this module is loaded).
  const demoSeed = opts.demo && (await import('../shared/demo/run.ts'));
  let credentials: Credentials;
  if (kept) {
    credentials = { ...kept, ...urlsFor(http.port) };
  } else {
    // Planned before the tenant is created and its credentials.json written: a start that finds
    // credentials.json seeds only what demo.json plans. Until 2026-12-05 it was planned after,
    // and a start stopped between the two never seeded the demo, and did not say so.
    if (opts.demo && demoSeed) demoSeed.planDemo(p.demo, opts.demo.size);
    try {
      credentials = await onboardTenant(store, 'demo', urlsFor(http.port));
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
      throw new StartupError(`The demo tenant exists but ${p.credentials} is missing; remove ${dataDir} to start afresh.`);
    }
  }
  credentials = { ...credentials, ...(await ensureDemoConsoleUser(table, credentials.tenant, credentials)) };
  // Replaced whole (the secrets in it are stored only hashed: a kill between truncating the file
  // and writing it would lose them for good).
  replaceFile(p.credentials, `${JSON.stringify(credentials, null, 2)}\n`, 0o600);
  const info: StackInfo = { pid: process.pid, start: startTimeOf(process.pid), port: http.port, base_url: credentials.base_url, dynamodb_endpoint: dynamo.endpoint, table: LOCAL_TABLE };
  replaceFile(p.stack, `${JSON.stringify(info, null, 2)}\n`);
  // Training runs a previous process had queued or was running: a run it was running is ended as
  // interrupted; a queued run's message is sent again (the queue's journal delivers it too, but a
  // data folder from before the journals has none; a second message for a started run does
  // nothing). Imported here: training code reads settings at import.
  if (!fresh) {
    const { recoverLocalRuns } = await import('../shared/recs/launcher.ts');
    for (const tenant of await store.listTenants()) {
      for (const line of await recoverLocalRuns({ console: stores.console, queue: workQueue, decide: (t, name) => decideAutoPromotion(stores.console, t, name) }, tenant))
        console.log(`training run ${tenant}/${line}: the server restarted while it was queued or running`);
    }
    localQueues.get('training')?.resume();
  }
  const demo: DemoRun | undefined =
    opts.demo &&
    demoSeed?.startDemo({
      // Its own table, whose calls its stop cuts: a seed the close stops writes nothing after.
      table: (signal) => makeTable(LOCAL_TABLE, dynamo.endpoint, 'us-east-1', { signal }),
      queue: workQueue,
      tenant: credentials.tenant,
      file: p.demo,
      log: opts.demo.log,
    });

  return {
    port: http.port,
    apiThreads: local.apiThreads,
    workQueue,
    maintain,
    dataDir,
    credentials,
    credentialsFile: p.credentials,
    demo: demo?.done,
    close: async () => {
      // The seed stops first (its database calls in flight cut, none sent after): it writes through this stack.
      if (demo && opts.demo) await stopDemo(demo, opts.demo.stopTimeoutMs ?? DEMO_STOP_TIMEOUT_MS, opts.demo.log);
      closing = true;
      clearInterval(maintenance);
      // The requests in flight are answered while the queues still take what they send (a
      // write's embedding request, a training run's message: journaled for the next start).
      await http.close();
      await maintenancePass.close();
      for (const q of localQueues.values()) q.stop();
      await Promise.all(threads.map((t) => t.close()));
      useWorkQueue(undefined);
      await dynamo.close();
      rmSync(p.stack, { force: true });
    },
  };
}

/** How long a stack's close waits for its demo seed to stop. */
export const DEMO_STOP_TIMEOUT_MS = 30_000;

/**
 * Stops the demo seed, waiting at most `limitMs`: its database calls end at the stop (its table's
 * signal, `startDemo`), and it sends none after; one held in another call that does not end is
 * left, said with `log`, and the close goes on. Until 2026-12-07 the close waited for it for good.
 */
async function stopDemo(demo: DemoRun, limitMs: number, log: (line: string) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), limitMs);
  });
  const stopped = await Promise.race([demo.stop().then(() => 'stopped' as const), late]).finally(() => clearTimeout(timer));
  if (stopped === 'late') log(`demo: the seed did not stop within ${limitMs} ms (held in a call?); the server closes without waiting for it (the next start resumes it)`);
}
