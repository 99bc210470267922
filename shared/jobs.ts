import { GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod/mini';
import type { QueueName } from './workers.ts';

/** Messages the workers process. */
export const jobSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('embed'), tenant: z.string().check(z.minLength(1)), item_id: z.number().check(z.int(), z.positive()) }),
  /** `requested_at` (seconds): a build finished at or after it already covers the request. */
  z.object({ type: z.literal('build-index'), tenant: z.string().check(z.minLength(1)), requested_at: z.number().check(z.int(), z.nonnegative()) }),
  z.object({ type: z.literal('train'), tenant: z.string().check(z.minLength(1)), job_name: z.string().check(z.minLength(1)) }),
]);
export type Job = z.output<typeof jobSchema>;

export interface JobQueue {
  send(queue: QueueName, jobs: Job[]): Promise<void>;
  /** Messages waiting or being processed (SQS: approximate). */
  backlog(queue: QueueName): Promise<number>;
}

/** SQS: 10 messages per SendMessageBatch, failed entries retried, then an error. */
export class SqsJobQueue implements JobQueue {
  constructor(private readonly sqs: SQSClient, private readonly urls: Partial<Record<QueueName, string>>) {}
  private url(queue: QueueName): string {
    const url = this.urls[queue];
    if (!url) throw new Error(`No URL for queue ${queue} (QUEUE_URL_${queue.toUpperCase()})`);
    return url;
  }
  async backlog(queue: QueueName): Promise<number> {
    const out = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: this.url(queue), AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
  async send(queue: QueueName, jobs: Job[]): Promise<void> {
    const url = this.url(queue);
    for (let i = 0; i < jobs.length; i += 10) {
      let entries = jobs.slice(i, i + 10).map((j, k) => ({ Id: String(k), MessageBody: JSON.stringify(j) }));
      for (let attempt = 0; entries.length > 0; attempt++) {
        if (attempt >= 5) throw new Error(`SQS refused ${entries.length} messages for ${queue}`);
        const out = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
        const failed = new Set((out.Failed ?? []).map((f) => f.Id));
        entries = entries.filter((e) => failed.has(e.Id));
      }
    }
  }
}

let shared: JobQueue | undefined;

/** The local stack plugs in its in-process queues here. */
export function useJobQueue(q: JobQueue | undefined): void {
  shared = q;
}

/** The container's job queue: SQS from QUEUE_URL_* variables unless the local stack set one. */
export function jobs(): JobQueue {
  shared ??= new SqsJobQueue(new SQSClient({ region: process.env.AWS_REGION || 'us-east-1' }), {
    ...(process.env.QUEUE_URL_EMBEDDING ? { embedding: process.env.QUEUE_URL_EMBEDDING } : {}),
    ...(process.env.QUEUE_URL_TRAINING ? { training: process.env.QUEUE_URL_TRAINING } : {}),
  });
  return shared;
}
