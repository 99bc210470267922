import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { queues, schedules, workers, type QueueName } from '../shared/queue/workers.ts';
import { ServiceFunction, type ServiceResources } from './service-function.ts';

export interface QueuePair {
  queue: sqs.Queue;
  dlq: sqs.Queue;
}

/**
 * Concurrency reserved for each worker, so that a flood of API requests, which may take every
 * other execution of the account's pool (1,000 by default), never leaves the workers none:
 * embeddings and index builds keep up and training runs still start. An SQS worker's event
 * source mapping is capped at the same number (its `maxConcurrency`), as AWS advises: pollers
 * beyond the reservation would only be throttled, and each throttled batch counts as a receive
 * towards the dead-letter queue.
 * - `workers/embed` 10: batches of 10 embeddings, or one tenant's index build (≈ 30 s for 100,000
 *   items); 10 at once embed ≈ 100 items at a time, several times what the local stack's 4 do,
 *   and keep Bedrock (when chosen) within its default request quota.
 * - `workers/train` 2: a run takes up to 15 minutes and 4 GB and reads a tenant's whole event
 *   history; runs beyond two wait in the queue (2 is also the smallest `maxConcurrency`).
 * - `workers/maintain` 2: it runs every minute for up to a minute; 2 lets one run overlap the next
 *   instead of being throttled.
 * 14 in all, which leaves 986 of the default 1,000 to the API functions (AWS requires at least 100
 * unreserved). An account whose concurrency quota is below 114 (new accounts may have 10) cannot
 * reserve: deploy with `-c reserveWorkerConcurrency=false` (the mappings stay capped).
 */
export const WORKER_CONCURRENCY: Readonly<Record<string, number>> = { 'workers/embed': 10, 'workers/train': 2, 'workers/maintain': 2 };

const concurrencyOf = (handler: string): number => {
  const n = WORKER_CONCURRENCY[handler];
  if (n === undefined) throw new Error(`No reserved concurrency chosen for ${handler} (lib/workers.ts WORKER_CONCURRENCY)`);
  return n;
};

/**
 * A queue with its dead-letter queue for each entry of shared/queue/workers.ts `queues`; for each
 * `workers` entry a function fed by an event source mapping that reports partial batch failures;
 * for each `schedules` entry a function run by an EventBridge rule.
 */
export class WorkersConstruct extends Construct {
  readonly queues = new Map<QueueName, QueuePair>();
  readonly functions: ServiceFunction[] = [];

  constructor(scope: Construct, id: string) {
    super(scope, id);
    for (const [name, spec] of Object.entries(queues) as [QueueName, (typeof queues)[QueueName]][]) {
      const dlq = new sqs.Queue(this, `${name}-dlq`, {
        retentionPeriod: Duration.days(14),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const queue = new sqs.Queue(this, `${name}-queue`, {
        visibilityTimeout: Duration.seconds(spec.visibilityTimeoutSeconds),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: spec.maxReceiveCount },
      });
      this.queues.set(name, { queue, dlq });
    }
  }

  /** Creates the worker and scheduled functions, bound to the stack's resources (with their reserved concurrency unless `reserve` is false). */
  addFunctions(resources: Omit<ServiceResources, 'queues'>, opts: { reserve: boolean } = { reserve: true }): void {
    const reserved = (handler: string) => (opts.reserve ? { reservedConcurrentExecutions: concurrencyOf(handler) } : {});
    const all: ServiceResources = { ...resources, queues: new Map([...this.queues].map(([k, v]) => [k, v.queue])) };
    for (const w of workers) {
      const pair = this.queues.get(w.queue) as QueuePair;
      const fn = new ServiceFunction(this, w.handler.replace(/[^A-Za-z0-9]/g, '-'), {
        handler: w.handler,
        timeout: Duration.seconds(w.timeoutSeconds),
        memorySize: w.memoryMb,
        embeddingProvider: resources.embeddingProvider,
        ...reserved(w.handler),
      });
      fn.bindAccess(all, w.access, { verifiesTokens: false });
      fn.addEventSource(new SqsEventSource(pair.queue, { batchSize: w.batchSize, reportBatchItemFailures: true, maxConcurrency: concurrencyOf(w.handler) }));
      this.functions.push(fn);
    }
    for (const s of schedules) {
      const fn = new ServiceFunction(this, s.handler.replace(/[^A-Za-z0-9]/g, '-'), {
        handler: s.handler,
        timeout: Duration.seconds(s.timeoutSeconds),
        embeddingProvider: resources.embeddingProvider,
        ...reserved(s.handler),
      });
      fn.bindAccess(all, s.access, { verifiesTokens: false });
      new events.Rule(this, `${s.handler.replace(/[^A-Za-z0-9]/g, '-')}-schedule`, {
        schedule: events.Schedule.rate(Duration.minutes(s.everyMinutes)),
        targets: [new targets.LambdaFunction(fn)],
      });
      this.functions.push(fn);
    }
  }
}
