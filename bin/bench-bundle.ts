/**
 * `npm run bench:bundle [-- --runs 7]`
 *
 * Synthesises the CDK app (real esbuild bundles, as deployed) into a temporary cloud assembly,
 * then for every function reports the minified bundle size and the time to import the bundle
 * in a fresh Node process (a proxy for Lambda init), median of several runs, against the
 * budget of 300 KB and 100 ms per API function. Then the console web app: its bundle size (raw
 * and gzip) and first load time in Chromium (bin/bench-console.ts). Writes bench-results/bundle.json
 * and .md. `--only console` (or `--only lambda`) measures one part; the console part alone writes
 * bench-results/bundle-console.json and .md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { lambdaAliases, POWERTOOLS_FROM_LAYER, POWERTOOLS_VERSION } from '../lib/service-function.ts';
import { benchConsole, CONSOLE_BUDGET, consoleMarkdown, type ConsoleBench } from './bench-console.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, only: { type: 'string' } } });
const runs = Number(values.runs);
if (values.only !== undefined && values.only !== 'console' && values.only !== 'lambda') throw new Error('--only is console or lambda');
if (values.only === 'console') {
  const b = await benchConsole(runs);
  const text = `npm run bench:bundle -- --only console --runs ${runs}  (${new Date().toISOString()}, node ${process.version})\n\n${consoleMarkdown(b)}\n`;
  console.log(`\n${text}`);
  mkdirSync('bench-results', { recursive: true });
  writeFileSync(
    'bench-results/bundle-console.json',
    `${JSON.stringify({ command: `npm run bench:bundle -- --only console --runs ${runs}`, date: new Date().toISOString(), budget: CONSOLE_BUDGET, ...b }, null, 2)}\n`,
  );
  writeFileSync('bench-results/bundle-console.md', text);
  process.exit(0);
}
const BUDGET_KB = 300;
const BUDGET_MS = 100;

const out = mkdtempSync(join(tmpdir(), 'recsearch-bundle-'));
console.error('synthesising (esbuild bundles every function)...');
execFileSync('node_modules/.bin/cdk', ['synth', '--quiet', '--output', out], { stdio: ['ignore', 'ignore', 'inherit'] });
// The Powertools layer, as Lambda mounts it (/opt/nodejs/node_modules): the bundles' only
// external imports resolve from here, so their load time is part of every import measured.
symlinkSync(join(process.cwd(), 'node_modules'), join(out, 'node_modules'), 'dir');
type Template = { Resources: Record<string, { Type: string; Properties: { Description?: string }; Metadata?: Record<string, string> }> };
// The root stack's template and its nested stacks' (the Platform API, the training task, the
// console's hosting): every function of the app is in one of them.
const templates = readdirSync(out)
  .filter((f) => f === 'RecSearch.template.json' || f.endsWith('.nested.template.json'))
  .map((f) => JSON.parse(readFileSync(join(out, f), 'utf8')) as Template);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

/** Wall time of `import(bundle)` inside a fresh node process, as that process measures it. */
function importMs(file: string): number {
  const code = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const outText = execFileSync(process.execPath, ['--input-type=module', '-e', code], {
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'eu-west-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_SERVICE_NAME: 'recsearch' },
    encoding: 'utf8',
  });
  return Number(outText);
}

interface Row {
  function: string;
  kind: 'api' | 'worker';
  size_kb: number;
  import_ms_median: number;
  over_budget: string[];
}

const rows: Row[] = [];
for (const [id, r] of templates.flatMap((t) => Object.entries(t.Resources))) {
  // Ours only: CDK's own helpers (the console's deployment, custom resources) are not ours to budget.
  if (r.Type !== 'AWS::Lambda::Function' || !r.Properties.Description?.startsWith('functions/')) continue;
  const module = (r.Properties.Description ?? id).replace(/^functions\/|\.ts$/g, '');
  const asset = r.Metadata?.['aws:asset:path'];
  if (!asset) throw new Error(`${id} has no asset path`);
  const file = join(out, asset, 'index.mjs');
  const sizeKb = statSync(file).size / 1024;
  const times = Array.from({ length: runs }, () => importMs(file));
  const kind = module.startsWith('workers/') ? 'worker' : 'api';
  const over: string[] = [];
  if (kind === 'api' && sizeKb > BUDGET_KB) over.push('size');
  if (kind === 'api' && median(times) > BUDGET_MS) over.push('import');
  rows.push({ function: module, kind, size_kb: Math.round(sizeKb), import_ms_median: Number(median(times).toFixed(1)), over_budget: over });
  console.error(`measured ${module}`);
}
rmSync(out, { recursive: true, force: true });
rows.sort((a, b) => b.size_kb - a.size_kb);

