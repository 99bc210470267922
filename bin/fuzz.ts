/**
 * `npm run fuzz -- --cases 50000 --seed N [--concurrency 4] [--routes] [--show 20]`
 *   Seeded fuzzing of every route of the route table against a fresh local stack (its own
 *   DATA_DIR in a temporary folder): the generator of test/integration/fuzz.test.ts, run longer.
 *   Prints the counts by status (and by mutation; per route with --routes), then every answer
 *   that was a 5xx or outside its API's envelope with the request that caused it and the
 *   handler's error log (stack), then reads back what the accepted writes stored. Exits 1 on
 *   any finding.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.POWERTOOLS_TRACE_ENABLED ??= 'false';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '3000' },
    seed: { type: 'string', default: '18' },
    concurrency: { type: 'string', default: '4' },
    routes: { type: 'boolean', default: false },
    show: { type: 'string', default: '20' },
  },
});
const cases = Number(values.cases);
const seed = Number(values.seed);
const concurrency = Number(values.concurrency);
if (!Number.isSafeInteger(cases) || cases < 1 || !Number.isSafeInteger(seed) || !Number.isSafeInteger(concurrency) || concurrency < 1) {
  console.error('usage: npm run fuzz -- --cases <n> --seed <n> [--concurrency <n>] [--routes] [--show <n>]');
  process.exit(2);
}

// The handlers' error log lines (they carry the stack), kept instead of printed. The handlers of
// the local server share one logger, so a line may name another function than the one that failed.
const errorLines: string[] = [];
let capturing = true;
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (capturing && text.includes('"level":"ERROR"')) {
      errorLines.push(...text.split('\n').filter((l) => l.includes('"level":"ERROR"')));
      if (errorLines.length > 5000) errorLines.splice(0, errorLines.length - 5000);
      return true;
    }
    return write(chunk, ...rest);
  }) as typeof stream.write;
}

/** An error log line as its message and the stack frames of this project. */
function errorSummary(line: string): string {
  try {
    const e = (JSON.parse(line) as { error?: { name?: string; message?: string; stack?: string } }).error;
    const frames = (e?.stack ?? '')
      .split('\n')
      .filter((f) => f.includes('/shared/') || f.includes('/functions/'))
      .map((f) => f.trim());
    return `${e?.name}: ${e?.message}${frames.length ? `\n      ${frames.join('\n      ')}` : ''}`;
  } catch {
    return line.slice(0, 2000);
  }
}

const { startLocalStack } = await import('../local/stack.ts');
const { describe, run, verifyWrites } = await import('../test/helpers/fuzz.ts');

const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-fuzz-'));
const stack = await startLocalStack({
  dataDir,
  port: 0,
  // Limits that would otherwise answer most cases 429 before they reach a handler.
  env: { TOKEN_RATE_PER_SECOND: '100000', TOKEN_BURST: '100000', TENANT_RATE_PER_SECOND: '100000', TENANT_BURST: '100000' },
});
const base = `http://127.0.0.1:${stack.port}`;
try {
  const c = stack.credentials;
  const tokenAnswer = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  const token = ((await tokenAnswer.json()) as { access_token: string }).access_token;
  const creds = { clientId: c.client_id, clientSecret: c.client_secret, token, apiKey: c.api_key };

  const perRoute = new Map<string, Map<number, number>>();
  const logsOf = new Map<number, string[]>();
  let done = 0;
  const result = await run({
    base,
    creds,
    seed,
    cases,
    concurrency,
    onCase: (fc, answer, problem) => {
      // The error lines logged by the time a 5xx came back (the latest are most likely its own).
      if (problem) logsOf.set(fc.n, errorLines.slice(-3));
      const key = `${fc.route.method} ${fc.route.path}${fc.mutation === 'valid' ? ' (valid)' : ''}`;
      let m = perRoute.get(key);
      if (!m) perRoute.set(key, (m = new Map()));
      const s = answer?.status ?? 0;
      m.set(s, (m.get(s) ?? 0) + 1);
      if (++done % 5000 === 0) console.error(`${done} cases...`);
    },
  });
  const fmt = (m: Map<number, number>) =>
    [...m]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s === -1 ? 'not sent' : s === 0 ? 'no answer' : s}: ${n}`)
      .join(', ');
  console.log(`\nnpm run fuzz -- --cases ${cases} --seed ${seed}  (${new Date().toISOString()}, node ${process.version}, concurrency ${concurrency})`);
  console.log(
    `${cases} cases in ${(result.ms / 1000).toFixed(1)} s (${Math.round(cases / (result.ms / 1000))}/s)${result.setup.length ? `; setup requests refused: ${result.setup.join('; ')}` : ''}\n`,
  );
  console.log('| status | cases |\n|---:|---:|');
  for (const [s, n] of [...result.byStatus].sort((a, b) => a[0] - b[0])) console.log(`| ${s === -1 ? 'not sent (refused by the client)' : s === 0 ? 'no answer' : s} | ${n} |`);
  console.log('\nBy mutation:');
  for (const [m, counts] of [...result.byMutation].sort()) console.log(`  ${m.padEnd(12)} ${fmt(counts)}`);
  if (values.routes) {
    console.log('\nBy route:');
    for (const [k, counts] of [...perRoute].sort()) console.log(`  ${k.padEnd(58)} ${fmt(counts)}`);
  }
  const shown = result.findings.slice(0, Number(values.show));
  const shownLogs = new Set<string>();
  console.log(`\n${result.findings.length} findings (5xx or outside the API's envelope)${result.findings.length > shown.length ? `, the first ${shown.length}:` : ''}`);
  for (const f of shown) {
    console.log(describe(f));
    const header = f.answer?.headers['x-request-id'];
    const requestId = (typeof header === 'string' ? header : undefined) ?? /"request_id":"([0-9a-f-]{36})"/.exec(f.answer?.text ?? '')?.[1];
    const matched = requestId ? errorLines.filter((l) => l.includes(requestId)) : [];
    const logs = matched.length ? matched : (logsOf.get(f.c.n) ?? []).filter((l) => !shownLogs.has(l));
    for (const l of logs) shownLogs.add(l);
    for (const l of logs) console.log(`  log${matched.length ? '' : ' (logged by then, not matched by request id)'} ${errorSummary(l)}`);
  }
  capturing = false;
  const problems = await verifyWrites(base, creds, result.writes);
  console.log(
    `\nRead back: ${result.writes.items.size} items, ${result.writes.events.size} events, ${result.writes.created.size + [...result.writes.listed.values()].reduce((n, s) => n + s.size, 0)} other created resources: ${problems.length ? `${problems.length} problems` : 'all read back'}`,
  );
  for (const p of problems.slice(0, Number(values.show))) console.log(`  ${p}`);
  if (result.findings.length || problems.length) process.exitCode = 1;
} finally {
  await stack.close();
  rmSync(dataDir, { recursive: true, force: true });
}
