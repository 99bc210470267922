/**
 * The training runs waiting or running (`ConsoleStore.activeRuns`), which the maintenance pass's
 * sweep reads every minute: until 2026-12-05 it read each tenant's whole run history instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoConsoleStore } from '../../shared/data/console.ts';
import { TrainingRun as RunEntity } from '../../shared/data/entities.ts';
import type { TrainingRun } from '../../shared/domain/training-runs.ts';
import { sweepTaskRuns } from '../../shared/recs/launcher.ts';
import { listTrainingRuns, trainingRunName } from '../../shared/domain/training-runs.ts';
import { setClock } from '../../shared/clock.ts';
import { interceptSigned, testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

const run = (id: number, status: TrainingRun['status']): TrainingRun => ({
  id,
  job_name: trainingRunName(id),
  template_id: 1,
  options: { algorithm: 'popularity', epochs: 5, batch_size: 256, learning_rate: 0.001 },
  status,
  progress: 0,
  created: 1_700_000_000 + id,
  started_at: null,
  finished_at: null,
  error: null,
  model_version: null,
  metrics: null,
});

/** A run's status as a writer older than the index of active runs sets it: its index key left as it is. */
const setStatusAsBefore = (tenant: string, id: number, status: TrainingRun['status']) =>
  db.table.doc.send(
    new UpdateCommand({
      TableName: db.table.tableName,
      Key: RunEntity.key({ tenant, id }),
      UpdateExpression: 'SET #s = :s',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':s': status },
    }),
  );

/** A run's row as a writer older than the index of active runs stored it: its primary key only. */
const putAsBefore = (tenant: string, r: TrainingRun) => db.table.doc.send(new PutCommand({ TableName: db.table.tableName, Item: { ...RunEntity.key({ tenant, id: r.id }), ...r } }));

/**
 * The store over the table, counting the rows its Queries read: those scanned (`ScannedCount`),
 * before any FilterExpression, so a filter over the whole history counts every run it went over
 * (until 2026-12-05 this counted the rows answered, which a filter had already cut down).
 */
function counting() {
  const read = { rows: 0, gets: 0, batches: 0 };
  const queries = interceptSigned<unknown>(db.table, 'query', async (_p, call) => {
    const out = (await call()) as { ScannedCount?: number };
    read.rows += out.ScannedCount ?? 0;
    return out;
  });
  // And the runs read alone (a consistent GetItem each).
  const gets = interceptSigned<unknown>(queries, 'getItem', (_p, call) => {
    read.gets++;
    return call();
  });
  // Or 100 to a BatchGetItem.
  const table = interceptSigned<unknown>(gets, 'batchGetItem', (_p, call) => {
    read.batches++;
    return call();
  });
  return { c: dynamoConsoleStore(table), read };
}

const ids = (runs: TrainingRun[]) => runs.map((r) => r.id);

