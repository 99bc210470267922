import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { queues, schedules, workers, type QueueName } from '../shared/workers.ts';
import { ServiceFunction, type ServiceResources } from './service-function.ts';

export interface QueuePair {
  queue: sqs.Queue;
  dlq: sqs.Queue;
}

/**
 * A queue with its dead-letter queue for each entry of shared/workers.ts `queues`; for each
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

  /** Creates the worker and scheduled functions, bound to the stack's resources. */
  addFunctions(resources: Omit<ServiceResources, 'queues'>): void {
    const all: ServiceResources = { ...resources, queues: new Map([...this.queues].map(([k, v]) => [k, v.queue])) };
    for (const w of workers) {
      const pair = this.queues.get(w.queue) as QueuePair;
      const fn = new ServiceFunction(this, w.handler.replace(/[^A-Za-z0-9]/g, '-'), {
        handler: w.handler,
        timeout: Duration.seconds(w.timeoutSeconds),
        memorySize: w.memoryMb,
        embeddingProvider: resources.embeddingProvider,
      });
      fn.bindAccess(all, w.access, { verifiesTokens: false });
      fn.addEventSource(new SqsEventSource(pair.queue, { batchSize: w.batchSize, reportBatchItemFailures: true }));
      this.functions.push(fn);
    }
    for (const s of schedules) {
      const fn = new ServiceFunction(this, s.handler.replace(/[^A-Za-z0-9]/g, '-'), { handler: s.handler, timeout: Duration.seconds(s.timeoutSeconds), embeddingProvider: resources.embeddingProvider });
      fn.bindAccess(all, s.access, { verifiesTokens: false });
      new events.Rule(this, `${s.handler.replace(/[^A-Za-z0-9]/g, '-')}-schedule`, {
        schedule: events.Schedule.rate(Duration.minutes(s.everyMinutes)),
        targets: [new targets.LambdaFunction(fn)],
      });
      this.functions.push(fn);
    }
  }
}
