/**
 * `npm run bench:recs [-- <data dir>] [--skip-http] [--connections 8] [--api-threads N] [--warmup 10]`
 * `npm run bench:recs -- --context-only [--algorithm ease] [--rounds 2]`
 *
 * Every data set of ../shared/data with interactions (ml-latest-small and lastfm), or the one
 * directory given, under the protocol of ../shared/data/README.md: each item's interactions split
 * at random 75% train / 25% test (seeded: MovieLens items in id order, as the figures so far,
 * Last.fm's in order of first appearance, as its README's), every interaction a positive, 10
 * recommendations per test user with training items removed; nDCG@10, P@10, R@10, MAP@10,
 * coverage, training time and peak memory. Per data set, side by side in one run:
 * 1. In-process, each algorithm in a child process of its own, so that its peak memory (maxRSS)
 *    is its own (with the data loaded; the table says how much that alone takes): popularity,
 *    item-kNN (cosine, all neighbours), plain EASE (every weight, on the 2,500 most interacted
 *    items, as auto's EASE) at λ 100, 250, 500 and 1000, and `auto` (the service's default:
 *    EASE and iALS blended, each run choosing EASE's λ, iALS's epochs and the blend weight on a
 *    validation split of its own training interactions, shared/recs/tuning.ts).
 * 2. End to end over HTTP on a fresh local stack: the items, the training interactions as events,
 *    a training run with the default options (`auto`), approve, promote, then
 *    every test user queried. Its training time is the run's (a holdout evaluation, then the
 *    model on every interaction: the default twice), its peak memory the local stack's process
 *    (VmHWM: API, workers and the database stand-in).
 * For ml-latest-small, also: latency p50/p99 at 8 concurrent clients (`--connections`) for 10 s,
 * after `--warmup` seconds (default 10) of the same load unmeasured, as a long-lived Lambda
 * container is warm. Each model's artifact holds the users' histories through the last event id
 * training could vouch for (every id below it read), so a request reads only the user's newer
 * events. Then, as a scheduled retraining would, a second run of the same template (a new
 * version), promoted, and the same latency measurement, and the control plane's (a context with
 * rules, rerank controls and an experiment) side by side; last, the same after restarting the
 * local stack on the same data (as bench:search does).
 * `--context-only`: only the control plane's side by side, on the data sets with a context
 * (ml-latest-small): the items, the training events and one training run (`--algorithm`, default
 * `auto`; `ease` trains in seconds) promoted to both variants' endpoints, then the same load
 * without and with the context alternated `--rounds` times (default 2). No in-process algorithms,
 * no quality, no other latency; its table as the full run prints it, written to
 * bench-results/recs-context.json and .md (a full run's recs.json and .md are left as they are).
 * `--synthetic N`: training at scale instead (bench/recs-scale.ts says what it measures); with
 * `--end-to-end`, the N-item catalog through the service (bench/recs-scale-e2e.ts).
 * Targets: the default >= 1.05 x the best plain EASE (its λ chosen afterwards on the test split)
 * on each data set; end to end >= the in-process default; p99 < 50 ms.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { averagePrecisionAt, mean, ndcgAt, precisionAt, recallAt } from '../bench/metrics.ts';
import { artistItem, loadLastfm, type Play } from '../bench/lastfm.ts';
import { loadMovieLens, movieItem, splitByItem } from '../bench/movielens.ts';
import { DEFAULT_API_THREADS, peakMbOf, startBenchStack, waitFor, type BenchStack } from '../bench/stack.ts';
import { setUpContext, sideBySide, sideBySideRows, type SideBySide } from '../bench/context.ts';
import { runScale, runScaleChild, SCALE_ALGORITHMS } from '../bench/recs-scale.ts';
import { runScaleEndToEnd } from '../bench/recs-scale-e2e.ts';
import { EASE_MAX_ITEMS, trainEaseDense } from '../shared/recs/blend.ts';
import { Dataset, type Interaction } from '../shared/recs/dataset.ts';
import { evaluate, type Metrics } from '../shared/recs/evaluate.ts';
import { trainItemKnn, trainPopularity, type Model } from '../shared/recs/models.ts';
import { EASE_LAMBDAS, trainDefault, type Chosen } from '../shared/recs/tuning.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'skip-http': { type: 'boolean', default: false },
    connections: { type: 'string', default: '8' },
    'api-threads': { type: 'string', default: DEFAULT_API_THREADS },
    warmup: { type: 'string', default: '10' },
    /** Internal: train and evaluate one algorithm on the data set given, print the result as JSON. */
    child: { type: 'string' },
    /** Training at scale (bench/recs-scale.ts): a synthetic catalog of this many items, 40 events per item. */
    synthetic: { type: 'string' },
    /** With --synthetic: the catalog sizes (default 1000, 10000 and the --synthetic size). */
    sizes: { type: 'string' },
    /** With --synthetic: the lastfm directory measured after the synthetic sizes (default ../shared/data/lastfm). */
    lastfm: { type: 'string', default: '../shared/data/lastfm' },
    'skip-lastfm': { type: 'boolean', default: false },
    /** With --synthetic: the catalog through the service instead (bench/recs-scale-e2e.ts). */
    'end-to-end': { type: 'boolean', default: false },
    /** Only the control plane's side by side (see above). */
    'context-only': { type: 'boolean', default: false },
    /** The training runs' algorithm (the service's default, `auto`, unless told). */
    algorithm: { type: 'string', default: 'auto' },
    /** Rounds of the control plane's side by side (each side measured once a round). */
    rounds: { type: 'string', default: '2' },
  },
});