describe('the training runs waiting or running', () => {
  it('holds the runs Queued, InProgress or Stopping, newest first, as each write of a status puts them in or takes them out', async () => {
    const T = 'active-writes';
    const c = db.stores.console;
    expect(await c.replace(T, 'job', run(1, 'Queued'), 'new')).toBe(true);
    await c.put(T, 'job', run(2, 'Queued'));
    await c.put(T, 'job', run(3, 'Completed'));
    expect(ids(await c.activeRuns(T))).toEqual([2, 1]);
    expect(await c.update(T, 'job', 1, { status: 'InProgress', started_at: 1 }, { status: 'Queued' })).toBe(true);
    expect(await c.updated(T, 'job', 2, { status: 'Stopping' })).toMatchObject({ status: 'Stopping' });
    expect((await c.activeRuns<TrainingRun>(T)).map((r) => [r.id, r.status])).toEqual([
      [2, 'Stopping'],
      [1, 'InProgress'],
    ]);
    // A change that writes no status leaves the run where it is; the ones that end it take it out.
    expect(await c.update(T, 'job', 1, { progress: 0.5 })).toBe(true);
    expect(ids(await c.activeRuns(T))).toEqual([2, 1]);
    expect(await c.update(T, 'job', 1, { status: 'Completed', progress: 1 }, { status: 'InProgress' })).toBe(true);
    expect(await c.updated(T, 'job', 2, { status: 'Stopped' }, { status: 'Stopping' })).toMatchObject({ status: 'Stopped' });
    expect(await c.activeRuns(T)).toEqual([]);
    // The records read as before: no index key shows.
    expect(await c.get(T, 'job', 1)).toEqual({ ...run(1, 'Completed'), status: 'Completed', progress: 1, started_at: 1 });
    // Another tenant's are its own.
    await c.put('active-other', 'job', run(1, 'Queued'));
    expect(ids(await c.activeRuns('active-other'))).toEqual([1]);
    expect(await c.activeRuns(T)).toEqual([]);
  });

  it("reads the runs waiting or running, not the tenant's whole history", async () => {
    const T = 'active-history';
    const c = db.stores.console;
    for (let id = 1; id <= 300; id++) await c.put(T, 'job', run(id, id === 120 ? 'InProgress' : 'Completed'));
    const first = counting();
    expect(ids(await first.c.activeRuns(T, { upkeep: true }))).toEqual([120]);
    const later = counting();
    expect(ids(await later.c.activeRuns(T, { upkeep: true }))).toEqual([120]);
    // The first read goes over the history once (runs stored before the index); later ones read the
    // index (run 120) and the runs stored since (none): until 2026-12-05, 300 rows every minute.
    expect(first.read.rows).toBeGreaterThanOrEqual(300);
    expect(later.read.rows).toBe(1);
    // The maintenance pass's sweep of runs reads those.
    const sweep = counting();
    const runner = { runner: 'none', launch: async () => 'x', inspect: async () => ({ state: 'running' as const }) };
    const ended = await sweepTaskRuns({ console: sweep.c, decide: async () => undefined, queue: { send: async () => undefined, backlog: async () => 0 } }, T, runner, 1_900_000_000);
    expect(ended).toEqual({ ended: [], sent: [] });
    expect(sweep.read.rows).toBe(1);
  });

  it('reads the runs waiting or running again 100 to a read, not one read each (a tenant with many runs queued)', async () => {
    // Found by a review (2026-12-06): one consistent GetItem a run, one after another, each pass.
    const T = 'active-many';
    const c = db.stores.console;
    for (let id = 1; id <= 250; id++) await c.put(T, 'job', run(id, id % 50 === 0 ? 'InProgress' : 'Queued'));
    await c.activeRuns(T, { upkeep: true });
    const sweep = counting();
    const runs = await sweep.c.activeRuns<TrainingRun>(T, { upkeep: true });
    expect(ids(runs)).toEqual(Array.from({ length: 250 }, (_, k) => 250 - k));
    expect(runs.filter((r) => r.status === 'InProgress').map((r) => r.id)).toEqual([250, 200, 150, 100, 50]);
    // The upkeep's marker, then the 250 runs in three reads.
    expect([sweep.read.gets, sweep.read.batches]).toEqual([1, 3]);
    // A page of one status reads its runs again 100 to a read as well.
    const page = counting();
    expect(ids((await page.c.activeRunsIn<TrainingRun>(T, 'Queued', { limit: 100 }))?.rows ?? [])).toEqual(Array.from({ length: 102 }, (_, k) => 249 - k).filter((id) => id % 50 !== 0));
    // The marker, then the page's 100 runs and one more (to tell has_more): two reads.
    expect([page.read.gets, page.read.batches]).toEqual([1, 2]);
  });

  it('GET /api/training-jobs?status= of a status waiting or running reads those runs only, paged newest first', async () => {
    // Found by a review (2026-12-05): the console's Overview asks for each of the three statuses,
    // and each page filtered the tenant's whole history (a few matches never filled it).
    const T = 'active-list';
    const c = db.stores.console;
    for (let id = 1; id <= 300; id++) await c.put(T, 'job', run(id, id === 50 || id === 250 ? 'InProgress' : id === 290 ? 'Queued' : 'Failed'));
    // The maintenance sweep's first upkeep of the tenant (the marker: its runs are indexed).
    await c.activeRuns(T, { upkeep: true });
    const reader = counting();
    const first = await listTrainingRuns(reader.c, T, { limit: 1, status: 'InProgress' });
    expect(first.data.map((r) => r.job_name)).toEqual([trainingRunName(250)]);
    expect([first.has_more, first.next_cursor]).toEqual([true, trainingRunName(250)]);
    const second = await listTrainingRuns(reader.c, T, { limit: 1, status: 'InProgress', starting_after: trainingRunName(250) });
    expect(second.data.map((r) => r.job_name)).toEqual([trainingRunName(50)]);
    expect(second.has_more).toBe(false);
    expect((await listTrainingRuns(reader.c, T, { limit: 100, status: 'Queued' })).data.map((r) => r.job_name)).toEqual([trainingRunName(290)]);
    // The status's runs in the index (250 and 50, then 50, then 290), not 300 runs.
    expect(reader.read.rows).toBe(4);
    // An ended status pages the history as before.
    expect((await listTrainingRuns(c, T, { limit: 2, status: 'Failed' })).data.map((r) => r.job_name)).toEqual([trainingRunName(300), trainingRunName(299)]);
  });

  it("a page of one status reads that status's runs in the index up to the page's end, not every run waiting or running", async () => {
    // Found by a review (2026-12-05): the page read every run in the index, one GetItem each, then
    // kept those of the status: 199 runs Queued and one InProgress took 200 GetItems to list the
    // one InProgress, and the console's Overview asks for each of the three statuses.
    const T = 'active-status-page';
    const c = db.stores.console;
    await c.put(T, 'job', run(1, 'InProgress'));
    await c.put(T, 'job', run(2, 'Stopping'));
    for (let id = 3; id <= 201; id++) await c.put(T, 'job', run(id, 'Queued'));
    await c.activeRuns(T, { upkeep: true });
    const reader = counting();
    const inProgress = await listTrainingRuns(reader.c, T, { limit: 1, status: 'InProgress' });
    expect([inProgress.data.map((r) => r.job_name), inProgress.has_more]).toEqual([[trainingRunName(1)], false]);
    // The marker, then the one run.
    expect(reader.read).toEqual({ rows: 1, gets: 1, batches: 1 });
    // Queued, two a page: the page and one more (to tell has_more), then from the cursor on.
    const queued = counting();
    const first = await listTrainingRuns(queued.c, T, { limit: 2, status: 'Queued' });
    expect([first.data.map((r) => r.job_name), first.has_more]).toEqual([[trainingRunName(201), trainingRunName(200)], true]);
    const next = await listTrainingRuns(queued.c, T, { limit: 2, status: 'Queued', starting_after: trainingRunName(200) });
    expect(next.data.map((r) => r.job_name)).toEqual([trainingRunName(199), trainingRunName(198)]);
    expect(queued.read).toEqual({ rows: 6, gets: 2, batches: 2 });
    // A run whose key in the index names another status than its row (the index lagging its table
    // on AWS; here an older writer's UpdateItem, which leaves the key) is read again and left out...
    await setStatusAsBefore(T, 1, 'Stopping');
    expect((await listTrainingRuns(c, T, { limit: 5, status: 'InProgress' })).data).toEqual([]);
    // ...and the upkeep keys it by the status it has.
    expect(ids(await c.activeRuns(T, { upkeep: true })).slice(-2)).toEqual([2, 1]);
    expect((await listTrainingRuns(c, T, { limit: 5, status: 'Stopping' })).data.map((r) => r.job_name)).toEqual([trainingRunName(2), trainingRunName(1)]);
  });

  it("a list of one status before the tenant's first upkeep (just after the index's deploy) filters the runs, as before the index", async () => {
    // Found by a review (2026-12-05): runs InProgress before the index had no key in it until the
    // maintenance sweep's first upkeep of the tenant, and ?status=InProgress answered none of them.
    const T = 'active-not-yet';
    const c = db.stores.console;
    await putAsBefore(T, run(1, 'InProgress'));
    await putAsBefore(T, run(2, 'Completed'));
    await putAsBefore(T, run(3, 'InProgress'));
    const before = await listTrainingRuns(c, T, { limit: 1, status: 'InProgress' });
    expect([before.data.map((r) => r.job_name), before.has_more]).toEqual([[trainingRunName(3)], true]);
    expect((await listTrainingRuns(c, T, { limit: 5, status: 'InProgress', starting_after: trainingRunName(3) })).data.map((r) => r.job_name)).toEqual([trainingRunName(1)]);
    // From the upkeep on, the index: the same runs, and the history is no longer read.
    await c.activeRuns(T, { upkeep: true });
    const reader = counting();
    expect((await listTrainingRuns(reader.c, T, { limit: 5, status: 'InProgress' })).data.map((r) => r.job_name)).toEqual([trainingRunName(3), trainingRunName(1)]);
    expect(reader.read).toEqual({ rows: 2, gets: 1, batches: 1 });
    // A tenant with no runs yet is indexed by its first upkeep too (its first run is then listed from the index).
    await c.activeRuns('active-none', { upkeep: true });
    await c.put('active-none', 'job', run(1, 'Queued'));
    const fresh = counting();
    expect((await listTrainingRuns(fresh.c, 'active-none', { limit: 5, status: 'Queued' })).data.map((r) => r.job_name)).toEqual([trainingRunName(1)]);
    expect(fresh.read).toEqual({ rows: 1, gets: 1, batches: 1 });
  });

  it('finds a run an older writer stored after a newer writer stored a higher id (ids are allocated before runs are stored)', async () => {
    // Found by a review (2026-12-05): the marker moved to the highest id read, so run 5, stored by
    // an older writer after run 6 was stored and read, was never read again nor indexed.
    const T = 'active-late';
    const c = db.stores.console;
    const NOW = 1_800_010_000;
    const restore = setClock({ nowMs: () => NOW * 1000 });
    try {
      for (let id = 1; id <= 4; id++) await putAsBefore(T, run(id, 'Completed'));
      // Run 5's id is allocated by an older writer; run 6 is stored by a newer one, then read.
      await c.put(T, 'job', { ...run(6, 'Queued'), created: NOW - 5 });
      expect(ids(await c.activeRuns(T, { upkeep: true }))).toEqual([6]);
      await putAsBefore(T, { ...run(5, 'InProgress'), created: NOW - 6 });
      const later = counting();
      expect(ids(await later.c.activeRuns(T, { upkeep: true }))).toEqual([6, 5]);
      // Read again since the marker stopped before the runs of the last 15 minutes (5 and 6)...
      expect(later.read.rows).toBe(2 + 2);
      // ...and not once they are older.
      setClock({ nowMs: () => (NOW + 16 * 60) * 1000 });
      await c.activeRuns(T, { upkeep: true });
      const settled = counting();
      expect(ids(await settled.c.activeRuns(T, { upkeep: true }))).toEqual([6, 5]);
      expect(settled.read.rows).toBe(2);
    } finally {
      restore();
    }
  });

  it('finds a run a writer of the keys of before 2026-12-05 (partition ACTIVEJOB, by id) moved to another status after the first upkeep', async () => {
    // Found by a review (2026-12-06): the upkeep re-keyed a run in the old keys only when it read
    // the run's row (the first upkeep, then the runs above the marker), so a run at or below the
    // marker that an older writer (a training task started before the deploy, taking up its run)
    // moved to InProgress left the index for the old partition: in no list of its status, and not
    // in the sweep of runs, which ends those whose task stopped.
    const T = 'active-old-keys';
    const c = db.stores.console;
    await c.put(T, 'job', run(1, 'Queued'));
    expect(ids(await c.activeRuns(T, { upkeep: true }))).toEqual([1]);
    // The older writer's UpdateItem of the status, with the index key it wrote.
    await db.table.doc.send(
      new UpdateCommand({
        TableName: db.table.tableName,
        Key: RunEntity.key({ tenant: T, id: 1 }),
        UpdateExpression: 'SET #s = :s, gsi3pk = :pk, gsi3sk = :sk',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': 'InProgress', ':pk': `TENANT#${T}#ACTIVEJOB`, ':sk': '0000000000000001' },
      }),
    );
    expect(ids(await c.activeRuns(T, { upkeep: true }))).toEqual([1]);
    expect((await listTrainingRuns(c, T, { limit: 5, status: 'InProgress' })).data.map((r) => r.job_name)).toEqual([trainingRunName(1)]);
  });

  it('keys a run an older writer moved to another status while the upkeep keyed it, before the marker passes it', async () => {
    // Found by a review (2026-12-06): the upkeep's write of a run's key is conditional on the status
    // it read; when an older writer (a training task started before the index, taking up its run)
    // changed the status in between, the write failed, the run was left with no key, and the marker
    // moved past it: in no list of its status, and not in the sweep of runs, until it ended.
    const T = 'active-raced';
    await putAsBefore(T, run(1, 'Queued'));
    let raced = false;
    const racing = interceptSigned<unknown>(db.table, 'updateItem', async (_p, call) => {
      if (!raced) {
        raced = true;
        await setStatusAsBefore(T, 1, 'InProgress');
      }
      return call();
    });
    await dynamoConsoleStore(racing).activeRuns(T, { upkeep: true });
    expect(raced).toBe(true);
    const c = db.stores.console;
    expect(ids(await c.activeRuns(T, { upkeep: true }))).toEqual([1]);
    expect((await listTrainingRuns(c, T, { limit: 5, status: 'InProgress' })).data.map((r) => r.job_name)).toEqual([trainingRunName(1)]);
  });

  it('finds runs an older writer stored or ended without the index (an upgrade), and takes ended ones out', async () => {
    const T = 'active-upgrade';
    const c = db.stores.console;
    await putAsBefore(T, run(1, 'InProgress'));
    await putAsBefore(T, run(2, 'Failed'));
    expect(ids(await c.activeRuns(T, { upkeep: true }))).toEqual([1]);
    // Stored by an older writer after the first read: read once, as the runs above the highest id read.
    await putAsBefore(T, run(3, 'Queued'));
    expect(ids(await c.activeRuns(T, { upkeep: true }))).toEqual([3, 1]);
    // Ended by an older writer's UpdateItem, which leaves the index key: not answered, and taken out.
    await setStatusAsBefore(T, 1, 'Completed');
    const ended = counting();
    expect(ids(await ended.c.activeRuns(T, { upkeep: true }))).toEqual([3]);
    const after = counting();
    expect(ids(await after.c.activeRuns(T, { upkeep: true }))).toEqual([3]);
    // The index (runs 3 and 1, then 3 alone) and the runs stored since (none).
    expect([ended.read.rows, after.read.rows]).toEqual([2, 1]);
  });
});
