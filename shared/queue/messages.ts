import { GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod/mini';
import { config } from '../config.ts';
import { withRetry } from '../retry.ts';
import type { QueueName } from './workers.ts';

/**
 * The messages the workers process, as they travel on the queues (JSON bodies; the wire format:
 * `type` and these fields). A `train` message names a training run (`job_name`), it is not one.
 */
export const workMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('embed'), tenant: z.string().check(z.minLength(1)), item_id: z.number().check(z.int(), z.positive()) }),
  /** `requested_at` (seconds): a build finished at or after it already covers the request. */
  z.object({ type: z.literal('build-index'), tenant: z.string().check(z.minLength(1)), requested_at: z.number().check(z.int(), z.nonnegative()) }),
  z.object({ type: z.literal('train'), tenant: z.string().check(z.minLength(1)), job_name: z.string().check(z.minLength(1)) }),
]);
export type WorkMessage = z.output<typeof workMessageSchema>;

/** Where messages are sent (the port): SQS on AWS, in-process queues locally (local/queue.ts). */
export interface WorkQueue {
  send(queue: QueueName, messages: WorkMessage[]): Promise<void>;
  /** Messages waiting or being processed (SQS: approximate). */
  backlog(queue: QueueName): Promise<number>;
}

/** SendMessageBatch: 5 attempts in all, each retrying only the entries that failed, at once (no delay). */
const SEND_RETRY = { attempts: 5, baseMs: 0, jitter: 'none' } as const;

/** SQS: 10 messages per SendMessageBatch, failed entries retried, then an error. */
export class SqsWorkQueue implements WorkQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly urls: Partial<Record<QueueName, string>>,
  ) {}
  private url(queue: QueueName): string {
    const url = this.urls[queue];
    if (!url) throw new Error(`No URL for queue ${queue} (QUEUE_URL_${queue.toUpperCase()})`);
    return url;
  }
  async backlog(queue: QueueName): Promise<number> {
    const out = await this.sqs.send(new GetQueueAttributesCommand({ QueueUrl: this.url(queue), AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }));
    return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
  async send(queue: QueueName, messages: WorkMessage[]): Promise<void> {
    const url = this.url(queue);
    for (let i = 0; i < messages.length; i += 10) {
      let entries = messages.slice(i, i + 10).map((m, k) => ({ Id: String(k), MessageBody: JSON.stringify(m) }));
      await withRetry(SEND_RETRY, async () => {
        const out = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
        const failed = new Set((out.Failed ?? []).map((f) => f.Id));
        entries = entries.filter((e) => failed.has(e.Id));
        return entries.length === 0 ? { value: undefined } : { failure: new Error(`SQS refused ${entries.length} messages for ${queue}`), retryable: true };
      });
    }
  }
}

/** Cache of one: the container's work queue (SQS, or the local stack's by `useWorkQueue`). */
let shared: WorkQueue | undefined;

/** The local stack plugs in its in-process queues here. */
export function useWorkQueue(q: WorkQueue | undefined): void {
  shared = q;
}

/** The container's work queue: SQS from QUEUE_URL_* variables unless the local stack set one. */
export function workQueue(): WorkQueue {
  if (!shared) {
    const { region, queues } = config();
    shared = new SqsWorkQueue(new SQSClient({ region }), {
      ...(queues.embedding ? { embedding: queues.embedding } : {}),
      ...(queues.training ? { training: queues.training } : {}),
    });
  }
  return shared;
}
