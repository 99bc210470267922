import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import { dynamoExposureStore } from '../../shared/data/experiments.ts';
import { controlDepsOf } from '../../shared/control/deps.ts';
import { dynamoSearchLogStore } from '../../shared/data/search-analytics.ts';
import { dayOf } from '../../shared/clock.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { listEndpoints } from '../../shared/domain/endpoints.ts';
import { listModels } from '../../shared/domain/model-versions.ts';
import { DEMO_SIZES } from '../../shared/demo/generate.ts';
import { startDemo } from '../../shared/demo/run.ts';
import { demoStatus, planDemo, seedDemo, type DemoDeps } from '../../shared/demo/seed.ts';
import type { WorkMessage, WorkQueue } from '../../shared/queue/messages.ts';
import type { TrainingRun } from '../../shared/domain/training-runs.ts';
import { runTraining } from '../../shared/recs/trainer.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * The demo seed through the domain layer on a real table: stopped part way, resumed, finished,
 * with nothing stored twice. Training runs as the training worker would (the queue calls it);
 * embeddings are left to the worker, which is not here.
 */

const T = 'demo';
const size = DEMO_SIZES.small;
let db: TestTable;
let dir: string;
let blobs: FolderBlobStore;
let deps: DemoDeps;
const sent: WorkMessage[] = [];

/** Runs a training run as the training worker would. */
const runRun = (j: WorkMessage) => {
  if (j.type === 'train') void runTraining({ console: db.stores.console, events: db.stores.events, items: db.stores.items, blobs }, j.tenant, j.job_name);
};

/** The seed's dependencies for `tenant`, its queue sending to `send` (by default: training runs at once). */
function depsFor(tenant: string, send: (j: WorkMessage) => void = runRun): DemoDeps {
  const queue: WorkQueue = {
    send: async (_queue, jobs) => {
      sent.push(...jobs);
      for (const j of jobs) send(j);
    },
    backlog: async () => 0,
  };
  const exposures = dynamoExposureStore(db.table);
  const log = dynamoSearchLogStore(db.table);
  const serving = {
    search: { items: db.stores.items, events: db.stores.events, blobs, embedder: new HashingEmbedding(512) },
    control: controlDepsOf(db.stores),
    synonymSets: async () => [],
    traffic: { exposures, recorder: log, authorized: Promise.resolve() },
  };
  return { stores: db.stores, exposures, queue, tenant, searching: { serving, log } };
}

