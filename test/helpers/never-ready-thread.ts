/**
 * A handler thread's entry (local/worker-thread-entry.mjs `entry`) whose loading never ends, as a
 * module held at import by a call that is never answered: the thread stays alive and never says
 * `ready` (local/threaded-handler.ts startHandlerThread). It posts `{ type: 'loading' }` first, so
 * a test's `onOther` gets hold of its Worker.
 */
import { parentPort } from 'node:worker_threads';

parentPort?.postMessage({ type: 'loading' });
await new Promise<never>(() => {
  setInterval(() => undefined, 60_000);
});
