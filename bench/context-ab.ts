/**
 * `node --import tsx bench/context-ab.ts <other checkout>... [--rounds 3] [--algorithm ease] [--save DIR | --seeded DIR]`
 *
 * bench:recs's control-plane side by side (ml-latest-small, 8 clients, limit 10, the same context
 * as bench/context.ts) on several checkouts' servers in one run: the data is seeded once (by the
 * first other checkout's server; `--save` keeps a copy, `--seeded` starts from one), copied, and
 * each checkout's server started on its own copy; then, round after round, each server gets the
 * load without and with the context (the order of the servers alternates). Each server's p99
 * ratio is the mean p99 with the context over the mean without, as bench:recs reports it, and
 * beside it the server process's CPU time (every thread: API handlers and the database stand-in,
 * from /proc at 100 ticks a second) per request: on a shared machine whose p99 moves by 2 x
 * between rounds, the CPU a request costs moves far less. All of it from the same minutes.
 * `--profile-only`: only this checkout's server, warmed up, then one load with the context for
 * `--duration` s (start it with BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=...").
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { setUpContext } from './context.ts';
import { loadMovieLens, movieItem, splitByItem } from './movielens.ts';
import { type BenchStack, DEFAULT_API_THREADS, startBenchStack, waitFor } from './stack.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '3' },
    algorithm: { type: 'string', default: 'ease' },
    connections: { type: 'string', default: '8' },
    duration: { type: 'string', default: '10' },
    data: { type: 'string', default: '../shared/data/ml-latest-small' },
    /** A folder `--save` wrote: its data instead of seeding again. */
    seeded: { type: 'string' },
    /** Where to keep a copy of the seeded data (for `--seeded`). */
    save: { type: 'string' },
    /** Only this checkout's server, `--seeded`: one load of the context for `--duration` s (a profile's). */
    'profile-only': { type: 'boolean', default: false },
    /** With --profile-only: the load without the context instead (its profile to compare). */
    'profile-without': { type: 'boolean', default: false },
  },
});
const others = positionals.map((p) => resolve(p));
const stackOf = async (root: string) => ((await import(pathToFileURL(join(root, 'bench/stack.ts')).href)) as { startBenchStack: typeof startBenchStack }).startBenchStack;
/** The server that seeds the data: the first other checkout's, else this one's. */
const otherStack = { startBenchStack: others[0] !== undefined ? await stackOf(others[0]) : startBenchStack };

const env = { MAINTENANCE_SECONDS: '30', LOCAL_API_THREADS: DEFAULT_API_THREADS };

const { movies, ratings } = loadMovieLens(values.data);
const { train } = splitByItem(ratings);
const genreCounts = new Map<string, number>();
for (const m of movies) genreCounts.set(m.genres.join('|'), (genreCounts.get(m.genres.join('|')) ?? 0) + 1);
const genres = [...genreCounts]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 16)
  .map(([g]) => g);

async function seedData(): Promise<{ dataDir: string; contextId: number; users: string[] }> {
  const seed = await otherStack.startBenchStack(env);
  const ok = (r: { status: number; body: any }, what: string) => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const itemIds = new Map<number, string>();
  for (let i = 0; i < movies.length; i += 100) {
    const batch = movies.slice(i, i + 100);
    const body = ok(await seed.core('POST', '/v1/items', batch.map(movieItem)), 'items');
    (body.data as { id: string }[]).forEach((it, k) => itemIds.set((batch[k] as { id: number }).id, it.id));
  }
  for (let i = 0; i < train.length; i += 500) {
    ok(
      await seed.core(
        'POST',
        '/v1/events',
        train.slice(i, i + 500).map((x) => ({ type: 'rating', user_id: x.user, item_id: itemIds.get(x.item), occurred_at: x.at })),
      ),
      'events',
    );
  }
  const et = ok(await seed.platform('POST', '/api/event-types', { name: 'rating', weight: 1 }), 'event type');
  const tpl = ok(await seed.platform('POST', '/api/events/templates', { name: 'rating', event_types: [{ id: et.id, weight: 1 }], thresholds: { per_signal_min: 1, total_min: 1000 } }), 'template');
  ok(await seed.platform('PATCH', `/api/events/templates/${tpl.id}`, { status: 'Published' }), 'publish');
  ok(await seed.platform('POST', '/api/model-endpoints', { endpoint_name: 'main', is_default: true }), 'endpoint');
  const job = ok(await seed.platform('POST', '/api/training-jobs', { template_id: tpl.id, options: { algorithm: values.algorithm } }), 'training');
  const done = await waitFor(
    'training',
    () => seed.platform('GET', `/api/training-jobs/${job.job_name}`),
    (r) => ['Completed', 'Failed'].includes(r.body.status),
    3_600_000,
    1000,
  );
  if (done.body.status !== 'Completed') throw new Error(`training failed: ${done.body.error}`);
  const version = done.body.model_version as number;
  ok(await seed.platform('POST', `/api/models/${version}/approve`), 'approve');
  ok(await seed.platform('POST', `/api/models/${version}/promote`, { endpoint_name: 'main' }), 'promote');
  ok(await seed.platform('POST', '/api/model-endpoints', { endpoint_name: 'next' }), 'endpoint');
  ok(await seed.platform('POST', `/api/models/${version}/promote`, { endpoint_name: 'next' }), 'promote');
  const users = [...new Set(train.map((x) => x.user))];
  const { contextId } = await setUpContext(seed, { endpoints: ['main', 'next'], key: 'genres', values: genres, eventType: 'rating', itemIds: [...itemIds.values()], users });
  await seed.stop({ keepData: true });
  writeFileSync(join(seed.dataDir, 'context-ab.json'), JSON.stringify({ contextId, users }));
  return { dataDir: seed.dataDir, contextId, users };
}
const fresh = () => mkdtempSync(join(tmpdir(), 'recsearch-bench-'));
const seeded = values.seeded ? { dataDir: values.seeded, ...(JSON.parse(readFileSync(join(values.seeded, 'context-ab.json'), 'utf8')) as { contextId: number; users: string[] }) } : await seedData();
if (values.save) cpSync(seeded.dataDir, values.save, { recursive: true });
const { contextId, users } = seeded;
const copyOf = () => {
  const d = fresh();
  cpSync(seeded.dataDir, d, { recursive: true });
  return d;
};