beforeAll(async () => {
  db = await testTable();
  dir = mkdtempSync(join(tmpdir(), 'demo-seed-'));
  blobs = new FolderBlobStore(join(dir, 'blobs'));
  deps = depsFor(T);
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function countEvents(): Promise<{ all: number; ids: Set<number> }> {
  const ids = new Set<number>();
  let all = 0;
  await db.stores.events.forEachPage(T, (page) => {
    all += page.length;
    for (const e of page) ids.add(e.id);
  });
  return { all, ids };
}

describe('demo seed', () => {
  it('stops between steps, resumes where it was (a batch it had begun is completed under its own ids), and ends with each item and event once', async () => {
    const file = join(dir, 'demo.json');
    planDemo(file, size);
    expect(demoStatus(file)).toBe('seeding');

    // Stopped once its items are stored.
    const abort = new AbortController();
    const lines: string[] = [];
    const stopped = await seedDemo(deps, {
      file,
      signal: abort.signal,
      embedWaitMs: 0,
      log: (l) => {
        lines.push(l);
        if (/items stored/.test(l)) abort.abort();
      },
    });
    expect(stopped).toBeUndefined();
    expect(demoStatus(file)).toBe('seeding');
    expect(await countEvents()).toMatchObject({ all: 0 });
    // As if the start had stopped in the middle of the items' batch: its ids reserved, not all written.
    const progress = JSON.parse(readFileSync(file, 'utf8'));
    expect(progress.items['0']).toEqual({ first: 1, done: true });
    progress.items['0'].done = false;
    writeFileSync(file, JSON.stringify(progress));

    const again: string[] = [];
    const resumedAt = Date.now() / 1000;
    const summary = await seedDemo(deps, { file, embedWaitMs: 0, log: (l) => again.push(l) });
    expect(again[0]).toMatch(/^resuming the seed of the demo shop/);
    expect(summary).toMatchObject({ items: size.items, users: size.users, events: size.events, modelVersion: 1 });
    expect(demoStatus(file)).toBe('done');

    const items = await db.stores.items.list(T, { limit: 100 });
    expect(items.rows.map((i) => i.id)).toEqual(Array.from({ length: size.items }, (_, i) => i + 1));
    // The shoppers' searches (one per 8 shoppers), some followed by events carrying their request_id.
    const searched = summary?.searches;
    expect(searched).toMatchObject({ searches: 25 });
    const followed = Object.values(searched?.events ?? {}).reduce((a, b) => a + b, 0);
    expect(searched?.events.view).toBeGreaterThan(0);
    expect(searched?.withoutResults).toBeGreaterThan(0);
    const events = await countEvents();
    expect(events.all).toBe(size.events + followed);
    expect(events.ids.size).toBe(size.events + followed);
    // Search analytics counts them: every search, those without results, the views attributed.
    // From the day the resumed seed began (its searches' day) to today: one day, or two if the run crossed midnight UTC.
    const { byQuery } = await deps.searching.log.counts(T, dayOf(resumedAt), dayOf(Date.now() / 1000), 10_000);
    const sum = (f: (c: { searches: number; no_results: number; events: Record<string, number> }) => number) => [...byQuery.values()].reduce((a, c) => a + f(c), 0);
    expect(sum((c) => c.searches)).toBe(25);
    expect(sum((c) => c.no_results)).toBe(searched?.withoutResults);
    expect(sum((c) => c.events.view ?? 0)).toBe(searched?.events.view);
    expect(sum((c) => c.events.purchase ?? 0)).toBe(searched?.events.purchase);
    // Each item was sent to be embedded (once per attempt that stored it), then an index build asked for.
    expect(sent.filter((j) => j.type === 'embed').length).toBeGreaterThanOrEqual(size.items);
    expect(sent.some((j) => j.type === 'build-index')).toBe(true);

    const models = (await listModels(db.stores.console, T, { limit: 100 })).data;
    expect(models).toHaveLength(1);
    expect(models[0]).toMatchObject({ version: 1, status: 'Approved', endpoints: ['main'], metrics: { interactions: size.events } });
    expect((await listEndpoints(db.stores.console, T, { limit: 100 })).data).toMatchObject([{ endpoint_name: 'main', is_default: true, model_version: 1 }]);
  }, 60_000);

  it('reports a damaged demo.json through its log and seeds nothing, the start going on', async () => {
    const file = join(dir, 'damaged.json');
    planDemo(file, size);
    // Cut short, as by a disk error; then valid JSON that is not a record.
    for (const text of [readFileSync(file, 'utf8').slice(0, 40), '{"version":1}']) {
      writeFileSync(file, text);
      const lines: string[] = [];
      const run = startDemo({ table: db.table, queue: deps.queue, tenant: 'damaged', file, log: (l) => lines.push(l) });
      expect(run).toBeUndefined();
      await new Promise((r) => setImmediate(r));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^demo: not seeded: .*damaged\.json is damaged \((not JSON|not a demo seed record)[^)]*\); remove the data directory to start afresh$/);
    }
  });

  it('waits for a training run an earlier start queued (queued again at this start) rather than train a second: endpoint main serves version 1', async () => {
    const tenant = 'demo-train';
    const file = join(dir, 'train.json');
    planDemo(file, size);
    // The first start's worker never takes its run up: stopped with the run Queued.
    const held: WorkMessage[] = [];
    const abort = new AbortController();
    const stopped = await seedDemo(
      depsFor(tenant, (j) => (j.type === 'train' ? held.push(j) : undefined)),
      {
        file,
        signal: abort.signal,
        embedWaitMs: 0,
        log: (l) => {
          if (/^training /.test(l)) abort.abort();
        },
      },
    );
    expect(stopped).toBeUndefined();
    expect(held).toHaveLength(1);
    expect(JSON.parse(readFileSync(file, 'utf8')).job_name).toBe('train-1');

    // The next start queues the run again (recoverLocalRuns); its worker trains it.
    const next = depsFor(tenant);
    for (const j of held) await next.queue.send('training', [j]);
    const summary = await seedDemo(next, { file, embedWaitMs: 0, log: () => {} });
    expect(summary).toMatchObject({ modelVersion: 1 });
    const runs = await db.stores.console.list<TrainingRun>(tenant, 'job');
    expect(runs.map((r) => r.job_name)).toEqual(['train-1']);
    expect((await listModels(db.stores.console, tenant, { limit: 100 })).data.map((m) => m.version)).toEqual([1]);
    expect((await listEndpoints(db.stores.console, tenant, { limit: 100 })).data).toMatchObject([{ endpoint_name: 'main', model_version: 1 }]);
  }, 60_000);

  it("resumes the shoppers' searches from the last chunk saved (stopped in one, then failed storing a chunk's events): analytics counts each search and follow-up event once", async () => {
    const tenant = 'demo-search';
    const file = join(dir, 'search.json');
    // 400 shoppers: 50 searches, two chunks.
    planDemo(file, { ...size, users: 400 });
    const began = Date.now() / 1000;

    // Stopped while making search 35 (the first chunk of 25 saved, ten made after it).
    const abort = new AbortController();
    const first = depsFor(tenant);
    const { recorder } = first.searching.serving.traffic;
    let recorded = 0;
    first.searching.serving.traffic.recorder = {
      ...recorder,
      record: async (t, r) => {
        if (++recorded === 35) abort.abort();
        return recorder.record(t, r);
      },
    };
    expect(await seedDemo(first, { file, signal: abort.signal, embedWaitMs: 0, log: () => {} })).toBeUndefined();
    expect(recorded).toBe(35);
    expect(JSON.parse(readFileSync(file, 'utf8')).searches).toMatchObject({ made: 25, follow: null });

    // Then a start whose first attribution of a search's event fails: the second chunk's events are stored, not all counted.
    const second = depsFor(tenant);
    const log = second.searching.log;
    let failed = false;
    // The ten searches made after the last save are recorded already: served again as no traffic
    // (a search's row written again would count twice once its first minute was folded).
    const tracked = second.searching.serving.traffic.recorder;
    let again = 0;
    second.searching.serving.traffic.recorder = {
      ...tracked,
      record: async (t, r) => {
        again++;
        return tracked.record(t, r);
      },
    };
    second.searching.log = {
      ...log,
      attribute: async (t, r, e) => {
        if (failed) return log.attribute(t, r, e);
        failed = true;
        throw new Error('attribution failed');
      },
    };
    await expect(seedDemo(second, { file, embedWaitMs: 0, log: () => {} })).rejects.toThrow('attribution failed');
    expect(JSON.parse(readFileSync(file, 'utf8')).searches).toMatchObject({ made: 50, follow: { first: expect.any(Number) } });
    expect(again).toBe(15);

    const summary = await seedDemo(depsFor(tenant), { file, embedWaitMs: 0, log: () => {} });
    const searched = summary?.searches;
    expect(searched?.searches).toBe(50);
    const followed = Object.values(searched?.events ?? {}).reduce((a, b) => a + b, 0);
    expect(searched?.events.view).toBeGreaterThan(0);
    let events = 0;
    await db.stores.events.forEachPage(tenant, (page) => {
      events += page.length;
    });
    expect(events).toBe(size.events + followed);
    const { byQuery } = await deps.searching.log.counts(tenant, dayOf(began), dayOf(Date.now() / 1000), 10_000);
    const sum = (f: (c: { searches: number; no_results: number; events: Record<string, number> }) => number) => [...byQuery.values()].reduce((a, c) => a + f(c), 0);
    expect(sum((c) => c.searches)).toBe(50);
    expect(sum((c) => c.no_results)).toBe(searched?.withoutResults);
    expect(sum((c) => c.events.view ?? 0)).toBe(searched?.events.view);
    expect(sum((c) => c.events.purchase ?? 0)).toBe(searched?.events.purchase);
  }, 60_000);

  it('answers a failed event batch only once the batches being stored beside it are done (the stack closes the database after)', async () => {
    const file = join(dir, 'batches.json');
    planDemo(file, size);
    const base = depsFor('demo-batches');
    const events = base.stores.events;
    let calls = 0;
    let slowDone = false;
    const failing: DemoDeps = {
      ...base,
      stores: {
        ...base.stores,
        events: {
          ...events,
          append: async (...args: Parameters<typeof events.append>) => {
            const call = ++calls;
            if (call === 2) throw new Error('batch failed');
            if (call === 1) {
              await new Promise((r) => setTimeout(r, 400));
              const stored = await events.append(...args);
              slowDone = true;
              return stored;
            }
            return events.append(...args);
          },
        },
      },
    };
    await expect(seedDemo(failing, { file, embedWaitMs: 0, log: () => {} })).rejects.toThrow('batch failed');
    expect(slowDone).toBe(true);
  });
});
