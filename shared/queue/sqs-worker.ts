import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { logger } from '../observability.ts';
import { workMessageSchema, type WorkMessage } from './messages.ts';
import { queues, type QueueName } from './workers.ts';

/** Whether this is the last delivery of `record` from `queue`: failing it, the queue dead-letters the message. */
export const lastDelivery = (record: SQSRecord, queue: QueueName): boolean => Number(record.attributes?.ApproximateReceiveCount) >= queues[queue].maxReceiveCount;

/**
 * An SQS worker: every record is parsed as a work message (./messages.ts) and handled on its
 * own; a record whose handler throws is reported in `batchItemFailures`, so only it is retried
 * (and dead-lettered after the queue's maxReceiveCount), never the whole batch. (The log line and
 * error text still say "job", as they did: log queries may look for them.)
 */
export function sqsWorker(handle: (message: WorkMessage, record: SQSRecord) => Promise<void>) {
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(
      event,
      async (record: SQSRecord) => {
        const parsed = workMessageSchema.safeParse(JSON.parse(record.body));
        if (!parsed.success) throw new Error(`Malformed job in message ${record.messageId}`);
        try {
          await handle(parsed.data, record);
        } catch (e) {
          logger.error('job failed', { messageId: record.messageId, job: parsed.data, receiveCount: record.attributes?.ApproximateReceiveCount, error: e as Error });
          throw e;
        }
      },
      // A processor per invocation: it keeps the batch's records and failures on itself (outside
      // Lambda's InvokeStore), and the local stack runs batches of one queue at once in one thread
      // (the embedding queue, 4): with one processor a batch's failure was reported in another's
      // answer (another tenant's batch retried, and dead-lettered in the end, or the failed
      // message taken for done).
      new BatchProcessor(EventType.SQS),
      { context },
    );
}
