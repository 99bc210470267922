/**
 * `npm run bench:recs -- --synthetic N [--sizes 1000,10000,N] [--lastfm <dir> | --skip-lastfm]`:
 * training at scale. Per catalog size, synthetic interactions (bench/synthetic-interactions.ts:
 * 40 events per item, as many users as items, Zipf popularity, latent clusters), split per item
 * 75/25 (seed 42) as the data sets of ../shared/data are; then `auto` and `ease` as the service
 * trains them (shared/recs/trainer.ts `trainAlgorithm`), each in a child process of its own so its
 * peak memory (maxRSS) is its own. Per run: training time, peak memory, nDCG@10 on the held-out
 * part (a seeded sample of 2,000 test users beyond that many), the items recommended to them
 * (coverage), the items the model can score at all (reachable: EASE's head, iALS's items with
 * training data, the union for a blend), and the artifact as serving loads it (size, pack and
 * unpack time, the users' histories included). Then lastfm's full catalog, the same two
 * algorithms, every test user. Results in bench-results/recs-synthetic.json and .md.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { historiesOf, packModel, unpackModel } from '../shared/recs/artifact.ts';
import { AlsModel, BlendModel, DenseHeadModel } from '../shared/recs/blend.ts';
import { Dataset, type Interaction } from '../shared/recs/dataset.ts';
import { evaluate } from '../shared/recs/evaluate.ts';
import { ItemItemModel, type Model } from '../shared/recs/models.ts';
import { HOLDOUT_MAX_USERS, trainAlgorithm } from '../shared/recs/trainer.ts';
import { DEFAULT_TRAINING_OPTIONS } from '../shared/schemas/console.ts';
import { loadLastfm } from './lastfm.ts';
import { splitByItem } from './movielens.ts';
import { syntheticInteractions } from './synthetic-interactions.ts';

export const SCALE_ALGORITHMS = ['auto', 'ease'] as const;
type Algorithm = (typeof SCALE_ALGORITHMS)[number];

export interface ScaleRow {
  data: string;
  algorithm: Algorithm;
  items: number;
  users: number;
  train_interactions: number;
  test_users: number;
  ndcg_at_10: number;
  precision_at_10: number;
  recall_at_10: number;
  coverage: number;
  /** Items the model can score (see `reachable`), over the catalog. */
  reachable: number;
  /** Items with at least one training interaction, over the catalog: what any model could reach. */
  with_data: number;
  train_s: number;
  /** CPU seconds of the training (user + system): wall time on a machine shared with other work says less. */
  train_cpu_s: number;
  eval_s: number;
  peak_rss_mb: number;
  data_rss_mb: number;
  artifact_mb: number;
  pack_s: number;
  unpack_s: number;
  chosen?: unknown;
}

/** The item indexes a model can give a score other than 0 (by its structure, not by sampling histories). */
export function reachable(m: Model, ds: Dataset): Set<number> {
  const out = new Set<number>();
  if (m instanceof DenseHeadModel) m.head.forEach((i) => out.add(i));
  else if (m instanceof AlsModel) {
    // Every item with training data has a fitted factor; the others keep their (tiny) random start.
    for (let i = 0; i < m.itemCount; i++) if ((ds.itemCount[i] as number) > 0) out.add(i);
  } else if (m instanceof ItemItemModel) m.nbr.forEach((i) => out.add(i));
  else if (m instanceof BlendModel) m.parts.forEach((p, k) => (m.weights[k] as number) > 0 && reachable(p, ds).forEach((i) => out.add(i)));
  else for (let i = 0; i < m.itemCount; i++) out.add(i);
  return out;
}

const round = (x: number, d = 4) => Number(x.toFixed(d));

function load(data: string): { universe: number[]; train: Interaction[]; test: Interaction[] } {
  if (data.startsWith('synthetic:')) {
    const s = syntheticInteractions(Number(data.slice('synthetic:'.length)));
    return { universe: s.universe, ...splitByItem(s.interactions, 42, 'id') };
  }
  const { artists, plays } = loadLastfm(data.slice('lastfm:'.length));
  return { universe: artists.map((a) => a.id), ...splitByItem(plays, 42, 'first') };
}

