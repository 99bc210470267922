import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Credentials } from '../local/stack.ts';

/** The local stack as its own process on a spare port with a fresh DATA_DIR, as benchmarks use it. */
export interface BenchStack {
  base: string;
  creds: Credentials;
  dataDir: string;
  pid: number;
  token(): Promise<string>;
  core(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  platform(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  rssMb(): number;
  /** Stops the server (at most once) and deletes its data folder unless `keepData`. */
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

/**
 * API handler threads for a benchmark's local stack: one core is left to the database stand-in
 * (dynalite's thread), the rest run handlers, as concurrent Lambda containers. More handler
 * threads than cores only contend: on 2 cores, recommendations at 8 clients served ~175 req/s
 * with one handler thread and ~130 with two (same code, same run).
 */
export const DEFAULT_API_THREADS = String(Math.max(1, availableParallelism() - 1));

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `dataDir`: start on an existing data folder (a restart), else a fresh one. */
export async function startBenchStack(env: Record<string, string> = {}, dataDir = mkdtempSync(join(tmpdir(), 'recsearch-bench-'))): Promise<BenchStack> {
  // BENCH_SERVER_NODE_ARGS adds Node flags to the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`;
  // BENCH_SERVER_STDOUT=1 shows the server's output (e.g. of `--trace-gc`).
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, ['--max-old-space-size=8192', ...extra, '--import', 'tsx', 'bin/server.ts'], {
    // The server of this checkout, whatever the caller's directory: a side-by-side script that
    // imports another checkout's stack.ts starts that checkout's server, not the current one's.
    cwd: REPO_ROOT,
    // DEMO=0: benchmarks seed their own data, with nothing else running. LOCAL_IAM=off: the local
    // stand-in for the functions' roles costs the serving thread CPU that on AWS is DynamoDB's
    // (local/grants.ts); the tests keep it on.
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'WARN', DEMO: '0', LOCAL_IAM: 'off', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    // Only the output before the port is known is kept and searched. The server prints a line per
    // request: searching all of it again at each line cost this process (the benchmark's client,
    // on the same cores) up to 9 ms of CPU a request by the end of a run, which every latency
    // figure before 2026-11-26 includes.
    let out = '';
    let found = false;
    child.stdout?.on('data', (d: Buffer) => {
      if (process.env.BENCH_SERVER_STDOUT) process.stdout.write(d);
      if (found) return;
      out += d.toString();
      const m = /listening on http:\/\/localhost:(\d+)/.exec(out);
      if (m) {
        found = true;
        out = '';
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
  let token: string | undefined;
  const getToken = async () => {
    if (!token) {
      const r = await fetch(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      token = ((await r.json()) as { access_token: string }).access_token;
    }
    return token;
  };
  const call = async (auth: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: r.status, body: (await r.json()) as any };
  };
  return {
    base,
    creds,
    dataDir,
    pid: child.pid as number,
    token: getToken,
    core: async (m, p, b) => call(await getToken(), m, p, b),
    platform: (m, p, b) => call(creds.api_key, m, p, b),
    rssMb: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    },
    stop: async (opts = {}) => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (!opts.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A process's peak resident memory (VmHWM) in MB, or null once it is gone. */
export function peakMbOf(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

export async function waitFor<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number, everyMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
