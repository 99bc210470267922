/**
 * An API handler module (loaded by local/api-thread.ts through `functions/../test/helpers/...`)
 * whose load fails in the thread named `api-1` only; in any other it answers 200 and answers
 * `ping` on the BroadcastChannel `api-pool-test` with its thread's name, so a test can tell
 * whether that thread still runs.
 */
import { BroadcastChannel, workerData } from 'node:worker_threads';

const name = (workerData as { name?: string } | undefined)?.name;
if (name === 'api-1') throw new Error('this module does not load in api-1');
const channel = new BroadcastChannel('api-pool-test');
channel.onmessage = (m) => {
  if ((m as MessageEvent).data === 'ping') channel.postMessage(`pong ${name}`);
};
channel.unref();

export const handler = async () => ({ statusCode: 200, body: '' });