const DATA_ROOT = '../shared/data';
type ItemBody = { name: string; description: string; metadata: Record<string, string | string[]> };

/** A data set as the bench uses it: items for the API, the split, the events to send. */
interface BenchSet {
  name: string;
  /** The item ids of the data set, in the order the items are created (the models' index order). */
  universe: number[];
  items: ItemBody[];
  train: Interaction[];
  test: Interaction[];
  eventType: string;
  /** A training interaction as the body of an event (the item's id in the API given). */
  event(x: Interaction, itemId: string): Record<string, unknown>;
  describe: string;
  /** Metadata key and values the control-plane measurement's rules use (ml-latest-small only). */
  control?: { key: string; values: string[] };
}

function loadSet(dir: string): BenchSet | undefined {
  const name = basename(dir);
  if (existsSync(join(dir, 'ratings.csv')) && existsSync(join(dir, 'movies.csv'))) {
    const { movies, ratings } = loadMovieLens(dir);
    const { train, test } = splitByItem(ratings);
    const genreCounts = new Map<string, number>();
    for (const m of movies) genreCounts.set(m.genres.join('|'), (genreCounts.get(m.genres.join('|')) ?? 0) + 1);
    return {
      name,
      universe: movies.map((m) => m.id),
      items: movies.map(movieItem),
      train,
      test,
      eventType: 'rating',
      event: (x, itemId) => ({ type: 'rating', user_id: x.user, item_id: itemId, occurred_at: x.at }),
      describe: `MovieLens: ${movies.length} movies as items, ratings as events (per-item 75/25 split, items in id order, seed 42)`,
      control: {
        key: 'genres',
        values: [...genreCounts]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 16)
          .map(([g]) => g),
      },
    };
  }
  if (existsSync(join(dir, 'user_artists.dat'))) {
    const { artists, plays } = loadLastfm(dir);
    const { train, test } = splitByItem(plays, 42, 'first');
    return {
      name,
      universe: artists.map((a) => a.id),
      items: artists.map(artistItem),
      train,
      test,
      eventType: 'play',
      event: (x, itemId) => ({ type: 'play', user_id: x.user, item_id: itemId, play: { plays: (x as Play).plays } }),
      describe: `Last.fm (HetRec 2011): ${artists.length} artists as items, user-artist pairs as play events (per-artist 75/25 split, artists in order of first appearance, seed 42)`,
    };
  }
  return undefined;
}

