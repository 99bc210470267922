/**
 * The console web app's part of `npm run bench:bundle` (alone: `npm run bench:bundle -- --only console`):
 * the built bundle's size (raw and gzip, per file and in total), and its first load time in
 * Debian's Chromium against a local stack: from navigation to the signed-in overview rendered
 * (catalog size shown), a fresh browser context (empty cache) each run, median of `runs`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { startLocalStack } from '../local/stack.ts';
import { buildConsoleSync } from '../local/console-static.ts';

export const CONSOLE_BUDGET = { gzip_kb: 150, first_load_ms: 1500 };

export interface ConsoleBench {
  files: { file: string; kb: number; gzip_kb: number }[];
  total_kb: number;
  total_gzip_kb: number;
  first_load_ms_median: number;
  first_load_ms_runs: number[];
  /** DOMContentLoaded (HTML and the app's script loaded), median: the rest of first load is the overview's API calls. */
  dom_content_loaded_ms_median: number;
  catalog_items: number;
  over_budget: string[];
}

const kb = (bytes: number) => Number((bytes / 1024).toFixed(1));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.startsWith('.') ? [] : [join(dir, e.name)]));
}

export async function benchConsole(runs: number, log: (s: string) => void = (s) => console.error(s)): Promise<ConsoleBench> {
  log('building the console (vite build)...');
  const dist = buildConsoleSync();
  const sized = files(dist).map((f) => {
    const body = readFileSync(f);
    return { file: relative(dist, f), kb: kb(statSync(f).size), gzip_kb: kb(gzipSync(body, { level: 9 }).length) };
  });
  const total = sized.reduce((n, f) => n + f.kb, 0);
  const totalGzip = sized.reduce((n, f) => n + f.gzip_kb, 0);

  log('starting a local stack for the first-load runs...');
  const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-bench-console-'));
  const stack = await startLocalStack({ dataDir, port: 0, env: { CONSOLE_BUILD: 'off', LOCAL_IAM: 'off' } });
  const base = `http://127.0.0.1:${stack.port}`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  const times: number[] = [];
  const loaded: number[] = [];
  const items = 200;
  try {
    // A catalog for the overview to show.
    const c = stack.credentials;
    const tokenRes = await fetch(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    for (let i = 0; i < items; i += 100) {
      const batch = Array.from({ length: 100 }, (_, k) => ({ name: `Item ${i + k}`, description: 'A thing to find', metadata: { category: `c${(i + k) % 7}` } }));
      await fetch(`${base}/v1/items`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(batch) });
    }
    const signIn = await fetch(`${base}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: c.console_email, password: c.console_password }),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const [name, value] = cookie.split('=') as [string, string];
    // One run to warm the server (handler modules, index load), not counted.
    for (let r = 0; r <= runs; r++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      await context.addCookies([{ name, value, url: base, httpOnly: true, secure: true, sameSite: 'Strict' }]);
      const page = await context.newPage();
      await page.goto(`${base}/console/`);
      // A locator waits without evaluating strings in the page (the console's CSP allows no eval).
      await page.getByTestId('catalog-size').filter({ hasText: /\d/ }).waitFor({ timeout: 30_000 });
      // Milliseconds since the navigation started, as the page measures it.
      const ms = await page.evaluate<number>('performance.now()');
      // When the HTML and the app's script had loaded (before its API calls answered).
      const dcl = await page.evaluate<number>("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd");
      if (r > 0) {
        times.push(Number(ms.toFixed(0)));
        loaded.push(Number(dcl.toFixed(0)));
      }
      await context.close();
    }
  } finally {
    await browser.close();
    await stack.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  const dclMedian = [...loaded].sort((a, b) => a - b)[Math.floor(loaded.length / 2)] ?? NaN;
  const over: string[] = [];
  if (totalGzip > CONSOLE_BUDGET.gzip_kb) over.push('size');
  if (median > CONSOLE_BUDGET.first_load_ms) over.push('first load');
  return {
    files: sized,
    total_kb: Number(total.toFixed(1)),
    total_gzip_kb: Number(totalGzip.toFixed(1)),
    first_load_ms_median: median,
    first_load_ms_runs: times,
    dom_content_loaded_ms_median: dclMedian,
    catalog_items: items,
    over_budget: over,
  };
}

export function consoleMarkdown(b: ConsoleBench): string {
  return [
    '### Console web app',
    '',
    '| file | KB | gzip KB |',
    '|---|---:|---:|',
    ...b.files.map((f) => `| ${f.file} | ${f.kb} | ${f.gzip_kb} |`),
    `| **total** | **${b.total_kb}** | **${b.total_gzip_kb}** |`,
    '',
    `First load (Chromium, fresh context, navigation to the signed-in overview rendered, ${b.catalog_items}-item catalog, local stack): median ${b.first_load_ms_median} ms over ${b.first_load_ms_runs.length} runs (${b.first_load_ms_runs.join(', ')}); of which HTML and script loaded (DOMContentLoaded) at ${b.dom_content_loaded_ms_median} ms, the rest is the overview's four API calls.`,
    `Budget: ${CONSOLE_BUDGET.gzip_kb} KB gzip, ${CONSOLE_BUDGET.first_load_ms} ms; over budget: ${b.over_budget.join(', ') || 'nothing'}.`,
  ].join('\n');
}
