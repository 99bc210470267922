/**
 * `npm test`: type-check, lint and format check (Biome, `npm run lint`), every vitest tier (unit,
 * data layer on dynalite, integration over HTTP, infrastructure), then the data-layer tests again
 * on AWS's DynamoDB Local; ends with one `N passed, N failed` line over all runs (a failed type
 * check or lint fails the run too), after the failed tests named again (a log cut to its tail still shows them).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

mkdirSync('.cache', { recursive: true });
const node = process.execPath;
let passed = 0;
let failed = 0;
let ok = true;
const failures: string[] = [];
const failedSteps: string[] = [];

/** Runs a step; a step that fails is named at the end too (a type error, lint, or a run that failed outside any test). */
function step(label: string, args: string[], env: Record<string, string> = {}): boolean {
  console.log(`\n=== ${label}`);
  const r = spawnSync(node, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) failedSteps.push(`${label} (exit ${r.status ?? r.signal})`);
  return r.status === 0;
}

/**
 * Runs checks that only read the tree (type checks, lint) at once, each as its own process: on 2
 * cores the root type check (about 40 s of one core) and the console's with Biome (about 12 s)
 * overlap. Each one's output is printed whole once they all ended, in the order given; each
 * failed one is named at the end as `step` names it.
 */
async function checksAtOnce(checks: { label: string; args: string[] }[]): Promise<boolean> {
  const ended = await Promise.all(
    checks.map(
      ({ label, args }) =>
        new Promise<{ label: string; status: number | string; output: string }>((resolve) => {
          const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
          let output = '';
          child.stdout.on('data', (d: Buffer) => (output += d.toString()));
          child.stderr.on('data', (d: Buffer) => (output += d.toString()));
          child.on('error', (e) => resolve({ label, status: e.message, output }));
          child.on('close', (code, signal) => resolve({ label, status: code ?? signal ?? 'no exit code', output }));
        }),
    ),
  );
  let allOk = true;
  for (const r of ended) {
    console.log(`\n=== ${r.label}`);
    if (r.output) process.stdout.write(r.output.endsWith('\n') ? r.output : `${r.output}\n`);
    if (r.status !== 0) {
      failedSteps.push(`${r.label} (exit ${r.status})`);
      allOk = false;
    }
  }
  return allOk;
}

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

/** Adds a run's counts, and names each failed test (or file that failed to load) with its message's first line. */
function vitestCounts(file: string, tier: string): void {
  if (!existsSync(file)) return;
  const j = JSON.parse(readFileSync(file, 'utf8')) as VitestReport;
  passed += j.numPassedTests;
  failed += j.numFailedTests;
  const firstLine = (m: string | undefined): string => (m ?? '').trim().split('\n')[0]?.slice(0, 300) ?? '';
  for (const f of j.testResults) {
    const path = f.name.startsWith(process.cwd()) ? f.name.slice(process.cwd().length + 1) : f.name;
    const tests = f.assertionResults.filter((a) => a.status === 'failed');
    for (const a of tests) failures.push(`${tier}: ${path} > ${a.fullName}\n    ${firstLine(a.failureMessages?.[0])}`);
    // A file that failed with no test failed: it did not load, or a hook (beforeAll) failed and its tests were skipped.
    if (f.status === 'failed' && tests.length === 0)
      failures.push(`${tier}: ${path}\n    ${firstLine(f.message) || 'failed outside its tests (a hook such as beforeAll, or an error): see the log above'}`);
  }
  rmSync(file);
}

// Lint findings and unformatted files fail the run like a type error (`npm run format` fixes the formatting).
ok =
  (await checksAtOnce([
    { label: 'typecheck (tsc)', args: ['node_modules/typescript/bin/tsc', '-p', '.'] },
    { label: 'typecheck (tsc, console web app)', args: ['node_modules/typescript/bin/tsc', '-p', 'console'] },
    { label: 'lint and format (biome check)', args: ['node_modules/@biomejs/biome/bin/biome', 'check', '.'] },
  ])) && ok;
const all = '.cache/vitest-all.json';
ok = step('vitest: unit, data (dynalite), integration', ['node_modules/vitest/vitest.mjs', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${all}`]) && ok;
vitestCounts(all, 'first run');
const ddb = '.cache/vitest-dynamodb-local.json';
ok = step('vitest: data layer on DynamoDB Local', ['--import', 'tsx', 'bin/test-dynamodb-local.ts', '--reporter=default', '--reporter=json', `--outputFile.json=${ddb}`]) && ok;
vitestCounts(ddb, 'DynamoDB Local');

// The failures again at the very end, where a log cut to its tail still shows them.
if (failures.length > 0) console.log(`\nFailed:\n${failures.map((f) => `  ${f}`).join('\n')}`);
if (failedSteps.length > 0) console.log(`\nSteps that failed:\n${failedSteps.map((f) => `  ${f}`).join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(ok && failed === 0 && passed > 0 ? 0 : 1);
