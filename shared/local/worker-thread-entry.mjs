// Worker threads do not inherit the TypeScript loader: register tsx, then load the real entry
// (workerData.entry, relative to this folder; the SQS worker host by default).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(new URL(workerData?.entry ?? './worker-thread.ts', import.meta.url).href);