/** In a child process: one algorithm on one data set (`synthetic:<items>` or `lastfm:<dir>`), its row printed as JSON. */
export async function runScaleChild(algorithm: Algorithm, data: string): Promise<void> {
  const { universe, train, test } = load(data);
  const ds = new Dataset(train, universe);
  const dataRss = process.memoryUsage().rss;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const { model, validation } = await trainAlgorithm(algorithm, ds, DEFAULT_TRAINING_OPTIONS);
  const trainS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const t1 = performance.now();
  // lastfm: every test user (1,892), as bench:recs; synthetic: the trainer's holdout sample size.
  const m = evaluate(model, ds, test, 10, data.startsWith('lastfm:') ? Infinity : HOLDOUT_MAX_USERS);
  const evalS = (performance.now() - t1) / 1000;
  const t2 = performance.now();
  const bytes = packModel({ model, items: ds.items, popularity: Float32Array.from(ds.itemWeight), histories: historiesOf(ds, 0, ['play'], 0) });
  const packS = (performance.now() - t2) / 1000;
  const t3 = performance.now();
  unpackModel(bytes);
  const unpackS = (performance.now() - t3) / 1000;
  let withData = 0;
  for (let i = 0; i < ds.items.length; i++) if ((ds.itemCount[i] as number) > 0) withData++;
  const row: ScaleRow = {
    data,
    algorithm,
    items: universe.length,
    users: ds.users.length,
    train_interactions: train.length,
    test_users: m.users,
    ndcg_at_10: round(m.ndcg_at_10),
    precision_at_10: round(m.precision_at_10),
    recall_at_10: round(m.recall_at_10),
    coverage: round(m.coverage),
    reachable: round(reachable(model, ds).size / universe.length),
    with_data: round(withData / universe.length),
    train_s: round(trainS, 1),
    train_cpu_s: round((cpu.user + cpu.system) / 1e6, 1),
    eval_s: round(evalS, 1),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    data_rss_mb: Math.round(dataRss / 2 ** 20),
    artifact_mb: round(bytes.byteLength / 2 ** 20, 1),
    pack_s: round(packS, 2),
    unpack_s: round(unpackS, 2),
    ...(validation ? { chosen: validation.chosen } : {}),
  };
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

function inChild(algorithm: Algorithm, data: string): Promise<ScaleRow> {
  return new Promise((resolve, reject) => {
    // 10 GB of heap at most: Lambda's memory ceiling.
    const child = spawn(process.execPath, ['--max-old-space-size=10240', '--import', 'tsx', 'bin/bench-recs.ts', '--child', `scale:${algorithm}`, data], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const last = out.trim().split('\n').pop();
      if (code !== 0 || !last) reject(new Error(`${algorithm} on ${data}: exit ${code}`));
      else resolve(JSON.parse(last) as ScaleRow);
    });
  });
}

export async function runScale(opts: { command: string; sizes: number[]; lastfm: string | undefined }): Promise<void> {
  const rows: ScaleRow[] = [];
  const started = new Date().toISOString();
  const write = (done: boolean) => {
    const line = (r: ScaleRow) =>
      `| ${r.data.startsWith('lastfm:') ? 'lastfm' : r.items.toLocaleString('en')} | ${r.algorithm} | ${r.users.toLocaleString('en')} | ${r.train_interactions.toLocaleString('en')} | ${r.train_s} | ${r.train_cpu_s} | ${r.peak_rss_mb} | ${r.data_rss_mb} | ${r.ndcg_at_10} | ${r.coverage} | ${r.reachable} | ${r.with_data} | ${r.artifact_mb} | ${r.test_users} |`;
    const md = [
      `${opts.command}  (${started}, node ${process.version}${done ? '' : `; ${rows.length} runs so far`})`,
      '',
      '| catalog | algorithm | users | training interactions | train s | train CPU s | peak MB | data MB | nDCG@10 | coverage | reachable | with data | artifact MB | test users |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map(line),
      '',
      'Synthetic: 40 events per item, as many users as items, Zipf (exponent 1) popularity, latent clusters; per-item 75/25 split (seed 42). ' +
        'train s: one fit on the training part, as a run fits it (a run fits twice: on its holdout split, then on everything); train CPU s: its CPU time (the machine is shared: wall time includes waiting for a core). ' +
        'peak MB: the child process that generated or loaded the data (data MB) and trained; its heap capped at 10 GB. ' +
        'coverage: distinct items recommended to the test users over the catalog; reachable: items the model can score at all (EASE: its head; iALS: every item with training data; a blend: the union); with data: items with at least one training interaction. ' +
        `artifact MB: the model with every user's history, as stored. Test users: a seeded sample of ${HOLDOUT_MAX_USERS} on synthetic data, all on lastfm.`,
      '',
      'Chosen by auto on validation: ' +
        rows
          .filter((r) => r.chosen)
          .map((r) => `${r.data.startsWith('lastfm:') ? 'lastfm' : r.items}: ${JSON.stringify(r.chosen)}`)
          .join('; '),
    ];
    mkdirSync('bench-results', { recursive: true });
    writeFileSync('bench-results/recs-synthetic.json', `${JSON.stringify({ command: opts.command, date: started, node: process.version, complete: done, rows }, null, 2)}\n`);
    writeFileSync('bench-results/recs-synthetic.md', `${md.join('\n')}\n`);
    if (done) console.log(`\n${md.join('\n')}\n`);
  };
  const datas = [...opts.sizes.map((n) => `synthetic:${n}`), ...(opts.lastfm ? [`lastfm:${opts.lastfm}`] : [])];
  for (const data of datas) {
    for (const algorithm of SCALE_ALGORITHMS) {
      const row = await inChild(algorithm, data);
      console.error(JSON.stringify(row));
      rows.push(row);
      write(false);
    }
  }
  write(true);
}
