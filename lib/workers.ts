import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { queues, workers, type QueueName } from '../shared/workers.ts';
import { ServiceFunction } from './service-function.ts';

export interface QueuePair {
  queue: sqs.Queue;
  dlq: sqs.Queue;
}

/**
 * A queue with its dead-letter queue for each entry of shared/workers.ts `queues`, and for each
 * `workers` entry a function fed by an event source mapping that reports partial batch failures.
 */
export class WorkersConstruct extends Construct {
  readonly queues = new Map<QueueName, QueuePair>();
  readonly functions: ServiceFunction[] = [];

  constructor(scope: Construct, id: string, props: { table: ITable; bucket: IBucket }) {
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
    for (const w of workers) {
      const pair = this.queues.get(w.queue) as QueuePair;
      const fn = new ServiceFunction(this, w.handler.replace(/[^A-Za-z0-9]/g, '-'), {
        handler: w.handler,
        timeout: Duration.seconds(w.timeoutSeconds),
        memorySize: w.memoryMb,
      });
      fn.bindTable(props.table, w.access);
      if (w.access.bucket === 'read') props.bucket.grantRead(fn);
      if (w.access.bucket === 'readwrite') props.bucket.grantReadWrite(fn);
      fn.addEnvironment('ARTIFACT_BUCKET', props.bucket.bucketName);
      fn.addEventSource(new SqsEventSource(pair.queue, { batchSize: w.batchSize, reportBatchItemFailures: true }));
      this.functions.push(fn);
    }
  }
}
