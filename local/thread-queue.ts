/**
 * The work queue of a handler thread (an API container's, an SQS worker's): its sends and backlog
 * reads are answered by the main thread's queues, and a send returns only once they hold the
 * messages. Until 2026-12-05 only the API threads had one: a worker's send (the embedding worker's
 * messages for items of another vector width) failed locally for want of a queue URL.
 */
import type { MessagePort, Worker } from 'node:worker_threads';
import { useWorkQueue, workQueue, type WorkMessage } from '../shared/queue/messages.ts';
import type { QueueName } from '../shared/queue/workers.ts';
import { guardedQueue } from './grants.ts';
import { answerSpawnCall } from './task-spawn.ts';

/** A thread's call on the main thread's queues. */
type QueueCall = { type: 'queue'; id: number; op: 'send' | 'backlog'; queue: QueueName; messages: WorkMessage[] };
/** The main thread's answer to one. */
export type QueueDone = { type: 'queue-done'; id: number; value?: number; error?: string };

/**
 * In a handler thread: installs its work queue (`workQueue()`), through `port` to the main thread.
 * Answers the handler of the main thread's messages, which takes its answers (`queue-done`) and
 * says whether the message was one.
 */
export function useMainThreadQueue(port: MessagePort): (m: { type?: string }) => boolean {
  const calls = new Map<number, { resolve: (v: number) => void; reject: (e: Error) => void }>();
  let nextCall = 0;
  const queueCall = (op: 'send' | 'backlog', queue: QueueName, messages: WorkMessage[] = []) =>
    new Promise<number>((resolve, reject) => {
      const id = nextCall++;
      calls.set(id, { resolve, reject });
      port.postMessage({ type: 'queue', id, op, queue, messages } satisfies QueueCall);
    });
  useWorkQueue(
    guardedQueue({
      send: async (queue, messages) => {
        await queueCall('send', queue, messages);
      },
      backlog: (queue) => queueCall('backlog', queue),
    }),
  );
  return (m) => {
    if (m.type !== 'queue-done') return false;
    const done = m as QueueDone;
    const c = calls.get(done.id);
    calls.delete(done.id);
    if (done.error === undefined) c?.resolve(done.value ?? 0);
    else c?.reject(new Error(done.error));
    return true;
  };
}

/** On the main thread: a thread's queue call, answered from this thread's queues, or its request to start a task process (task-spawn.ts); other messages are passed over. */
export function answerQueueCall(m: { type?: string }, worker: Worker): void {
  answerSpawnCall(m, worker);
  if (m.type !== 'queue') return;
  const c = m as QueueCall;
  (c.op === 'send'
    ? workQueue()
        .send(c.queue, c.messages)
        .then(() => 0)
    : workQueue().backlog(c.queue)
  ).then(
    (value) => worker.postMessage({ type: 'queue-done', id: c.id, value } satisfies QueueDone),
    (e: unknown) => worker.postMessage({ type: 'queue-done', id: c.id, error: String(e) } satisfies QueueDone),
  );
}