const round = (x: number, d = 4) => Number(x.toFixed(d));
const fmt = (m: Metrics) => ({
  ndcg_at_10: round(m.ndcg_at_10),
  precision_at_10: round(m.precision_at_10),
  recall_at_10: round(m.recall_at_10),
  map_at_10: round(m.map_at_10),
  coverage: round(m.coverage),
});
type Row = ReturnType<typeof fmt> & { train_s: number; peak_rss_mb: number; data_rss_mb?: number; chosen?: Chosen; validation_ndcg_at_10?: number };
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/** The in-process algorithms, by the name a child process is given. */
const ALGOS: [string, string][] = [
  ['popularity', 'popularity'],
  ['item_knn', 'item-kNN (cosine, all neighbours)'],
  ...EASE_LAMBDAS.map((l): [string, string] => [`ease_${l}`, `EASE λ ${l} (every weight, ${EASE_MAX_ITEMS} items)`]),
  ['default', 'auto (EASE + iALS, chosen on validation)'],
];

/** A child process: trains one algorithm on one data set and prints its row. */
async function runChild(algo: string, dir: string): Promise<void> {
  const set = loadSet(dir);
  if (!set) throw new Error(`no interactions in ${dir}`);
  const ds = new Dataset(set.train, set.universe);
  const dataRss = process.memoryUsage().rss;
  const t0 = performance.now();
  let model: Model;
  let extra: Partial<Row> = {};
  const ease = /^ease_(\d+)$/.exec(algo);
  if (algo === 'popularity') model = trainPopularity(ds);
  else if (algo === 'item_knn') model = trainItemKnn(ds);
  else if (ease) model = trainEaseDense(ds, { lambda: Number(ease[1]), maxItems: EASE_MAX_ITEMS });
  else if (algo === 'default') {
    const r = await trainDefault(ds);
    model = r.model;
    extra = { chosen: r.validation.chosen, validation_ndcg_at_10: round(r.validation.ndcg_at_10) };
  } else throw new Error(`unknown algorithm ${algo}`);
  const trainS = (performance.now() - t0) / 1000;
  const row: Row = { ...fmt(evaluate(model, ds, set.test)), train_s: round(trainS, 1), peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), data_rss_mb: mb(dataRss), ...extra };
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

/** Runs one algorithm in a child process of its own. */
function inChild(algo: string, dir: string): Promise<Row> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--max-old-space-size=8192', '--import', 'tsx', 'bin/bench-recs.ts', '--child', algo, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const last = out.trim().split('\n').pop();
      if (code !== 0 || !last) reject(new Error(`${algo} on ${dir}: exit ${code}`));
      else resolve(JSON.parse(last) as Row);
    });
  });
}

/** The stack process's peak resident memory (VmHWM), MB. */
const stackPeakMb = (s: BenchStack): number => peakMbOf(s.pid) ?? 0;

type Latency = { version: number; p50_ms: number; p99_ms: number; rps: number; errors: number };
interface Http extends ReturnType<typeof fmt> {
  ingest_s: number;
  train_s: number;
  peak_rss_mb: number;
  version: number;
  holdout_metrics_of_the_run: unknown;
  validation_of_the_run: unknown;
  latency_after_import?: Latency;
  latency_after_retraining?: Latency;
  latency_after_restart?: Latency;
  control_plane?: SideBySide;
}

/**
 * The default end to end over HTTP; with `latency`, the latency and control-plane measurements too;
 * with `contextOnly`, the control plane's only (no quality, no other latency).
 */
