/**
 * `npm run bench:recs -- --synthetic N --end-to-end`: the scale figures of bench/recs-scale.ts
 * measured through the service instead of in-process. The same synthetic catalog (N items, 40
 * events per item, the same seed and per-item 75/25 split) goes into a fresh local stack over
 * HTTP: the items, then the training part as `view` events (several requests at once, as an app's
 * backends would send them); a training run of `auto` from a published template, which past
 * TRAINING_TASK_MIN_EVENTS (the default, 500,000) runs as the container task (locally a child
 * process: its peak memory is sampled from /proc while it runs); approve, promote; then a seeded
 * sample of test users through GET /v1/recommendations: nDCG@10, coverage, and how many of the
 * recommended items lie outside the 2,500 most interacted (the head a plain EASE would reach).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mean, ndcgAt } from './metrics.ts';
import { splitByItem } from './movielens.ts';
import { peakMbOf, startBenchStack, waitFor, type BenchStack } from './stack.ts';
import { syntheticInteractions } from './synthetic-interactions.ts';
import { seededRandom } from '../shared/random.ts';
import { EASE_MAX_ITEMS } from '../shared/recs/blend.ts';

/** Test users queried over HTTP: the size of the trainer's holdout sample, as the in-process rows. */
const TEST_USERS = 2000;
/** Requests in flight while loading. */
const LOAD_CONCURRENCY = 4;

export interface EndToEndScaleRow {
  items: number;
  train_events: number;
  items_load_s: number;
  events_load_s: number;
  events_per_s: number;
  runner: string | null;
  train_wall_s: number;
  task_peak_mb: number | null;
  server_peak_mb: number;
  version: number;
  chosen: unknown;
  validation_ndcg_at_10: number | null;
  holdout_metrics: unknown;
  test_users: number;
  ndcg_at_10: number;
  coverage: number;
  /** Distinct recommended items outside the EASE_MAX_ITEMS most interacted in training. */
  tail_items_recommended: number;
  /** Share of all recommendations that are such tail items. */
  tail_share: number;
}

/** Runs `fn` over `n` jobs with `k` at once. */
async function pool(n: number, k: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: k }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

