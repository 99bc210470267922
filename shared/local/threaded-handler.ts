import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { SqsHandler } from './queue.ts';

export interface ThreadedHandler {
  handler: SqsHandler;
  close(): Promise<void>;
}

/** Runs an SQS worker module in its own thread (with its own module state, as its own Lambda would). */
export async function threadedHandler(module: string): Promise<ThreadedHandler> {
  const modulePath = fileURLToPath(new URL(`../../functions/${module}.ts`, import.meta.url));
  const worker = new Worker(new URL('./worker-thread-entry.mjs', import.meta.url), {
    workerData: { modulePath, name: module.replace(/\//g, '-') },
    env: { ...process.env },
  });
  worker.unref();
  const pending = new Map<number, { resolve: (r: SQSBatchResponse | void) => void; reject: (e: Error) => void }>();
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    const onMessage = (m: { ready?: boolean }) => {
      if (m.ready) {
        worker.off('message', onMessage);
        resolve();
      }
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
  worker.on('message', (m: { id: number; ok: boolean; res?: SQSBatchResponse | null; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.res ?? undefined);
    else p.reject(new Error(m.error));
  });
  worker.on('error', (e) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  });
  return {
    handler: (event: SQSEvent) =>
      new Promise<SQSBatchResponse | void>((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ id, event });
      }).finally(() => {
        if (pending.size === 0) worker.unref();
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}
