import type { Worker } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import type { HttpEvent, HttpResult } from '../shared/http/types.ts';
import { workQueue, type WorkMessage } from '../shared/queue/messages.ts';
import type { QueueName } from '../shared/queue/workers.ts';
import { setTenant, type LambdaHttpHandler } from './http-adapter.ts';
import { startHandlerThread } from './threaded-handler.ts';

export type ToApiThread = { type: 'invoke'; id: number; module: string; event: HttpEvent } | { type: 'queue-done'; id: number; value?: number; error?: string };
/** An invocation's answer, and the tenant its handler found (for the access log). */
export interface ApiThreadResult {
  result: HttpResult;
  tenant: string | undefined;
}
/** A handler's call on the main thread's queues. */
type QueueCall = { type: 'queue'; id: number; op: 'send' | 'backlog'; queue: QueueName; messages: WorkMessage[] };

export interface ApiPool {
  /** The handler of `module`, run in the least busy thread. */
  handler(module: string): LambdaHttpHandler;
  close(): Promise<void>;
}

/**
 * API handlers in `size` worker threads, each with every handler module loaded: the local
 * stand-in for Lambda running concurrent requests in separate containers (LOCAL_API_THREADS).
 * Each thread keeps its own caches (index, models), as each container does.
 */
export async function startApiPool(size: number, modules: string[]): Promise<ApiPool> {
  // The queues live in this thread: a handler's send returns once they hold the messages.
  const onQueueCall = (m: { type?: string }, worker: Worker) => {
    if (m.type !== 'queue') return;
    const c = m as QueueCall;
    (c.op === 'send'
      ? workQueue()
          .send(c.queue, c.messages)
          .then(() => 0)
      : workQueue().backlog(c.queue)
    ).then(
      (value) => worker.postMessage({ type: 'queue-done', id: c.id, value } satisfies ToApiThread),
      (e: unknown) => worker.postMessage({ type: 'queue-done', id: c.id, error: String(e) } satisfies ToApiThread),
    );
  };
  const threads = await Promise.all(
    Array.from({ length: size }, (_, n) =>
      startHandlerThread<{ module: string; event: HttpEvent }, ApiThreadResult>({ entry: './api-thread.ts', modules, name: `api-${n}` }, { onOther: onQueueCall }),
    ),
  );
  let turn = 0;
  return {
    handler:
      (module: string) =>
      async (event: HttpEvent, context: Context): Promise<HttpResult> => {
        // The least busy thread (round robin among equals).
        let best = threads[turn++ % threads.length] as (typeof threads)[number];
        for (const t of threads) if (t.inFlight < best.inFlight) best = t;
        const { result, tenant } = await best.call({ module, event });
        setTenant(context, tenant);
        return result;
      },
    close: async () => {
      await Promise.all(threads.map((t) => t.close()));
    },
  };
}
