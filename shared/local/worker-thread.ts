/**
 * A worker thread hosting one SQS worker handler: the local stand-in for the worker's own Lambda,
 * so a long job (an index build) never blocks the API's event loop.
 */
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import type { SQSEvent } from 'aws-lambda';
import { lambdaContext } from './http-adapter.ts';
import type { SqsHandler } from './queue.ts';

const { modulePath, name } = workerData as { modulePath: string; name: string };
const mod = (await import(pathToFileURL(modulePath).href)) as { handler: SqsHandler };

parentPort?.on('message', async (msg: { id: number; event: SQSEvent }) => {
  try {
    const res = await mod.handler(msg.event, lambdaContext(name, 900_000));
    parentPort?.postMessage({ id: msg.id, ok: true, res: res ?? null });
  } catch (e) {
    parentPort?.postMessage({ id: msg.id, ok: false, error: String(e) });
  }
});
parentPort?.postMessage({ ready: true });