async function endToEnd(set: BenchSet, ds: Dataset, latencyToo: boolean, contextOnly = false): Promise<Http> {
  // API handlers in worker threads (default 1 on 2 cores): concurrent requests run side by side, as in separate Lambda containers.
  const stackEnv = { MAINTENANCE_SECONDS: '30', LOCAL_API_THREADS: String(values['api-threads']) };
  const s = await startBenchStack(stackEnv);
  try {
    const itemIds = new Map<number, string>();
    for (let i = 0; i < set.items.length; i += 100) {
      const batch = set.items.slice(i, i + 100);
      const r = await s.core('POST', '/v1/items', batch);
      if (r.status !== 201) throw new Error(`items: ${r.status} ${JSON.stringify(r.body)}`);
      (r.body.data as { id: string }[]).forEach((it, k) => itemIds.set(set.universe[i + k] as number, it.id));
    }
    const idOf = new Map([...itemIds].map(([m, id]) => [id, m]));
    const t0 = Date.now();
    for (let i = 0; i < set.train.length; i += 500) {
      const r = await s.core(
        'POST',
        '/v1/events',
        set.train.slice(i, i + 500).map((x) => set.event(x, itemIds.get(x.item) as string)),
      );
      if (r.status !== 201) throw new Error(`events: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const ingestS = (Date.now() - t0) / 1000;
    const et = await s.platform('POST', '/api/event-types', { name: set.eventType, weight: 1 });
    const tpl = await s.platform('POST', '/api/events/templates', {
      name: set.eventType,
      event_types: [{ id: et.body.id, weight: 1 }],
      thresholds: { per_signal_min: 1, total_min: Math.min(1000, set.train.length) },
    });
    await s.platform('PATCH', `/api/events/templates/${tpl.body.id}`, { status: 'Published' });
    await s.platform('POST', '/api/model-endpoints', { endpoint_name: 'main', is_default: true });
    const tt = Date.now();
    const trainingBody = { template_id: tpl.body.id, ...(values.algorithm !== 'auto' ? { options: { algorithm: values.algorithm } } : {}) };
    const job = await s.platform('POST', '/api/training-jobs', trainingBody);
    const done = await waitFor(
      'training',
      () => s.platform('GET', `/api/training-jobs/${job.body.job_name}`),
      (r) => ['Completed', 'Failed'].includes(r.body.status),
      3_600_000,
      1000,
    );
    const trainS = (Date.now() - tt) / 1000;
    if (done.body.status !== 'Completed') throw new Error(`training failed: ${done.body.error}`);
    const peakMb = stackPeakMb(s);
    const version = done.body.model_version as number;
    const record = await s.platform('GET', `/api/models/${version}`);
    await s.platform('POST', `/api/models/${version}/approve`);
    await s.platform('POST', `/api/models/${version}/promote`, { endpoint_name: 'main' });

    // Every test user, through the API.
    const relevant = new Map<string, Set<number>>();
    for (const x of set.test) {
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
      const top = data.map((x) => idOf.get(x.item_id) as number);
      per.push({ ndcg: ndcgAt(top, rel), prec: precisionAt(top, rel), rec: recallAt(top, rel), ap: averagePrecisionAt(top, rel) });
    }
    const http: Http = {
      ingest_s: round(ingestS, 1),
      train_s: round(trainS, 1),
      peak_rss_mb: peakMb,
      version,
      holdout_metrics_of_the_run: done.body.metrics,
      validation_of_the_run: (record.body as { validation?: unknown }).validation ?? null,
      ndcg_at_10: round(mean(per.map((x) => x.ndcg))),
      precision_at_10: round(mean(per.map((x) => x.prec))),
      recall_at_10: round(mean(per.map((x) => x.rec))),
      map_at_10: round(mean(per.map((x) => x.ap))),
      coverage: round(shown.size / set.items.length),
    };
    if (!latencyToo) return http;

    const users = [...relevant.keys()];
    let k = 0;
    const token = await s.token();
    const loadOn = (stack: BenchStack, bearer: string, contextId?: number) => (duration: number) =>
      autocannon({
        url: stack.base,
        connections: Number(values.connections),
        duration,
        requests: [
          {
            method: 'GET',
            headers: { authorization: `Bearer ${bearer}` },
            setupRequest: (req) => ({
              ...req,
              path: `/v1/recommendations?user_id=${encodeURIComponent(users[k++ % users.length] as string)}&limit=10${contextId !== undefined ? `&context_id=${contextId}` : ''}`,
            }),
          },
        ],
      });
    const latency = async (load: (duration: number) => ReturnType<typeof autocannon>) => {
      if (Number(values.warmup) > 0) await load(Number(values.warmup));
      const m = await load(10);
      return { p50_ms: m.latency.p50, p99_ms: m.latency.p99, rps: Math.round(m.requests.average), errors: m.errors + m.timeouts + m.non2xx };
    };
    // The control plane: the same requests without and with a context whose experiment splits
    // users between two endpoints serving one version (`measured`).
    const controlPlane = async (measured: number) => {
      if (!set.control) return;
      await s.platform('POST', '/api/model-endpoints', { endpoint_name: 'next' });
      await s.platform('POST', `/api/models/${measured}/promote`, { endpoint_name: 'next' });
      const setup = await setUpContext(s, { endpoints: ['main', 'next'], key: set.control.key, values: set.control.values, eventType: set.eventType, itemIds: [...itemIds.values()], users });
      http.control_plane = await sideBySide((ctx, d) => loadOn(s, token, ctx)(d), setup.contextId, 10, Number(values.warmup), Number(values.rounds));
    };
    if (contextOnly) {
      await controlPlane(version);
      return http;
    }
    // 1. The model trained right after the import.
    http.latency_after_import = { version, ...(await latency(loadOn(s, token))) };
    // 2. As a scheduled retraining would: train again (a new version) and promote it.
    const again = await s.platform('POST', '/api/training-jobs', trainingBody);
    const retrainRun = await waitFor(
      'retraining',
      () => s.platform('GET', `/api/training-jobs/${again.body.job_name}`),
      (r) => ['Completed', 'Failed'].includes(r.body.status),
      3_600_000,
    );
    if (retrainRun.body.status !== 'Completed') throw new Error(`retraining failed: ${retrainRun.body.error}`);
    const retrainedVersion = retrainRun.body.model_version as number;
    await s.platform('POST', `/api/models/${retrainedVersion}/approve`);
    await s.platform('POST', `/api/models/${retrainedVersion}/promote`, { endpoint_name: 'main' });
    const serving = await s.core('GET', `/v1/recommendations?user_id=${encodeURIComponent(users[0] as string)}&limit=10`);
    if ((serving.body.model as { version?: number } | null)?.version !== retrainedVersion) throw new Error(`version ${retrainedVersion} is not serving`);
    http.latency_after_retraining = { version: retrainedVersion, ...(await latency(loadOn(s, token))) };
    await controlPlane(retrainedVersion);
    // 3. Again after restarting the local stack on the same data: fresh containers loading the
    //    model, and dynalite reopening its LevelDB after the bulk ingest (whose background
    //    compaction may still run before the restart; DynamoDB has no such phase). All three
    //    are reported.
    await s.stop({ keepData: true });
    const r = await startBenchStack(stackEnv, s.dataDir);
    try {
      http.latency_after_restart = { version: retrainedVersion, ...(await latency(loadOn(r, await r.token()))) };
    } finally {
      await r.stop();
    }
    return http;
  } finally {
    await s.stop();
  }
}

if (values.child?.startsWith('scale:')) {
  const algorithm = values.child.slice('scale:'.length);
  if (!(SCALE_ALGORITHMS as readonly string[]).includes(algorithm)) throw new Error(`unknown algorithm ${algorithm}`);
  await runScaleChild(algorithm as (typeof SCALE_ALGORITHMS)[number], positionals[0] as string);
  process.exit(0);
}
if (values.child !== undefined) {
  await runChild(values.child, positionals[0] as string);
  process.exit(0);
}
if (values.synthetic !== undefined) {
  const positive = (x: string) => {
    const n = Number(x);
    if (!Number.isInteger(n) || n < 10) throw new Error(`--synthetic and --sizes take item counts (integers >= 10), got ${x}`);
    return n;
  };
  const n = positive(values.synthetic);
  if (values['end-to-end']) {
    await runScaleEndToEnd({ command: `npm run bench:recs -- ${process.argv.slice(2).join(' ')}`, items: n });
    process.exit(0);
  }
  const sizes = values.sizes ? values.sizes.split(',').map(positive) : [...new Set([1000, 10_000, n])].filter((x) => x <= n);
  const lastfm = values['skip-lastfm'] || !existsSync(join(values.lastfm, 'user_artists.dat')) ? undefined : values.lastfm;
  await runScale({ command: `npm run bench:recs -- ${process.argv.slice(2).join(' ')}`, sizes, lastfm });
  process.exit(0);
}

const dirs = positionals.length
  ? positionals
  : readdirSync(DATA_ROOT)
      .sort()
      .map((d) => join(DATA_ROOT, d));
const sets = dirs.map((dir) => ({ dir, set: loadSet(dir) })).filter((x): x is { dir: string; set: BenchSet } => x.set !== undefined);
if (!sets.length) {
  console.error(`usage: npm run bench:recs [-- <data dir>]  (no data set with interactions in ${dirs.join(', ')})`);
  process.exit(2);
}

if (values['context-only']) {
  // The control plane's side by side alone, written beside (not over) a full run's results.
  const measured = sets.filter((x) => x.set.control !== undefined);
  if (!measured.length) {
    console.error(`--context-only: no data set with a context's rules in ${dirs.join(', ')} (ml-latest-small has them)`);
    process.exit(2);
  }
  const command = `npm run bench:recs -- ${process.argv.slice(2).join(' ')}`;
  const out: Record<string, unknown> = {};
  const lines: string[] = [`${command}  (${new Date().toISOString()}, node ${process.version}, training algorithm ${values.algorithm})`, ''];
  for (const { dir, set } of measured) {
    const ds = new Dataset(set.train, set.universe);
    const http = await endToEnd(set, ds, true, true);
    out[set.name] = { dir, version: http.version, train_s: http.train_s, control_plane: http.control_plane ?? null };
    console.error(`${set.name} control plane: ${JSON.stringify(http.control_plane)}`);
    if (http.control_plane) lines.push(`## ${set.name}`, '', ...sideBySideRows(`Recommendations (limit 10, v${http.version})`, http.control_plane, Number(values.connections)), '');
  }
  const text = lines.join('\n');
  console.log(`\n${text}\n`);
  mkdirSync('bench-results', { recursive: true });
  writeFileSync('bench-results/recs-context.json', `${JSON.stringify({ command, date: new Date().toISOString(), node: process.version, algorithm: values.algorithm, datasets: out }, null, 2)}\n`);
  writeFileSync('bench-results/recs-context.md', `${text}\n`);
  process.exit(0);
}

const EASE_TARGET = 1.05;
const results: Record<string, unknown> = {};
const md: string[] = [`npm run bench:recs${positionals.length ? ` -- ${positionals.join(' ')}` : ''}  (${new Date().toISOString()}, node ${process.version})`, ''];
const summary: string[] = [];
for (const { dir, set } of sets) {
  const ds = new Dataset(set.train, set.universe);
  console.error(`${set.name}: ${ds.users.length} users, ${set.universe.length} items, ${set.train.length} training and ${set.test.length} test interactions`);
  const inProcess: Record<string, Row> = {};
  for (const [algo] of ALGOS) {
    inProcess[algo] = await inChild(algo, dir);
    console.error(`${set.name} ${algo}: ${JSON.stringify(inProcess[algo])}`);
  }
  const http = values['skip-http'] ? undefined : await endToEnd(set, ds, set.control !== undefined);
  if (http) console.error(`${set.name} http: ${JSON.stringify(http)}`);

  const knn = (inProcess.item_knn as Row).ndcg_at_10;
  const eases = EASE_LAMBDAS.map((l) => ({ lambda: l, row: inProcess[`ease_${l}`] as Row }));
  const bestEase = eases.reduce((a, b) => (b.row.ndcg_at_10 > a.row.ndcg_at_10 ? b : a));
  const def = inProcess.default as Row;
  const overEase = def.ndcg_at_10 / bestEase.row.ndcg_at_10;
  const overInProcess = http ? http.ndcg_at_10 / def.ndcg_at_10 : undefined;
  const targets = {
    default_over_best_ease: { best_ease_lambda: bestEase.lambda, ratio: round(overEase, 3), target: EASE_TARGET, met: overEase >= EASE_TARGET },
    ...(overInProcess !== undefined ? { end_to_end_over_in_process: { ratio: round(overInProcess, 4), target: 1, met: overInProcess >= 1 } } : {}),
  };
  results[set.name] = { dir, users: ds.users.length, items: set.universe.length, train: set.train.length, test: set.test.length, in_process: inProcess, http: http ?? null, targets };

  const row = (what: string, m: ReturnType<typeof fmt>, trainS: number, peak: number) =>
    `| ${what} | ${m.ndcg_at_10} | ${m.precision_at_10} | ${m.recall_at_10} | ${m.map_at_10} | ${m.coverage} | ${trainS} | ${peak} | ${(m.ndcg_at_10 / knn).toFixed(3)} | ${(m.ndcg_at_10 / bestEase.row.ndcg_at_10).toFixed(3)} |`;
  const dataMb = Math.min(...Object.values(inProcess).map((r) => r.data_rss_mb ?? Infinity));
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  md.push(
    `## ${set.name}`,
    '',
    `${set.describe}: ${ds.users.length} users, ${set.train.length} training and ${set.test.length} test interactions.`,
    '',
    `| algorithm | nDCG@10 | P@10 | R@10 | MAP@10 | coverage | train s | peak MB | ÷ item-kNN | ÷ best EASE |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...ALGOS.map(([algo, what]) => row(`${what}, in-process`, inProcess[algo] as Row, (inProcess[algo] as Row).train_s, (inProcess[algo] as Row).peak_rss_mb)),
    ...(http ? [row('auto, end to end over HTTP', http, http.train_s, http.peak_rss_mb)] : []),
    '',
    `In-process peak MB: the child process that loaded the data (≈ ${dataMb} MB before training) and trained the one algorithm. End to end: the training run's time (holdout evaluation, then the model on every interaction) and the local stack's peak (API, workers, database stand-in).`,
    `Chosen on validation in-process: ${JSON.stringify(def.chosen)} (validation nDCG@10 ${def.validation_ndcg_at_10})${http ? `; by the run: ${JSON.stringify((http.validation_of_the_run as { chosen?: unknown } | null)?.chosen ?? null)}` : ''}.`,
    '',
    `Targets: auto ÷ best plain EASE (λ ${bestEase.lambda}) = ${overEase.toFixed(3)} (target >= ${EASE_TARGET}: ${met(overEase >= EASE_TARGET)})` +
      (overInProcess !== undefined ? `; end to end ÷ in-process auto = ${overInProcess.toFixed(4)} (target >= 1: ${met(overInProcess >= 1)}).` : '.'),
    '',
  );
  summary.push(
    `${set.name}: auto ÷ best EASE ${overEase.toFixed(3)} (${met(overEase >= EASE_TARGET)})${overInProcess !== undefined ? `, end to end ÷ in-process ${overInProcess.toFixed(4)} (${met(overInProcess >= 1)})` : ''}`,
  );
  if (http?.latency_after_import) {
    const latencyRow = (what: string, l: Latency) => `| v${l.version}, ${what} | ${l.p50_ms} | ${l.p99_ms} | ${l.rps} | ${l.errors} | ${l.p99_ms < 50 ? 'met' : 'NOT met'} |`;
    md.push(
      `Recommendations at ${values.connections} concurrent clients (API handlers in ${values['api-threads']} thread(s), after ${values.warmup} s of warm-up; target p99 < 50 ms):`,
      '',
      '| serving model | p50 ms | p99 ms | req/s | errors | p99 < 50 ms |',
      '|---|---:|---:|---:|---:|---|',
      latencyRow('trained right after the import', http.latency_after_import),
      ...(http.latency_after_retraining ? [latencyRow('retrained (a new version of the same template), promoted', http.latency_after_retraining)] : []),
      ...(http.latency_after_restart ? [latencyRow('the same, after restarting the local stack on the same data', http.latency_after_restart)] : []),
      '',
      ...(http.control_plane ? sideBySideRows(`Recommendations (limit 10, v${http.latency_after_retraining?.version ?? ''})`, http.control_plane, Number(values.connections)) : []),
      '',
    );
  }
  // Written after each data set: a run that fails later keeps what it measured.
  write(false);
}
write(true);

/** The results so far (`done`: every data set) to bench-results/recs.json and .md; the whole printed at the end. */
function write(done: boolean): void {
  const text = [...md, ...(done ? [] : [`(${Object.keys(results).length} of ${sets.length} data sets so far)`, '']), 'Targets in this run:', '', ...summary.map((s) => `- ${s}`)].join('\n');
  if (done) console.log(`\n${text}\n`);
  mkdirSync('bench-results', { recursive: true });
  writeFileSync(
    'bench-results/recs.json',
    `${JSON.stringify(
      { command: `npm run bench:recs${positionals.length ? ` -- ${positionals.join(' ')}` : ''}`, date: new Date().toISOString(), node: process.version, complete: done, datasets: results },
      null,
      2,
    )}\n`,
  );
  writeFileSync('bench-results/recs.md', `${text}\n`);
}
