/**
 * A worker thread hosting one SQS worker handler: the local stand-in for the worker's own Lambda,
 * so a long job (an index build) never blocks the API's event loop.
 */
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import type { SQSEvent } from 'aws-lambda';
import { asFunction } from './grants.ts';
import { lambdaContext } from './http-adapter.ts';
import type { SqsHandler } from './queue.ts';
import type { FromHandlerThread } from './threaded-handler.ts';
import { type QueueDone, useMainThreadQueue } from './thread-queue.ts';
import { useMainThreadSpawner } from './task-spawn.ts';

const { modulePath, name, module } = workerData as { modulePath: string; name: string; module: string };
const mod = (await import(pathToFileURL(modulePath).href)) as { handler: SqsHandler };

const port = parentPort;
if (!port) throw new Error('worker-thread.ts runs as a worker thread');
// Its sends (the embedding worker's messages for items of another vector width) go to the main thread's queues.
const queueDone = useMainThreadQueue(port);
// Its task processes are started by the main thread, which reaps them (task-spawn.ts).
const spawnDone = useMainThreadSpawner(port);

port.on('message', async (msg: { type: 'invoke'; id: number; event: SQSEvent } | QueueDone) => {
  if (queueDone(msg) || spawnDone(msg) || msg.type !== 'invoke') return;
  try {
    const res = await asFunction(module, () => mod.handler(msg.event, lambdaContext(name, 900_000)));
    port.postMessage({ type: 'result', id: msg.id, ok: true, value: res ?? null } satisfies FromHandlerThread);
  } catch (e) {
    port.postMessage({ type: 'result', id: msg.id, ok: false, error: String(e) } satisfies FromHandlerThread);
  }
});
port.postMessage({ type: 'ready' } satisfies FromHandlerThread);