type Server = { name: string; s: BenchStack; token: string; plain: number[]; ctx: number[]; rpsPlain: number[]; rpsCtx: number[]; cpuPlain: number[]; cpuCtx: number[] };
const servers: Server[] = [];
const starts: [string, typeof startBenchStack][] = values['profile-only'] ? [] : await Promise.all(others.map(async (o): Promise<[string, typeof startBenchStack]> => [o, await stackOf(o)]));
starts.push(['this checkout', startBenchStack]);
for (const [name, start] of starts) {
  const s = await start(env, copyOf());
  servers.push({ name, s, token: await s.token(), plain: [], ctx: [], rpsPlain: [], rpsCtx: [], cpuPlain: [], cpuCtx: [] });
}
/** The server process's CPU time so far (every thread), ms. */
const cpuOf = (pid: number): number => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};
const measured = async (x: Server, ctx: number | undefined, d: number) => {
  const c0 = cpuOf(x.s.pid);
  const r = await load(x.s, x.token, ctx, d);
  return { r, cpuPerRequest: (cpuOf(x.s.pid) - c0) / Math.max(1, r.requests.total) };
};
let k = 0;
const load = (s: BenchStack, token: string, ctx: number | undefined, duration: number) =>
  autocannon({
    url: s.base,
    connections: Number(values.connections),
    duration,
    requests: [
      {
        method: 'GET',
        headers: { authorization: `Bearer ${token}` },
        setupRequest: (req) => ({ ...req, path: `/v1/recommendations?user_id=${encodeURIComponent(users[k++ % users.length] as string)}&limit=10${ctx !== undefined ? `&context_id=${ctx}` : ''}` }),
      },
    ],
  });
try {
  for (const x of servers) {
    await load(x.s, x.token, undefined, 5);
    await load(x.s, x.token, contextId, 5);
  }
  const d = Number(values.duration);
  if (values['profile-only']) {
    const x = servers[0] as (typeof servers)[number];
    const b = await load(x.s, x.token, values['profile-without'] ? undefined : contextId, d);
    console.log(`context load: p50 ${b.latency.p50} p99 ${b.latency.p99} ms, ${Math.round(b.requests.average)} req/s`);
  } else {
    for (let r = 0; r < Number(values.rounds); r++) {
      for (const x of r % 2 ? [...servers].reverse() : servers) {
        const ma = await measured(x, undefined, d);
        const mb = await measured(x, contextId, d);
        const [a, b] = [ma.r, mb.r];
        x.cpuPlain.push(ma.cpuPerRequest);
        x.cpuCtx.push(mb.cpuPerRequest);
        if (a.non2xx || b.non2xx || a.errors || b.errors) console.error(`${x.name}: errors ${a.non2xx + a.errors} / ${b.non2xx + b.errors}`);
        x.plain.push(a.latency.p99);
        x.ctx.push(b.latency.p99);
        x.rpsPlain.push(a.requests.average);
        x.rpsCtx.push(b.requests.average);
        console.error(
          `round ${r + 1} ${x.name}: p99 ${a.latency.p99} / ${b.latency.p99} ms, p50 ${a.latency.p50} / ${b.latency.p50}, ${Math.round(a.requests.average)} / ${Math.round(b.requests.average)} req/s, server CPU ${ma.cpuPerRequest.toFixed(2)} / ${mb.cpuPerRequest.toFixed(2)} ms a request`,
        );
      }
    }
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  if (!values['profile-only']) console.log('| server | p99 without ms | p99 with ms | with ÷ without | req/s without | req/s with | server CPU ms a request without | with | with ÷ without |');
  if (!values['profile-only']) console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const x of values['profile-only'] ? [] : servers) {
    console.log(
      `| ${x.name} | ${mean(x.plain).toFixed(1)} | ${mean(x.ctx).toFixed(1)} | ${(mean(x.ctx) / mean(x.plain)).toFixed(3)} | ${Math.round(mean(x.rpsPlain))} | ${Math.round(mean(x.rpsCtx))} | ${mean(x.cpuPlain).toFixed(2)} | ${mean(x.cpuCtx).toFixed(2)} | ${(mean(x.cpuCtx) / mean(x.cpuPlain)).toFixed(3)} |`,
    );
  }
} finally {
  for (const x of servers) await x.s.stop();
  // The data seeded here (each server ran on a copy; `--save` kept another).
  if (!values.seeded) rmSync(seeded.dataDir, { recursive: true, force: true });
}
