import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assertLocalEndpoint, ensureTable, startDynalite } from '../../local/dynamo.ts';
import { closeTable, makeTable, type TableRef } from '../../shared/data/client.ts';
import { storesFor } from '../../shared/data/index.ts';
import { BUSY_RETRIES, endInterruptedRun, endUndeliveredRun, type TrainingRun, UNSENT_RUN_GRACE_SECONDS } from '../../shared/domain/training-runs.ts';
import { sweepTaskRuns, type TaskLauncher } from '../../shared/recs/launcher.ts';
import type { WorkQueue } from '../../shared/queue/messages.ts';
import { lastDelivery } from '../../shared/queue/sqs-worker.ts';
import { queues } from '../../shared/queue/workers.ts';
import { queuedRun } from '../helpers/fixtures.ts';

/*
 * A training message whose every delivery fails is dead-lettered by its queue; a run it was to
 * start would stay Queued for good. Its last delivery ends it (the training worker, through the
 * handler as Lambda calls it, on a table of its own).
 */

// Every delivery fails before the run starts: with an error that is not the table's throttling by
// name (`failure`'s default), or with a throttling error (a test sets it).
const placing = vi.hoisted(() => ({ failure: (): Error => new Error('ProvisionedThroughputExceededException: rate of requests exceeds the allowed throughput') }));
vi.mock('../../shared/recs/launcher.ts', async (actual) => ({
  ...(await actual<typeof import('../../shared/recs/launcher.ts')>()),
  placeRun: vi.fn(async () => {
    throw placing.failure();
  }),
}));

let table: TableRef;
let stop: () => Promise<void>;
beforeAll(async () => {
  const external = process.env.DDB_ENDPOINT;
  const dyn = external ? undefined : await startDynalite();
  const endpoint = external ?? (dyn?.endpoint as string);
  assertLocalEndpoint(endpoint);
  const name = `t-delivery-${Date.now()}`;
  await ensureTable(endpoint, name);
  table = makeTable(name, endpoint, 'us-east-1');
  // The worker's container settings, read at its first message.
  process.env.TABLE_NAME = name;
  process.env.DYNAMODB_ENDPOINT = endpoint;
  stop = async () => {
    closeTable(table);
    await dyn?.close();
  };
});
afterAll(() => stop());

const T = 'delivery';
const record = (jobName: string, receives: number): SQSRecord =>
  ({ messageId: `m-${jobName}-${receives}`, body: JSON.stringify({ type: 'train', tenant: T, job_name: jobName }), attributes: { ApproximateReceiveCount: String(receives) } }) as unknown as SQSRecord;

describe("a training message's last delivery", () => {
  it('is the one the queue dead-letters after', () => {
    const max = queues.training.maxReceiveCount;
    expect(lastDelivery(record('train-1', max - 1), 'training')).toBe(false);
    expect(lastDelivery(record('train-1', max), 'training')).toBe(true);
    expect(lastDelivery(record('train-1', max + 1), 'training')).toBe(true);
  });

  it('failing, ends the run it never started (Failed, saying why) instead of leaving it Queued for good; earlier ones leave it Queued', async () => {
    const c = storesFor(table).console;
    await c.put(T, 'job', queuedRun(1));
    const { handler } = await import('../../functions/workers/train.ts');
    // A batch of one that fails is thrown back to Lambda whole (Powertools' FullBatchFailureError): the message is received again.
    const deliver = (receives: number) => expect(handler({ Records: [record('train-1', receives)] } as SQSEvent, {} as Context)).rejects.toThrow(/All records failed/);
    const max = queues.training.maxReceiveCount;
    for (let n = 1; n < max; n++) {
      await deliver(n);
      expect((await c.get<TrainingRun>(T, 'job', 1))?.status, `delivery ${n}`).toBe('Queued');
    }
    // Was still Queued after the last one, with the message in the dead-letter queue.
    await deliver(max);
    expect(await c.get<TrainingRun>(T, 'job', 1)).toMatchObject({ status: 'Failed', error: expect.stringMatching(/failed 3 times: ProvisionedThroughputExceededException/) });
  });

  it('leaves a run that started, or whose task was launched (asked to stop too), to what runs it; a run asked to stop that nothing runs ends Stopped', async () => {
    const c = storesFor(table).console;
    const now = Math.floor(Date.now() / 1000);
    await c.put(T, 'job', { ...queuedRun(2), status: 'InProgress', started_at: now });
    await c.put(T, 'job', { ...queuedRun(3), task: { runner: 'ecs', claimed_at: now, ref: 'arn:task/3' } });
    await c.put(T, 'job', { ...queuedRun(4), status: 'Stopping' });
    // Asked to stop while its container task trains: the task's to end (until 2026-12-07 ended Stopped here, the task still logging).
    await c.put(T, 'job', { ...queuedRun(6), status: 'Stopping', started_at: now, task: { runner: 'ecs', claimed_at: now, ref: 'arn:task/6' } });
    for (const id of [2, 3, 4, 6]) await endUndeliveredRun(c, T, `train-${id}`, 'its training message failed');
    expect((await c.get<TrainingRun>(T, 'job', 2))?.status).toBe('InProgress');
    expect((await c.get<TrainingRun>(T, 'job', 3))?.status).toBe('Queued');
    expect((await c.get<TrainingRun>(T, 'job', 4))?.status).toBe('Stopped');
    expect((await c.get<TrainingRun>(T, 'job', 6))?.status).toBe('Stopping');
    expect(await endUndeliveredRun(c, T, 'train-99', 'none such')).toBeNull();
  });

  it('leaves a run that a delivery at once claimed for a task after the last one read it unclaimed (its task being started)', async () => {
    const c = storesFor(table).console;
    await c.put(T, 'job', queuedRun(5));
    const read = (await c.get<TrainingRun>(T, 'job', 5)) as TrainingRun;
    // SQS delivered the message twice at once: the other delivery claims the run, its task not yet started.
    expect(await c.update(T, 'job', 5, { task: { runner: 'ecs', claimed_at: Math.floor(Date.now() / 1000) } }, { status: 'Queued', task: undefined })).toBe(true);
    // Until 2026-12-07 the end held only 'task.ref' absent, which such a claim has: the run was ended Failed as its task started.
    expect(await endInterruptedRun(c, T, read, 'its training message failed 3 times')).toBeNull();
    expect(await c.get<TrainingRun>(T, 'job', 5)).toMatchObject({ status: 'Queued', task: { runner: 'ecs' } });
  });
});