/** Which packages fill the largest bundle: esbuild's metafile with the options the CDK bundling uses. */
async function offenders(module: string): Promise<{ package: string; kb: number }[]> {
  const r = await build({
    entryPoints: [`functions/${module}.ts`],
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    mainFields: ['module', 'main'],
    write: false,
    metafile: true,
    external: [...POWERTOOLS_FROM_LAYER],
    alias: lambdaAliases('local'),
    define: { 'process.env.EMBEDDING_PROVIDER': '"local"' },
  });
  const output = Object.entries(r.metafile.outputs).find(([k]) => !k.endsWith('.map'))?.[1];
  const byPackage = new Map<string, number>();
  for (const [path, v] of Object.entries(output?.inputs ?? {})) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const key = m?.[1] ?? '(project code)';
    byPackage.set(key, (byPackage.get(key) ?? 0) + v.bytesInOutput);
  }
  return [...byPackage]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([p, b]) => ({ package: p, kb: Math.round(b / 1024) }));
}
/** The largest offenders of the biggest function, and of every other API function over budget. */
const explained = [...new Set([rows[0]?.function, ...rows.filter((r) => r.over_budget.length).map((r) => r.function)].filter((f): f is string => f !== undefined))];
const offendersOf = new Map<string, { package: string; kb: number }[]>();
for (const f of explained) offendersOf.set(f, await offenders(f));

const meta = { command: `npm run bench:bundle -- --runs ${runs}`, date: new Date().toISOString(), node: process.version, budget: { size_kb: BUDGET_KB, import_ms: BUDGET_MS } };
const table = [
  '| function | kind | minified KB | import ms (median) | over budget |',
  '|---|---|---:|---:|---|',
  ...rows.map((r) => `| ${r.function} | ${r.kind} | ${r.size_kb} | ${r.import_ms_median} | ${r.over_budget.join(', ') || '-'} |`),
].join('\n');
const over = rows.filter((r) => r.over_budget.length);
const summary = `${rows.length} functions; largest ${rows[0]?.function} ${rows[0]?.size_kb} KB; slowest import ${[...rows].sort((a, b) => b.import_ms_median - a.import_ms_median)[0]?.import_ms_median} ms; ${over.length} API functions over the ${BUDGET_KB} KB / ${BUDGET_MS} ms budget.`;
const offenderText = [
  ...[...offendersOf].map(([f, list]) => `Largest offenders inside ${f}: ${list.map((o) => `${o.package} ${o.kb} KB`).join(', ')}.`),
  `Not in the bundles: ${POWERTOOLS_FROM_LAYER.join(', ')} ${POWERTOOLS_VERSION} come from the AWS-published Powertools layer; the import times include loading them.`,
].join('\n');
const consoleBench: ConsoleBench | undefined = values.only === 'lambda' ? undefined : await benchConsole(Math.min(runs, 5));
const text = `${meta.command}  (${meta.date}, node ${meta.node})\n\n${table}\n\n${summary}\n${offenderText}\n${consoleBench ? `\n${consoleMarkdown(consoleBench)}\n` : ''}`;
console.log(`\n${text}`);
mkdirSync('bench-results', { recursive: true });
writeFileSync(
  'bench-results/bundle.json',
  `${JSON.stringify({ ...meta, rows, summary, largest_offenders: Object.fromEntries(offendersOf), ...(consoleBench ? { console: { budget: CONSOLE_BUDGET, ...consoleBench } } : {}) }, null, 2)}\n`,
);
writeFileSync('bench-results/bundle.md', text);