export async function runScaleEndToEnd(opts: { command: string; items: number }): Promise<void> {
  const started = new Date().toISOString();
  const syn = syntheticInteractions(opts.items);
  const { train, test } = splitByItem(syn.interactions, 42, 'id');
  console.error(`synthetic: ${opts.items} items, ${train.length} training and ${test.length} test interactions`);
  const s: BenchStack = await startBenchStack({ MAINTENANCE_SECONDS: '30' });
  try {
    const itemIds = new Map<number, string>();
    const t0 = Date.now();
    await pool(Math.ceil(syn.universe.length / 100), LOAD_CONCURRENCY, async (b) => {
      const ids = syn.universe.slice(b * 100, b * 100 + 100);
      const r = await s.core(
        'POST',
        '/v1/items',
        ids.map((i) => ({ name: `item ${i}`, description: `synthetic item ${i}`, metadata: { category: `c${i % 50}` } })),
      );
      if (r.status !== 201) throw new Error(`items: ${r.status} ${JSON.stringify(r.body)}`);
      (r.body.data as { id: string }[]).forEach((it, k) => itemIds.set(ids[k] as number, it.id));
    });
    const itemsS = (Date.now() - t0) / 1000;
    const idOf = new Map([...itemIds].map(([m, id]) => [id, m]));
    const t1 = Date.now();
    let sent = 0;
    await pool(Math.ceil(train.length / 500), LOAD_CONCURRENCY, async (b) => {
      const batch = train.slice(b * 500, b * 500 + 500);
      const r = await s.core(
        'POST',
        '/v1/events',
        batch.map((x) => ({ type: 'view', user_id: x.user, item_id: itemIds.get(x.item), occurred_at: x.at })),
      );
      if (r.status !== 201) throw new Error(`events: ${r.status} ${JSON.stringify(r.body)}`);
      sent += batch.length;
      if (b % 200 === 0) console.error(`events: ${sent} of ${train.length} after ${Math.round((Date.now() - t1) / 1000)} s`);
    });
    const eventsS = (Date.now() - t1) / 1000;

    const et = await s.platform('POST', '/api/event-types', { name: 'view', weight: 1 });
    const tpl = await s.platform('POST', '/api/events/templates', { name: 'views', event_types: [{ id: et.body.id, weight: 1 }], thresholds: { per_signal_min: 1, total_min: 1000 } });
    await s.platform('PATCH', `/api/events/templates/${tpl.body.id}`, { status: 'Published' });
    await s.platform('POST', '/api/model-endpoints', { endpoint_name: 'main', is_default: true });
    const t2 = Date.now();
    const job = await s.platform('POST', '/api/training-jobs', { template_id: tpl.body.id });
    if (job.status !== 202) throw new Error(`training: ${job.status} ${JSON.stringify(job.body)}`);
    const name = job.body.job_name as string;
    let taskPid: number | undefined;
    let taskPeak: number | null = null;
    let runner: string | null = null;
    const done = await waitFor(
      'training',
      async () => {
        if (taskPid === undefined) {
          const lines = ((await s.platform('GET', `/api/training-jobs/logs/${name}?limit=100`)).body.lines ?? []) as { message: string }[];
          for (const l of lines) {
            const m = /^Training task started: pid (\d+)$/.exec(l.message);
            if (m) taskPid = Number(m[1]);
            const r = /^Runs as a container task \(([^)]+)\)/.exec(l.message);
            if (r) runner = r[1] as string;
          }
        }
        if (taskPid !== undefined) taskPeak = Math.max(taskPeak ?? 0, peakMbOf(taskPid) ?? 0) || taskPeak;
        const r = await s.platform('GET', `/api/training-jobs/${name}`);
        console.error(`training: ${r.body.status} ${r.body.progress} after ${Math.round((Date.now() - t2) / 1000)} s; task peak ${taskPeak ?? '-'} MB`);
        return r;
      },
      (r) => ['Completed', 'Failed', 'Stopped'].includes(r.body.status),
      4 * 3_600_000,
      5000,
    );
    const trainS = (Date.now() - t2) / 1000;
    if (done.body.status !== 'Completed') throw new Error(`training ${done.body.status}: ${done.body.error}`);
    const version = done.body.model_version as number;
    const record = (await s.platform('GET', `/api/models/${version}`)).body as { validation?: { chosen?: unknown; ndcg_at_10?: number } };
    await s.platform('POST', `/api/models/${version}/approve`);
    await s.platform('POST', `/api/models/${version}/promote`, { endpoint_name: 'main' });

    // The head a plain EASE reaches: the most interacted items in training.
    const counts = new Map<number, number>();
    for (const x of train) counts.set(x.item, (counts.get(x.item) ?? 0) + 1);
    const head = new Set(
      [...counts]
        .sort((a, b) => b[1] - a[1] || a[0] - b[0])
        .slice(0, EASE_MAX_ITEMS)
        .map(([i]) => i),
    );
    const trainUsers = new Set(train.map((x) => x.user));
    const relevant = new Map<string, Set<number>>();
    for (const x of test) {
      if (!trainUsers.has(x.user)) continue;
      let r = relevant.get(x.user);
      if (!r) relevant.set(x.user, (r = new Set()));
      r.add(x.item);
    }
    // A seeded sample of the test users, as the trainer's holdout and the in-process rows.
    const users = [...relevant.keys()];
    const rand = seededRandom(7);
    for (let i = users.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [users[i], users[j]] = [users[j] as string, users[i] as string];
    }
    const sample = users.slice(0, TEST_USERS);
    const ndcgs: number[] = [];
    const shown = new Set<number>();
    let tail = 0;
    let all = 0;
    await pool(sample.length, LOAD_CONCURRENCY, async (k) => {
      const user = sample[k] as string;
      const r = await s.core('GET', `/v1/recommendations?user_id=${encodeURIComponent(user)}&limit=10`);
      if (r.status !== 200) throw new Error(`recommendations: ${r.status} ${JSON.stringify(r.body)}`);
      if ((r.body.model as { version?: number } | null)?.version !== version) throw new Error(`version ${version} is not serving: ${JSON.stringify(r.body.model)}`);
      const top = (r.body.data as { item_id: string }[]).map((x) => idOf.get(x.item_id) as number);
      for (const i of top) {
        shown.add(i);
        all += 1;
        if (!head.has(i)) tail += 1;
      }
      ndcgs.push(ndcgAt(top, relevant.get(user) as Set<number>));
    });
    const tailItems = [...shown].filter((i) => !head.has(i)).length;
    const row: EndToEndScaleRow = {
      items: opts.items,
      train_events: train.length,
      items_load_s: Math.round(itemsS),
      events_load_s: Math.round(eventsS),
      events_per_s: Math.round(train.length / eventsS),
      runner,
      train_wall_s: Math.round(trainS),
      task_peak_mb: taskPeak,
      server_peak_mb: peakMbOf(s.pid) ?? 0,
      version,
      chosen: record.validation?.chosen ?? null,
      validation_ndcg_at_10: record.validation?.ndcg_at_10 ?? null,
      holdout_metrics: done.body.metrics,
      test_users: sample.length,
      ndcg_at_10: Number(mean(ndcgs).toFixed(4)),
      coverage: Number((shown.size / opts.items).toFixed(4)),
      tail_items_recommended: tailItems,
      tail_share: Number((tail / Math.max(1, all)).toFixed(4)),
    };
    const md = [
      `${opts.command}  (${started}, node ${process.version})`,
      '',
      '| catalog | training events | load: items s / events s (events/s) | ran as | training run s | task peak MB | server peak MB | nDCG@10 over HTTP | coverage | tail items recommended (share of recommendations) |',
      '|---:|---:|---|---|---:|---:|---:|---:|---:|---|',
      `| ${row.items.toLocaleString('en')} | ${row.train_events.toLocaleString('en')} | ${row.items_load_s} / ${row.events_load_s} (${row.events_per_s}) | ${row.runner ?? 'the training worker'} | ${row.train_wall_s} | ${row.task_peak_mb ?? '-'} | ${row.server_peak_mb} | ${row.ndcg_at_10} | ${row.coverage} | ${row.tail_items_recommended} (${row.tail_share}) |`,
      '',
      `Version ${version}, chosen on validation: ${JSON.stringify(row.chosen)} (validation nDCG@10 ${row.validation_ndcg_at_10}); the run's holdout metrics: ${JSON.stringify(row.holdout_metrics)}. ` +
        `Test users: a seeded sample of ${row.test_users}. Tail: items outside the ${EASE_MAX_ITEMS} most interacted in training, which a plain EASE cannot recommend. ` +
        'training run s: from the request to Completed (the events read from the table, a holdout fit and evaluation, the fit on everything, the artifact stored), on a machine whose cores the local stack shares.',
    ].join('\n');
    mkdirSync('bench-results', { recursive: true });
    writeFileSync('bench-results/recs-synthetic-e2e.json', `${JSON.stringify({ command: opts.command, date: started, node: process.version, row }, null, 2)}\n`);
    writeFileSync('bench-results/recs-synthetic-e2e.md', `${md}\n`);
    console.log(`\n${md}\n`);
  } finally {
    await s.stop();
  }
}
