import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { connectLocalDynamo } from './dynamo.ts';
import { grantsEnforced } from './grants.ts';
import type { SqsHandler } from './queue.ts';
import { answerQueueCall } from './thread-queue.ts';

/** How long a handler thread has to load its modules and say `ready` before it is ended (its start fails). */
export const HANDLER_READY_TIMEOUT_MS = 60_000;

/** What a handler thread posts back: once `ready`, then one `result` per invocation id. */
export type FromHandlerThread = { type: 'ready' } | { type: 'result'; id: number; ok: boolean; value?: unknown; error?: string };

export interface HandlerThread<Req, Res> {
  /** Posts `{ type: 'invoke', id, ...req }` and resolves with that id's result. */
  call(req: Req): Promise<Res>;
  /** Invocations posted and not yet answered. */
  readonly inFlight: number;
  /** Whether the thread has ended (closed, or its code exited): a call then fails at once. */
  readonly ended: boolean;
  worker: Worker;
  close(): Promise<void>;
}

/**
 * A worker thread (started through worker-thread-entry.mjs with `workerData`) that answers
 * invocations by id; messages of any other type go to `onOther`. With `unrefWhenIdle` the thread
 * does not keep the process alive while nothing is in flight; `youngGenerationMb` sets its V8
 * young generation (Node's default when absent).
 */
export async function startHandlerThread<Req extends object, Res>(
  workerData: Record<string, unknown>,
  opts: { unrefWhenIdle?: boolean; onOther?: (message: { type?: string }, worker: Worker) => void; youngGenerationMb?: number; readyTimeoutMs?: number } = {},
): Promise<HandlerThread<Req, Res>> {
  // The thread reaches the stack's dynalite over a port of its own, as the main thread does.
  const dynamo = connectLocalDynamo();
  const worker = new Worker(new URL('./worker-thread-entry.mjs', import.meta.url), {
    workerData: { ...workerData, iam: grantsEnforced(), ...(dynamo ? { dynamo } : {}) },
    ...(dynamo ? { transferList: [dynamo.port] } : {}),
    env: { ...process.env },
    ...(opts.youngGenerationMb ? { resourceLimits: { maxYoungGenerationSizeMb: opts.youngGenerationMb } } : {}),
  });
  if (opts.unrefWhenIdle) worker.unref();
  const pending = new Map<number, { resolve: (r: Res) => void; reject: (e: Error) => void }>();
  let next = 0;
  const readyLimit = opts.readyTimeoutMs ?? HANDLER_READY_TIMEOUT_MS;
  let readyTimer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    // A thread whose code ends it (process.exit in a module it loads) without an error never says ready.
    worker.once('exit', (code) => reject(new Error(`the handler thread ended before it was ready (exit code ${code})`)));
    // One whose modules never finish loading (a call at import that is never answered) is ended at
    // the time limit: until 2026-12-07 its start waited for `ready` for good, and so did the stack's.
    readyTimer = setTimeout(() => {
      const name = typeof workerData.name === 'string' ? workerData.name : 'handler';
      const message = `the ${name} thread did not say ready within ${readyLimit} ms; it was ended`;
      console.error(JSON.stringify({ level: 'ERROR', message }));
      reject(new Error(message));
      void worker.terminate();
    }, readyLimit);
    worker.on('message', (m: FromHandlerThread | { type?: string }) => {
      if (m.type === 'ready') return resolve();
      if (m.type !== 'result') return opts.onOther?.(m, worker);
      const r = m as Extract<FromHandlerThread, { type: 'result' }>;
      const p = pending.get(r.id);
      pending.delete(r.id);
      if (r.ok) p?.resolve(r.value as Res);
      else p?.reject(new Error(r.error));
      if (opts.unrefWhenIdle && pending.size === 0) worker.unref();
    });
  }).finally(() => clearTimeout(readyTimer));
  // Failed, or ended (closed, or its code exited): what it had not answered never will be.
  const failPending = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  worker.on('error', failPending);
  let ended: Error | undefined;
  worker.on('exit', (code) => {
    ended = new Error(`the handler thread ended (exit code ${code})`);
    failPending(ended);
  });
  return {
    worker,
    get inFlight() {
      return pending.size;
    },
    get ended() {
      return ended !== undefined;
    },
    call: (req) =>
      new Promise<Res>((resolve, reject) => {
        // Posted to an ended thread, it would never be answered.
        if (ended) return reject(ended);
        const id = next++;
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ type: 'invoke', id, ...req });
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}

