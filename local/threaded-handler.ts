import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { connectLocalDynamo } from './dynamo.ts';
import { grantsEnforced } from './grants.ts';
import type { SqsHandler } from './queue.ts';
import { answerQueueCall } from './thread-queue.ts';

/** What a handler thread posts back: once `ready`, then one `result` per invocation id. */
export type FromHandlerThread = { type: 'ready' } | { type: 'result'; id: number; ok: boolean; value?: unknown; error?: string };

export interface HandlerThread<Req, Res> {
  /** Posts `{ type: 'invoke', id, ...req }` and resolves with that id's result. */
  call(req: Req): Promise<Res>;
  /** Invocations posted and not yet answered. */
  readonly inFlight: number;
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
  opts: { unrefWhenIdle?: boolean; onOther?: (message: { type?: string }, worker: Worker) => void; youngGenerationMb?: number } = {},
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
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    // A thread whose code ends it (process.exit in a module it loads) without an error never says ready.
    worker.once('exit', (code) => reject(new Error(`the handler thread ended before it was ready (exit code ${code})`)));
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
  });
  // Failed, or ended (closed, or its code exited): what it had not answered never will be.
  const failPending = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  worker.on('error', failPending);
  worker.on('exit', (code) => failPending(new Error(`the handler thread ended (exit code ${code})`)));
  return {
    worker,
    get inFlight() {
      return pending.size;
    },
    call: (req) =>
      new Promise<Res>((resolve, reject) => {
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

/** Runs an SQS worker module in its own thread (with its own module state, as its own Lambda would). */
export async function threadedHandler(module: string): Promise<ThreadedHandler> {
  const modulePath = fileURLToPath(new URL(`../functions/${module}.ts`, import.meta.url));
  const thread = await startHandlerThread<{ event: SQSEvent }, SQSBatchResponse | null>({ modulePath, module, name: module.replace(/\//g, '-') }, { unrefWhenIdle: true, onOther: answerQueueCall });
  return {
    handler: async (event: SQSEvent) => (await thread.call({ event })) ?? undefined,
    close: () => thread.close(),
  };
}
