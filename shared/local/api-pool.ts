import { Worker } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import type { HttpEvent, HttpResult } from '../http/types.ts';
import { jobs, type Job } from '../jobs.ts';
import type { QueueName } from '../workers.ts';
import type { LambdaHttpHandler } from './http-adapter.ts';

export type ToApiThread =
  | { type: 'invoke'; id: number; module: string; event: HttpEvent }
  | { type: 'jobs-done'; id: number; value?: number; error?: string };
type FromApiThread =
  | { type: 'ready' }
  | { type: 'result'; id: number; result?: HttpResult; error?: string }
  | { type: 'jobs'; id: number; op: 'send' | 'backlog'; queue: QueueName; jobs: Job[] };

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
  const threads = await Promise.all(
    Array.from({ length: size }, async (_, n) => {
      const worker = new Worker(new URL('./worker-thread-entry.mjs', import.meta.url), {
        workerData: { entry: './api-thread.ts', modules, name: `api-${n}` },
        env: { ...process.env },
      });
      const pending = new Map<number, { resolve: (r: HttpResult) => void; reject: (e: Error) => void }>();
      await new Promise<void>((resolve, reject) => {
        worker.once('error', reject);
        worker.on('message', (m: FromApiThread) => {
          if (m.type === 'ready') resolve();
          else if (m.type === 'result') {
            const p = pending.get(m.id);
            pending.delete(m.id);
            if (m.result) p?.resolve(m.result);
            else p?.reject(new Error(m.error ?? 'no result'));
          } else if (m.type === 'jobs') {
            // The queues live in this thread: the handler's send returns once they hold the jobs.
            (m.op === 'send' ? jobs().send(m.queue, m.jobs).then(() => 0) : jobs().backlog(m.queue)).then(
              (value) => worker.postMessage({ type: 'jobs-done', id: m.id, value } satisfies ToApiThread),
              (e: unknown) => worker.postMessage({ type: 'jobs-done', id: m.id, error: String(e) } satisfies ToApiThread),
            );
          }
        });
      });
      worker.on('error', (e) => {
        for (const p of pending.values()) p.reject(e);
        pending.clear();
      });
      return { worker, pending };
    }),
  );
  let turn = 0;
  let nextId = 0;
  return {
    handler:
      (module: string) =>
      (event: HttpEvent, _context: Context): Promise<HttpResult> => {
        // The least busy thread (round robin among equals).
        let best = threads[turn++ % threads.length] as (typeof threads)[number];
        for (const t of threads) if (t.pending.size < best.pending.size) best = t;
        const id = nextId++;
        return new Promise<HttpResult>((resolve, reject) => {
          best.pending.set(id, { resolve, reject });
          best.worker.postMessage({ type: 'invoke', id, module, event } satisfies ToApiThread);
        });
      },
    close: async () => {
      await Promise.all(threads.map((t) => t.worker.terminate()));
    },
  };
}