export interface ThreadedHandler {
  handler: SqsHandler;
  close(): Promise<void>;
}

/**
 * Runs an SQS worker module in its own thread (with its own module state, as its own Lambda would).
 * With `timeoutSeconds` (the function's timeout), an invocation still running after it is ended as
 * Lambda ends one: its thread is terminated (whatever it was doing stops there), the invocation
 * fails, and a new thread takes the next. Only for a handler that runs one invocation at a time:
 * the others in its thread would end with it. Until 2026-12-07 no local worker had a time limit,
 * so a training run in the local worker could run on past WORKER_RUN_LOST_SECONDS, and the
 * maintenance pass, which takes such a run's invocation for over (as on AWS it is), ended it while
 * it ran (Failed, even as it stored its version).
 */
export async function threadedHandler(module: string, opts: { timeoutSeconds?: number; modulePath?: string } = {}): Promise<ThreadedHandler> {
  const modulePath = opts.modulePath ?? fileURLToPath(new URL(`../functions/${module}.ts`, import.meta.url));
  type Thread = HandlerThread<{ event: SQSEvent }, SQSBatchResponse | null>;
  /** The thread that replaces one ended at the time limit, while it starts (started again at the next call when it could not). */
  let starting: Promise<Thread> | undefined;
  let closed = false;
  let thread: Thread;
  const start = async () => {
    const t = await startHandlerThread<{ event: SQSEvent }, SQSBatchResponse | null>({ modulePath, module, name: module.replace(/\//g, '-') }, { unrefWhenIdle: true, onOther: answerQueueCall });
    // A thread that ends on its own (an error nothing caught, its code exiting) is replaced, as
    // Lambda replaces a container whose runtime exited: until 2026-12-07 every later invocation
    // was posted to the ended thread and never answered (the embedding worker's deliveries hung
    // for good; the training worker's until its time limit).
    t.worker.once('exit', () => {
      if (closed || thread !== t || starting) return;
      starting = start();
      starting.catch(() => undefined);
    });
    return t;
  };
  thread = await start();
  const current = async () => {
    if (starting) {
      const next = starting;
      starting = undefined;
      try {
        thread = await next;
      } catch (e) {
        if (!closed) {
          starting = start();
          // Its failure is the next call's: until 2026-12-07, when this start failed too before a
          // call came, its rejection went unhandled, which ends the whole local stack's process.
          starting.catch(() => undefined);
        }
        throw e;
      }
    }
    // A thread that ended on its own while it waited to be taken up (a replacement, whose end its
    // listener above leaves alone: it is not yet `thread`) is replaced once here; until 2026-12-07
    // the call was posted to it and never answered.
    if (!closed && thread.ended) {
      starting = start();
      starting.catch(() => undefined);
      const next = starting;
      starting = undefined;
      thread = await next;
    }
    return thread;
  };
  return {
    handler: async (event: SQSEvent) => {
      const t = await current();
      const limit = opts.timeoutSeconds;
      if (limit === undefined) return (await t.call({ event })) ?? undefined;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), limit * 1000).unref();
      });
      try {
        const res = await Promise.race([t.call({ event }), timedOut]);
        if (res !== 'timeout') return res ?? undefined;
      } finally {
        clearTimeout(timer);
      }
      await t.close();
      if (!closed) {
        starting ??= start();
        // Its failure is the next call's (current() starts another).
        starting.catch(() => undefined);
      }
      throw new Error(`${module} timed out after ${limit} seconds (its thread was ended, as Lambda ends an invocation at its timeout)`);
    },
    close: async () => {
      closed = true;
      // A replacement that could not start leaves no thread to end (nor a failure to answer).
      const t = await current().catch(() => undefined);
      await t?.close();
    },
  };
}
