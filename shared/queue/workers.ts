/**
 * Queues and the SQS-triggered workers that drain them, as data: the CDK stack builds a queue
 * with its dead-letter queue for each entry of `queues`, and a function with an event source
 * mapping (partial batch failures) for each entry of `workers`. Adding a worker is one line here.
 * The messages on the queues are in ./messages.ts; a worker's handler wraps itself in ./sqs-worker.ts.
 */
import type { Access } from '../routes.ts';

export type QueueName = 'embedding' | 'training';

export interface QueueSpec {
  /**
   * Seconds a received message stays invisible: six times the worker's timeout (AWS's guidance for
   * Lambda event sources, so that a throttled invocation is retried before the message reappears).
   * A batch item the worker reports failed is retried after it.
   */
  visibilityTimeoutSeconds: number;
  /** Receives before a message moves to the dead-letter queue. */
  maxReceiveCount: number;
}

export const queues: Record<QueueName, QueueSpec> = {
  embedding: { visibilityTimeoutSeconds: 720, maxReceiveCount: 5 },
  training: { visibilityTimeoutSeconds: 5400, maxReceiveCount: 3 },
};

export interface WorkerSpec {
  /** Module under functions/ exporting an SQS `handler`. */
  handler: string;
  queue: QueueName;
  batchSize: number;
  timeoutSeconds: number;
  memoryMb: number;
  access: Access;
}

/**
 * What a training run does with the table (runTraining), in the worker or in the container task.
 * BatchGetItem: the look-up of the item ids taken before its catalog read that the read did not
 * hold (ItemStore.getMany; until 2026-12-06 not granted, and a run with such an id failed on AWS).
 */
const TRAINING_TABLE: Access['table'] = ['GetItem', 'BatchGetItem', 'UpdateItem', 'PutItem', 'Query', 'BatchWriteItem'];

export const workers: readonly WorkerSpec[] = [
  {
    handler: 'workers/embed',
    queue: 'embedding',
    batchSize: 10,
    timeoutSeconds: 120,
    memoryMb: 3008,
    // It sends embed messages for items embedded at another width (indexer.ts buildIndex).
    // Index builds only (search/): it reads and writes no model.
    access: { table: ['GetItem', 'UpdateItem', 'Query'], bucket: 'readwrite', bucketPrefixes: ['search'], bucketDeletes: ['search'], embeds: true, queues: ['embedding'] },
  },
  {
    handler: 'workers/train',
    queue: 'training',
    batchSize: 1,
    timeoutSeconds: 900,
    memoryMb: 4096,
    // Models only (models/): it stores the run's version and reads it back (withoutErased); no index build.
    access: { table: TRAINING_TABLE, bucket: 'readwrite', bucketPrefixes: ['models'] },
  },
];

/**
 * The training run as a container task (functions/workers/train-task.ts, lib/training-task.ts;
 * locally a child process): what runTraining does, nothing more. The table as the training
 * worker's, and its model written, and read back only to write it again without a user whose
 * erasure began while the run stored it (withoutErased, shared/recs/erase-from-models.ts; until
 * 2026-12-06 not granted, and such a run failed on AWS after storing a version that still held
 * the user).
 */
export const trainingTask = {
  handler: 'workers/train-task',
  access: { table: TRAINING_TABLE, bucketPuts: ['models'] as const, bucketGets: ['models'] as const },
} as const satisfies { handler: string; access: Access };

/**
 * Scheduled maintenance: re-queue lagging embeddings, request index builds, store segment size
 * estimates (UpdateItem), start templates' scheduled training runs (claim the due time with
 * UpdateItem, allocate the job id, put the job record and its log lines, send it to `training`),
 * end runs whose container task stopped (GetItem the run and the version it was storing, ECS
 * DescribeTasks: lib/training-task.ts grants that), fold searches into the analytics counters
 * (GetItem and UpdateItem how far, Query of gsi1, UpdateItem of the counters), sweep ended
 * erasures (Query their rows and the user's events on gsi1, forget the answers stored under the
 * events' keys and delete the events and the sweep's row: DeleteItem), finish erasures cut off
 * before they ended (what DELETE /api/users/{user_id} does: its marker put, the stored versions'
 * artifacts read and written again without the user), find those cut off before 2026-12-07
 * (`adoptRowlessErasures`: GetItem and PutItem of the scan's row, Query of a page of markers,
 * BatchGetItem of the running ones' sweep rows, PutItem of a row for each that has none), and
 * re-key the category index into NFC (`indexCategoriesInNfc`: GetItem and PutItem of the
 * `ITEMCAT#NFC` row, Query of the items, UpdateItem of an item's gsi1 key).
 */
export const schedules = [
  {
    handler: 'workers/maintain',
    everyMinutes: 1,
    timeoutSeconds: 60,
    access: {
      // BatchGetItem: the training runs waiting or running, read again 100 to a read (the sweep of runs);
      // the sweep rows of a page's running erasure markers (`adoptRowlessErasures`, ConsoleStore.erasureSweepsOf).
      table: ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem', 'PutItem', 'BatchWriteItem', 'DeleteItem'],
      // gsi1: tenants, searches to fold, an erased user's events; gsi3: embeddings waiting; gsi4: the changes since a build, counted for a rebuild.
      indexes: ['gsi1', 'gsi2', 'gsi3', 'gsi4'],
      // The index pointers (search/: the embedding sweep's rebuild decisions), read; the stored
      // versions (models/), read and written again without the user, by an erasure it finishes.
      bucket: 'read',
      bucketPrefixes: ['search', 'models'],
      bucketPuts: ['models'],
      queues: ['embedding', 'training'],
      queueDepth: ['embedding'],
    } as Access,
  },
] as const;
