import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { HttpEvent, HttpResult } from '../shared/http/types.ts';
import { nowMs } from '../shared/clock.ts';
import { setTenant, type LambdaHttpHandler } from './http-adapter.ts';
import { startHandlerThread, type HandlerThread } from './threaded-handler.ts';
import { answerQueueCall, type QueueDone } from './thread-queue.ts';
import { SERVING_YOUNG_GENERATION_MB } from './young-generation.ts';

export type ToApiThread = { type: 'invoke'; id: number; module: string; event: HttpEvent | ScheduledEvent } | QueueDone;
/** An invocation's answer (an HttpResult for an API handler), and the tenant its handler found (for the access log). */
export interface ApiThreadResult {
  result: unknown;
  tenant: string | undefined;
}
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
  const starts = await Promise.allSettled(
    Array.from({ length: size }, (_, n) =>
      startHandlerThread<{ module: string; event: HttpEvent }, ApiThreadResult>(
        { entry: './api-thread.ts', modules, name: `api-${n}` },
        { onOther: answerQueueCall, youngGenerationMb: SERVING_YOUNG_GENERATION_MB },
      ),
    ),
  );
  const threads = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = starts.find((s) => s.status === 'rejected');
  if (failed) {
    // The threads that did start are ended with it: until 2026-12-07 they ran on, unreachable,
    // and kept the process alive after its start failed.
    await Promise.all(threads.map((t) => t.close()));
    throw failed.reason;
  }
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
        return result as HttpResult;
      },
    close: async () => {
      await Promise.all(threads.map((t) => t.close()));
    },
  };
}

/** A scheduled function's invocations, in a thread of its own. */
export interface ScheduledFunction {
  /** One run, as its schedule starts it; answers the handler's result. */
  invoke(): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * A scheduled function (the maintenance pass) in a thread of its own, as it is a Lambda of its own
 * on AWS: its work, a minute's searches folded into counters or the tenants' sweeps, never holds
 * the API handlers' event loop (in the server's thread, the fold of a minute of 8 clients'
 * searches held the requests in flight for up to 0.3 s: docs/benchmarks.md). The thread starts at
 * the first run; its queue sends go to this thread's queues.
 */
export function scheduledFunction(module: string): ScheduledFunction {
  let thread: Promise<HandlerThread<{ module: string; event: ScheduledEvent }, ApiThreadResult>> | undefined;
  const start = () => {
    const started = startHandlerThread<{ module: string; event: ScheduledEvent }, ApiThreadResult>(
      { entry: './api-thread.ts', modules: [module], name: module.replace(/\//g, '-') },
      { onOther: answerQueueCall, unrefWhenIdle: true },
    );
    // A thread that failed to start is started again at the next run.
    started.catch(() => {
      if (thread === started) thread = undefined;
    });
    return started;
  };
  let closed = false;
  return {
    invoke: async () => {
      if (closed) throw new Error(`${module} is closed`);
      return (await (await (thread ??= start())).call({ module, event: scheduledEvent() })).result;
    },
    // A run in progress is ended with an error.
    close: async () => {
      closed = true;
      const t = thread;
      thread = undefined;
      await (await t?.catch(() => undefined))?.close();
    },
  };
}

/** The event an EventBridge schedule invokes its function with, at this thread's time (a test's `setClock` reaches the pass). */
function scheduledEvent(): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date(nowMs()).toISOString(),
    region: 'us-east-1',
    resources: [],
    detail: {},
  };
}
