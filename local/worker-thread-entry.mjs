// Worker threads do not inherit the TypeScript loader: register tsx, then load the real entry
// (workerData.entry, relative to this folder; the SQS worker host by default).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
// The stack's dynalite over a MessagePort (dynamo-port.ts), before any handler makes its table.
if (workerData?.dynamo) {
  const { useDynamoPort } = await import('./dynamo-port.ts');
  useDynamoPort(workerData.dynamo.endpoint, workerData.dynamo.port);
}
// LOCAL_IAM as the stack read it (local/grants.ts).
if (workerData?.iam === false) (await import('./grants.ts')).enforceGrants(false);
await import(new URL(workerData?.entry ?? './worker-thread.ts', import.meta.url).href);
