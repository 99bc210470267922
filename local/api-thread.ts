/**
 * One API "container" of the local stack: a worker thread that has loaded every handler module
 * and runs the invocations the HTTP server hands it, as a warm Lambda container would (or, with
 * one module, the scheduled maintenance pass's container: api-pool.ts scheduledFunction). Messages
 * its handlers send go to the main thread's queues, and a send returns only once they are there.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { HttpEvent } from '../shared/http/types.ts';
import { lambdaContext, tenantOf } from './http-adapter.ts';
import { asFunction } from './grants.ts';
import { useMainThreadQueue } from './thread-queue.ts';
import { useMainThreadSpawner } from './task-spawn.ts';
import { loadHandler } from './server.ts';
import type { ApiThreadResult, ToApiThread } from './api-pool.ts';
import type { FromHandlerThread } from './threaded-handler.ts';

const port = parentPort;
if (!port) throw new Error('api-thread.ts runs as a worker thread');
const { modules } = workerData as { modules: string[] };
const handlers = new Map(await Promise.all(modules.map(async (m) => [m, await loadHandler(m)] as const)));

const queueDone = useMainThreadQueue(port);
// Its task processes are started by the main thread, which reaps them (task-spawn.ts).
const spawnDone = useMainThreadSpawner(port);

port.on('message', async (m: ToApiThread) => {
  if (queueDone(m) || spawnDone(m) || m.type !== 'invoke') return;
  try {
    const handler = handlers.get(m.module);
    if (!handler) throw new Error(`no handler ${m.module}`);
    const context = lambdaContext(m.module.replace(/\//g, '-'));
    // An API handler gets its HTTP event; a scheduled function (api-pool.ts scheduledFunction) its
    // schedule's, whose time the maintenance pass goes by.
    const result = await asFunction(m.module, () => handler(m.event as HttpEvent, context));
    port.postMessage({ type: 'result', id: m.id, ok: true, value: { result, tenant: tenantOf(context) } satisfies ApiThreadResult } satisfies FromHandlerThread);
  } catch (e) {
    port.postMessage({ type: 'result', id: m.id, ok: false, error: String(e) } satisfies FromHandlerThread);
  }
});
port.postMessage({ type: 'ready' } satisfies FromHandlerThread);
