/**
 * A stand-in for local/dynalite-thread.mjs (tests of `startDynaliteThread`'s close): it says a
 * port, and when told to close it ends its thread 100 ms later (exit code 3) without answering
 * `closed`, as a database thread that dies while it closes.
 */
import { parentPort } from 'node:worker_threads';

parentPort.postMessage({ port: 1 });
parentPort.on('message', (m) => {
  if (m === 'close') setTimeout(() => process.exit(3), 100);
});
