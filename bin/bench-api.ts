/**
 * `npm run bench:api [-- --duration 10 --connections 16]`
 *
 * Starts the local stack (`bin/server.ts`) as its own process on a spare port with a fresh
 * DATA_DIR, then drives it over loopback with autocannon: item create, get, list and event
 * ingest (batches of 100). In the same run, the same load on a bare DynamoDB GetItem against
 * the stack's own dynalite table is the floor; each route is reported as a ratio to it.
 * Prints a table and writes bench-results/api.json and bench-results/api.md.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { marshall } from '@aws-sdk/util-dynamodb';
import { keys } from '../shared/data/keys.ts';
import type { StackInfo } from '../local/stack.ts';
import { startBenchStack } from '../bench/stack.ts';

const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '16' } } });
const duration = Number(values.duration);
const connections = Number(values.connections);

const bench = await startBenchStack();
const base = bench.base;
const creds = bench.creds;
const stack = JSON.parse(readFileSync(join(bench.dataDir, 'stack.json'), 'utf8')) as StackInfo;
const auth = { authorization: `Bearer ${await bench.token()}`, 'content-type': 'application/json' };

// Seed a catalog for get and list.
const SEED = 1000;
for (let i = 0; i < SEED; i += 100) {
  const batch = Array.from({ length: 100 }, (_, k) => ({ name: `Seed item ${i + k}`, description: 'Benchmark seed item', metadata: { category: `c${(i + k) % 10}`, price: 100 + k } }));
  const r = await fetch(`${base}/v1/items`, { method: 'POST', headers: auth, body: JSON.stringify(batch) });
  if (r.status !== 201) throw new Error(`seed failed: ${r.status} ${await r.text()}`);
}
const randomId = () => 1 + Math.floor(Math.random() * SEED);
const eventBatch = JSON.stringify(Array.from({ length: 100 }, (_, k) => ({ type: k % 10 ? 'view' : 'purchase', user_id: `user-${k % 37}`, item_id: String(1 + (k % SEED)) })));

interface Scenario {
  name: string;
  url: string;
  perRequest?: number;
  requests: autocannon.Request[];
}

const scenarios: Scenario[] = [
  {
    name: 'floor: DynamoDB GetItem (dynalite)',
    url: stack.dynamodb_endpoint,
    requests: [
      {
        method: 'POST',
        headers: {
          'x-amz-target': 'DynamoDB_20120810.GetItem',
          'x-amz-date': '20260101T000000Z',
          'content-type': 'application/x-amz-json-1.0',
          authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=bench',
        },
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ TableName: stack.table, Key: marshall(keys.item(creds.tenant, randomId())) }) }),
      },
    ],
  },
  { name: 'GET /v1/items/{id}', url: base, requests: [{ method: 'GET', headers: auth, setupRequest: (req) => ({ ...req, path: `/v1/items/${randomId()}` }) }] },
  { name: 'GET /v1/items?limit=20', url: base, requests: [{ method: 'GET', path: '/v1/items?limit=20', headers: auth }] },
  { name: 'POST /v1/items', url: base, requests: [{ method: 'POST', path: '/v1/items', headers: auth, body: JSON.stringify({ name: 'Bench item', metadata: { category: 'bench' } }) }] },
  { name: 'POST /v1/events (100/batch)', url: base, perRequest: 100, requests: [{ method: 'POST', path: '/v1/events', headers: auth, body: eventBatch }] },
];

interface Row {
  name: string;
  p50_ms: number;
  p99_ms: number;
  requests_per_s: number;
  events_per_s: number | null;
  errors: number;
  ratio_p50_to_floor: number;
  ratio_rps_to_floor: number;
}

const rows: Row[] = [];
let floor: autocannon.Result | undefined;
for (const s of scenarios) {
  const r = await autocannon({ url: s.url, connections, duration, requests: s.requests });
  floor ??= r;
  rows.push({
    name: s.name,
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    requests_per_s: Math.round(r.requests.average),
    events_per_s: s.perRequest ? Math.round(r.requests.average * s.perRequest) : null,
    errors: r.errors + r.timeouts + r.non2xx,
    ratio_p50_to_floor: Number((r.latency.p50 / Math.max(floor.latency.p50, 1)).toFixed(1)),
    ratio_rps_to_floor: Number((r.requests.average / floor.requests.average).toFixed(2)),
  });
  console.error(`done: ${s.name}`);
}

await bench.stop();

const header = '| scenario | p50 ms | p99 ms | req/s | events/s | errors | p50 ÷ floor | req/s ÷ floor |\n|---|---:|---:|---:|---:|---:|---:|---:|';
const table = [
  header,
  ...rows.map((r) => `| ${r.name} | ${r.p50_ms} | ${r.p99_ms} | ${r.requests_per_s} | ${r.events_per_s ?? ''} | ${r.errors} | ${r.ratio_p50_to_floor} | ${r.ratio_rps_to_floor} |`),
].join('\n');
const meta = {
  command: `npm run bench:api -- --duration ${duration} --connections ${connections}`,
  date: new Date().toISOString(),
  node: process.version,
  cpus: (await import('node:os')).cpus().length,
  connections,
  duration_s: duration,
};
console.log(`\n${meta.command}  (${meta.date}, node ${meta.node}, ${meta.cpus} cores)\n\n${table}\n`);
mkdirSync('bench-results', { recursive: true });
writeFileSync('bench-results/api.json', `${JSON.stringify({ ...meta, rows }, null, 2)}\n`);
writeFileSync('bench-results/api.md', `${meta.command}  (${meta.date}, node ${meta.node}, ${meta.cpus} cores)\n\n${table}\n`);
const errors = rows.reduce((a, r) => a + r.errors, 0);
if (errors > 0) {
  console.error(`${errors} errors: the run does not count`);
  process.exitCode = 1;
}