describe('a training message that meets a busy service before its run starts', () => {
  const throttled = () => Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException' });
  const failure = placing.failure;
  afterAll(() => {
    placing.failure = failure;
  });
  const deliver = async (jobName: string, receives: number) => {
    const { handler } = await import('../../functions/workers/train.ts');
    return handler({ Records: [record(jobName, receives)] } as SQSEvent, {} as Context);
  };
  /** The maintenance pass's sweep once the run's mark is UNSENT_RUN_GRACE_SECONDS old: the runs it sent. */
  async function sweep(run: TrainingRun | undefined) {
    const c = storesFor(table).console;
    const sent: unknown[] = [];
    const queue = { send: async (_q: string, bodies: unknown[]) => void sent.push(...bodies), backlog: async () => 0 } as WorkQueue;
    const none: TaskLauncher = { runner: 'test', launch: async () => 'task', inspect: async () => ({ state: 'running' }) };
    await sweepTaskRuns({ console: c, decide: async () => undefined, queue }, T, none, (run?._unsent_since as number) + UNSENT_RUN_GRACE_SECONDS);
    return sent;
  }

  it(`is done with, its run marked for the maintenance pass to send again in a few minutes (not back after 90 minutes, nor ended Failed by its last delivery); the ${BUSY_RETRIES + 1}th ends it Failed`, async () => {
    placing.failure = throttled;
    const c = storesFor(table).console;
    await c.put(T, 'job', queuedRun(10));
    // Even its last delivery (until 2026-12-07 the message failed, back after the visibility
    // timeout, and its last delivery ended the run Failed).
    const max = queues.training.maxReceiveCount;
    for (let k = 1; k <= BUSY_RETRIES; k++) {
      expect(await deliver('train-10', k === 1 ? max : 1)).toEqual({ batchItemFailures: [] });
      const run = await c.get<TrainingRun>(T, 'job', 10);
      expect(run).toMatchObject({ status: 'Queued', error: null, _busy_retries: k, _unsent_since: expect.any(Number) });
      expect(await sweep(run)).toEqual([{ type: 'train', tenant: T, job_name: 'train-10' }]);
    }
    const log = (await c.logs(T, 10, undefined, 100)).lines.map((l) => l.message);
    expect(log[0]).toBe(
      `A service the run needs was busy before it started (Rate of requests exceeds the allowed throughput.): its start is tried again in a few minutes (retry 1 of ${BUSY_RETRIES})`,
    );
    expect(await deliver('train-10', 1)).toEqual({ batchItemFailures: [] });
    expect(await c.get<TrainingRun>(T, 'job', 10)).toMatchObject({
      status: 'Failed',
      error: `A service the run needs stayed busy (throttled) through ${BUSY_RETRIES + 1} attempts of the run; nothing was stored. Start a new run once the load has eased. Last error: Rate of requests exceeds the allowed throughput.`,
    });
  });

  it('a run a container task claimed is left to it: the message fails as before, the run unmarked', async () => {
    placing.failure = throttled;
    const c = storesFor(table).console;
    const now = Math.floor(Date.now() / 1000);
    await c.put(T, 'job', { ...queuedRun(11), task: { runner: 'ecs', claimed_at: now } });
    await expect(deliver('train-11', 1)).rejects.toThrow(/All records failed/);
    const run = await c.get<TrainingRun>(T, 'job', 11);
    expect(run).toMatchObject({ status: 'Queued', task: { runner: 'ecs' } });
    expect(run).not.toHaveProperty('_unsent_since');
    expect(run).not.toHaveProperty('_busy_retries');
  });
});
