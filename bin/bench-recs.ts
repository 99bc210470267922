/**
 * `npm run bench:recs -- ../shared/data/ml-latest-small [--skip-http]`
 *
 * The protocol of ../shared/data/README.md: each item's ratings split at random 75% train / 25%
 * test (seeded), every rating a positive, 10 recommendations per test user with training items
 * removed; nDCG@10, P@10, R@10, MAP@10, coverage and training time.
 * 1. In-process, side by side: popularity, item-kNN (cosine, all neighbours), EASE (default) and
 *    BPR with fold-in (mini-batch Adam, default options).
 * 2. End to end over HTTP on a fresh local stack: movies as items, training ratings as events,
 *    a training run (default algorithm), approve, promote, then every test user queried;
 *    latency p50/p99 at 8 concurrent clients (`--connections`) for 10 s, after `--warmup` seconds
 *    (default 10) of the same load unmeasured, as a long-lived Lambda container is warm. Each
 *    model's artifact holds the users' histories through the last event id training could vouch
 *    for (every id below it read), so a request reads only the user's newer events. Then, as a
 *    scheduled retraining would, a second run of the same template (a new version), promoted,
 *    and the same latency measurement; last, the same after restarting the local stack on the
 *    same data (as bench:search does).
 * Targets: default >= 1.15 x item-kNN nDCG@10 in the same run; training < 60 s; p99 < 50 ms.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { averagePrecisionAt, mean, ndcgAt, precisionAt, recallAt } from '../bench/metrics.ts';
import { loadMovieLens, splitByItem } from '../bench/movielens.ts';
import { DEFAULT_API_THREADS, startBenchStack, waitFor, type BenchStack } from '../bench/stack.ts';
import { setUpContext, sideBySide, sideBySideRows, type SideBySide } from '../bench/context.ts';
import { Dataset, type Interaction } from '../shared/recs/dataset.ts';
import { evaluate, type Metrics } from '../shared/recs/evaluate.ts';
import { trainBprFoldIn, trainEase, trainItemKnn, trainPopularity, type Model } from '../shared/recs/models.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'skip-http': { type: 'boolean', default: false }, connections: { type: 'string', default: '8' }, 'api-threads': { type: 'string', default: DEFAULT_API_THREADS }, warmup: { type: 'string', default: '10' } } });
const dir = positionals[0];
if (!dir) {
  console.error('usage: npm run bench:recs -- <ml-latest-small dir>');
  process.exit(2);
}
const { movies, ratings } = loadMovieLens(dir);
const { train, test } = splitByItem(ratings);
const ds = new Dataset(train, movies.map((m) => m.id));
const fmt = (m: Metrics) => ({
  ndcg_at_10: Number(m.ndcg_at_10.toFixed(4)), precision_at_10: Number(m.precision_at_10.toFixed(4)), recall_at_10: Number(m.recall_at_10.toFixed(4)),
  map_at_10: Number(m.map_at_10.toFixed(4)), coverage: Number(m.coverage.toFixed(4)),
});

const inProcess: Record<string, ReturnType<typeof fmt> & { train_s: number }> = {};
const algos: [string, () => Model][] = [
  ['popularity', () => trainPopularity(ds)],
  ['item_knn', () => trainItemKnn(ds)],
  ['ease (default)', () => trainEase(ds, { maxItems: 2500 })],
  ['bpr (5 epochs, batch 256, lr 0.001)', () => trainBprFoldIn(ds, { epochs: 5, batchSize: 256, learningRate: 0.001 })],
];
for (const [name, f] of algos) {
  const t0 = performance.now();
  const model = f();
  const trainS = (performance.now() - t0) / 1000;
  inProcess[name] = { ...fmt(evaluate(model, ds, test)), train_s: Number(trainS.toFixed(1)) };
  console.error(`${name}: ${JSON.stringify(inProcess[name])}`);
}
const knn = inProcess.item_knn?.ndcg_at_10 ?? 1;
const ease = inProcess['ease (default)'];

let http: Record<string, unknown> | undefined;
if (!values['skip-http']) {
  // API handlers in worker threads (default 2): concurrent requests run side by side, as in separate Lambda containers.
  const stackEnv = { MAINTENANCE_SECONDS: '30', LOCAL_API_THREADS: String(values['api-threads']) };
  const s = await startBenchStack(stackEnv);
  try {
    const itemIds = new Map<number, string>();
    for (let i = 0; i < movies.length; i += 100) {
      const batch = movies.slice(i, i + 100);
      const r = await s.core('POST', '/v1/items', batch.map((m) => ({ name: m.title || `Movie ${m.id}`, description: m.genres.join(' '), metadata: { genres: m.genres.join('|') } })));
      if (r.status !== 201) throw new Error(`items: ${r.status} ${JSON.stringify(r.body)}`);
      (r.body.data as { id: string }[]).forEach((it, k) => itemIds.set((batch[k] as { id: number }).id, it.id));
    }
    const movieOf = new Map([...itemIds].map(([m, id]) => [id, m]));
    const t0 = Date.now();
    for (let i = 0; i < train.length; i += 500) {
      const r = await s.core('POST', '/v1/events', train.slice(i, i + 500).map((x: Interaction) => ({ type: 'rating', user_id: x.user, item_id: itemIds.get(x.item), occurred_at: x.at })));
      if (r.status !== 201) throw new Error(`events: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const ingestS = (Date.now() - t0) / 1000;
    const et = await s.platform('POST', '/api/event-types', { name: 'rating', weight: 1 });
    const tpl = await s.platform('POST', '/api/events/templates', { name: 'ratings', event_types: [{ id: et.body.id, weight: 1 }], thresholds: { per_signal_min: 1, total_min: 1000 } });
    await s.platform('PATCH', `/api/events/templates/${tpl.body.id}`, { status: 'Published' });
    await s.platform('POST', '/api/model-endpoints', { endpoint_name: 'main', is_default: true });
    const tt = Date.now();
    const job = await s.platform('POST', '/api/training-jobs', { template_id: tpl.body.id });
    const done = await waitFor('training', () => s.platform('GET', `/api/training-jobs/${job.body.job_name}`), (r) => ['Completed', 'Failed'].includes(r.body.status), 600_000);
    const trainS = (Date.now() - tt) / 1000;
    if (done.body.status !== 'Completed') throw new Error(`training failed: ${done.body.error}`);
    const version = done.body.model_version as number;
    await s.platform('POST', `/api/models/${version}/approve`);
    await s.platform('POST', `/api/models/${version}/promote`, { endpoint_name: 'main' });

    // Every test user, through the API.
    const relevant = new Map<string, Set<number>>();
    for (const x of test) {
      if (!ds.userIndex.has(x.user)) continue;
      let r = relevant.get(x.user);
      if (!r) relevant.set(x.user, (r = new Set()));
      r.add(x.item);
    }
    const per: { ndcg: number; prec: number; rec: number; ap: number }[] = [];
    const shown = new Set<string>();
    for (const [user, rel] of relevant) {
      const r = await s.core('GET', `/v1/recommendations?user_id=${encodeURIComponent(user)}&limit=10`);
      const data = r.body.data as { item_id: string }[];
      data.forEach((x) => shown.add(x.item_id));
      const top = data.map((x) => movieOf.get(x.item_id) as number);
      per.push({ ndcg: ndcgAt(top, rel), prec: precisionAt(top, rel), rec: recallAt(top, rel), ap: averagePrecisionAt(top, rel) });
    }
    const ndcg = mean(per.map((x) => x.ndcg));
    const prec = mean(per.map((x) => x.prec));
    const rec = mean(per.map((x) => x.rec));
    const map = mean(per.map((x) => x.ap));
    const users = [...relevant.keys()];
    let k = 0;
    const token = await s.token();
    const loadOn = (stack: BenchStack, bearer: string, contextId?: number) => (duration: number) =>
      autocannon({
        url: stack.base,
        connections: Number(values.connections),
        duration,
        requests: [{ method: 'GET', headers: { authorization: `Bearer ${bearer}` }, setupRequest: (req) => ({ ...req, path: `/v1/recommendations?user_id=${encodeURIComponent(users[k++ % users.length] as string)}&limit=10${contextId !== undefined ? `&context_id=${contextId}` : ''}` }) }],
      });
    const latency = async (load: (duration: number) => ReturnType<typeof autocannon>) => {
      if (Number(values.warmup) > 0) await load(Number(values.warmup));
      const m = await load(10);
      return { p50_ms: m.latency.p50, p99_ms: m.latency.p99, rps: Math.round(m.requests.average), errors: m.errors + m.timeouts + m.non2xx };
    };
    // 1. The model trained right after the import.
    const fresh = await latency(loadOn(s, token));
    // 2. As a scheduled retraining would: train again (a new version) and promote it.
    const again = await s.platform('POST', '/api/training-jobs', { template_id: tpl.body.id });
    const retrainRun = await waitFor('retraining', () => s.platform('GET', `/api/training-jobs/${again.body.job_name}`), (r) => ['Completed', 'Failed'].includes(r.body.status), 600_000);
    if (retrainRun.body.status !== 'Completed') throw new Error(`retraining failed: ${retrainRun.body.error}`);
    const retrainedVersion = retrainRun.body.model_version as number;
    await s.platform('POST', `/api/models/${retrainedVersion}/approve`);
    await s.platform('POST', `/api/models/${retrainedVersion}/promote`, { endpoint_name: 'main' });
    const serving = await s.core('GET', `/v1/recommendations?user_id=${encodeURIComponent(users[0] as string)}&limit=10`);
    if ((serving.body.model as { version?: number } | null)?.version !== retrainedVersion) throw new Error(`version ${retrainedVersion} is not serving`);
    const retrained = await latency(loadOn(s, token));
    // The control plane: the same requests without and with a context whose experiment splits
    // users between two endpoints serving this version.
    await s.platform('POST', '/api/model-endpoints', { endpoint_name: 'next' });
    await s.platform('POST', `/api/models/${retrainedVersion}/promote`, { endpoint_name: 'next' });
    const genreCounts = new Map<string, number>();
    for (const m of movies) genreCounts.set(m.genres.join('|'), (genreCounts.get(m.genres.join('|')) ?? 0) + 1);
    const genreValues = [...genreCounts].sort((a, b) => b[1] - a[1]).slice(0, 16).map(([g]) => g);
    const setup = await setUpContext(s, { endpoints: ['main', 'next'], key: 'genres', values: genreValues, eventType: 'rating', itemIds: [...itemIds.values()], users });
    const control = await sideBySide((ctx, d) => loadOn(s, token, ctx)(d), setup.contextId, 10, Number(values.warmup));
    // 3. Again after restarting the local stack on the same data: fresh containers loading the
    //    model, and dynalite reopening its LevelDB after the bulk ingest (whose background
    //    compaction may still run before the restart; DynamoDB has no such phase). All three
    //    are reported.
    await s.stop({ keepData: true });
    const r = await startBenchStack(stackEnv, s.dataDir);
    let restarted;
    try {
      restarted = await latency(loadOn(r, await r.token()));
    } finally {
      await r.stop();
    }
    http = {
      ingest_s: Number(ingestS.toFixed(1)),
      train_s: Number(trainS.toFixed(1)),
      version,
      holdout_metrics_of_the_run: done.body.metrics,
      ndcg_at_10: Number(ndcg.toFixed(4)), precision_at_10: Number(prec.toFixed(4)), recall_at_10: Number(rec.toFixed(4)), map_at_10: Number(map.toFixed(4)),
      coverage: Number((shown.size / movies.length).toFixed(4)),
      latency_after_import: { version, ...fresh },
      latency_after_retraining: { version: retrainedVersion, ...retrained },
      latency_after_restart: { version: retrainedVersion, ...restarted },
      control_plane: control,
    };
    console.error(`http: ${JSON.stringify(http)}`);
  } finally {
    await s.stop();
  }
}

type Latency = { version: number; p50_ms: number; p99_ms: number; rps: number; errors: number };
const latencyRow = (what: string, l: Latency) => `| v${l.version}, ${what} | ${l.p50_ms} | ${l.p99_ms} | ${l.rps} | ${l.errors} | ${l.p99_ms < 50 ? 'met' : 'NOT met'} |`;
const rows = Object.entries(inProcess).map(([name, m]) => `| ${name} (in-process) | ${m.ndcg_at_10} | ${m.precision_at_10} | ${m.recall_at_10} | ${m.map_at_10} | ${m.coverage} | ${m.train_s} | ${(m.ndcg_at_10 / knn).toFixed(3)} |`);
if (http) rows.push(`| ease (default), end to end over HTTP | ${http.ndcg_at_10} | ${http.precision_at_10} | ${http.recall_at_10} | ${http.map_at_10} | ${http.coverage} | ${http.train_s} | ${((http.ndcg_at_10 as number) / knn).toFixed(3)} |`);
const md = [
  `npm run bench:recs -- ${dir}  (${new Date().toISOString()}, node ${process.version})`,
  '',
  `MovieLens latest-small: ${ds.users.length} users, ${movies.length} movies, ${train.length} training and ${test.length} test ratings (per-item 75/25 split, seed 42).`,
  '',
  '| algorithm | nDCG@10 | P@10 | R@10 | MAP@10 | coverage | train s | ÷ item-kNN |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows,
  '',
  `Default (EASE) over item-kNN: ${((ease?.ndcg_at_10 ?? 0) / knn).toFixed(3)} x (target >= 1.15); in-process training ${ease?.train_s} s (target < 60 s).`,
  ...(http
    ? [
        `End to end: training run ${http.train_s} s. Recommendations at ${values.connections} concurrent clients (API handlers in ${values['api-threads']} thread(s), after ${values.warmup} s of warm-up; target p99 < 50 ms):`,
        '',
        '| serving model | p50 ms | p99 ms | req/s | errors | p99 < 50 ms |',
        '|---|---:|---:|---:|---:|---|',
        latencyRow('trained right after the import', http.latency_after_import as Latency),
        latencyRow('retrained (a new version of the same template), promoted', http.latency_after_retraining as Latency),
        latencyRow('the same, after restarting the local stack on the same data', http.latency_after_restart as Latency),
        '',
        ...sideBySideRows(`Recommendations (limit 10, v${http.latency_after_retraining ? (http.latency_after_retraining as Latency).version : ''})`, http.control_plane as SideBySide, Number(values.connections)),
      ]
    : []),
].join('\n');
console.log(`\n${md}\n`);
mkdirSync('bench-results', { recursive: true });
writeFileSync('bench-results/recs.json', JSON.stringify({ command: `npm run bench:recs -- ${dir}`, date: new Date().toISOString(), in_process: inProcess, http }, null, 2) + '\n');
writeFileSync('bench-results/recs.md', md + '\n');
