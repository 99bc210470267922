import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { holdStackEnv, startLocalStack, type Credentials, type LocalStack } from '../../local/stack.ts';
import { recordExchange } from '../contract/recorder.ts';

export interface Api {
  status: number;
  headers: Headers;
  body: any;
}

/** A small HTTP client for one tenant of a running local stack. */
export class TenantClient {
  private token: string | undefined;
  constructor(
    readonly base: string,
    readonly creds: Credentials,
  ) {}

  async fetchToken(scope?: string, creds: { id: string; secret: string } = { id: this.creds.client_id, secret: this.creds.client_secret }): Promise<Api> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
    return request(this.base, 'POST', '/oauth2/token', {
      rawBody: form.toString(),
      headers: {
        authorization: `Basic ${Buffer.from(`${creds.id}:${creds.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
  }

  async accessToken(): Promise<string> {
    if (!this.token) {
      const r = await this.fetchToken();
      if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${JSON.stringify(r.body)}`);
      this.token = r.body.access_token as string;
    }
    return this.token;
  }

  /** A Core API call with this tenant's read+write token (or the token given). */
  async core(method: string, path: string, body?: unknown, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<Api> {
    const token = opts.token ?? (await this.accessToken());
    return request(this.base, method, path, { body, headers: { authorization: `Bearer ${token}`, ...opts.headers } });
  }

  /** A Platform API call with this tenant's admin key (or the key given). */
  async platform(method: string, path: string, body?: unknown, key = this.creds.api_key): Promise<Api> {
    return request(this.base, method, path, { body, headers: { authorization: `Bearer ${key}` } });
  }
}

export async function request(base: string, method: string, path: string, opts: { body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<Api> {
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const res = await fetch(base + path, {
    method,
    headers: { ...(body !== undefined && opts.rawBody === undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  // Every answer is checked against the OpenAPI document (test/contract/).
  recordExchange({ method, path, status: res.status, body: parsed });
  return { status: res.status, headers: res.headers, body: parsed };
}

export interface TestStack {
  stack: LocalStack;
  base: string;
  demo: TenantClient;
  dataDir: string;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

/** Kept for the tests that called it: a local stack's start now holds process.env itself (local/stack.ts). */
export { holdStackEnv };

/**
 * Starts the real local stack (dynalite + handlers + HTTP) on a spare port in a fresh data
 * directory. Its settings leave process.env once it stopped (local/stack.ts `holdStackEnv`).
 */
export async function startTestStack(env: Record<string, string> = {}, dataDir = mkdtempSync(join(tmpdir(), 'recsearch-test-'))): Promise<TestStack> {
  const stack = await startLocalStack({ dataDir, port: 0, env, recordSentMessages: true });
  const base = `http://127.0.0.1:${stack.port}`;
  return {
    stack,
    base,
    dataDir,
    demo: new TenantClient(base, stack.credentials),
    stop: async (o = {}) => {
      await stack.close();
      if (!o.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the Core error envelope with its request_id. */
export function expectCoreError(r: Api, status: number, type: string, code?: string): void {
  const ctx = JSON.stringify(r.body);
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${ctx}`);
  if (r.body?.error?.type !== type) throw new Error(`expected type ${type}: ${ctx}`);
  if (code && r.body.error.code !== code) throw new Error(`expected code ${code}: ${ctx}`);
  if (typeof r.body.error.message !== 'string' || !r.body.error.message) throw new Error(`no message: ${ctx}`);
  if (!UUID_RE.test(r.body.error.request_id)) throw new Error(`no request_id: ${ctx}`);
}

export interface ServerProcess {
  base: string;
  creds: Credentials;
  pid: number | undefined;
  /** What the server wrote to stdout so far. */
  stdout(): string;
  /** What it wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Runs `bin/server.ts` (what `npm start` runs) as its own process on a spare port. */
export async function spawnServer(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const { spawn } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 60_000);
    let found = false;
    const onData = (d: Buffer) => {
      output += d.toString();
      // Searched until the port is known, not again at each later line (bench/stack.ts says why).
      const m = found ? null : /listening on http:\/\/localhost:(\d+)/.exec(output);
      if (m) {
        found = true;
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${output}`)));
  });
  const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
  return {
    base: `http://127.0.0.1:${port}`,
    creds,
    pid: child.pid,
    stdout: () => stdout,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Polls `fn` until `ok` holds or `ms` pass; answers the last value either way. */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 8000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls the item until its embedding is saved (`embedding_updated_at` set), or `ms` pass; answers the last GET either way. */
export function untilEmbedded(client: Pick<TenantClient, 'core'>, id: string, ms?: number): Promise<Api> {
  return until(
    () => client.core('GET', `/v1/items/${id}`),
    (r) => r.body.embedding_updated_at !== null,
    ms,
  );
}

/** A Running experiment `name` in context `contextId` splitting traffic 50/50 between variants `a` and `b` on the two endpoints: its id. */
export async function runningExperiment(client: TenantClient, name: string, contextId: number, [a, b]: readonly [string, string]): Promise<number> {
  const r = await client.platform('POST', '/api/experiments', {
    name,
    context_id: contextId,
    variants: [
      { name: 'a', endpoint_name: a, traffic_percent: 50 },
      { name: 'b', endpoint_name: b, traffic_percent: 50 },
    ],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect((await client.platform('PATCH', `/api/experiments/${r.body.id}`, { status: 'Running' })).status).toBe(200);
  return r.body.id as number;
}

/**
 * Stores `items` through Core (one POST, 201) and waits until an empty browse serves every one of
 * them (a tenant holding only these): their ids, in the order sent.
 */
export async function storedSearchable(client: TenantClient, items: readonly Record<string, unknown>[]): Promise<string[]> {
  const r = await client.core('POST', '/v1/items', items);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await until(
    () => client.core('POST', '/v1/search', { query: '', limit: 100 }),
    (x) => x.body.data?.length === items.length,
    20_000,
  );
  return (r.body.data as { id: string }[]).map((i) => i.id);
}

/**
 * Ten items per group (`<group> gear 0` to `9`, category `group`), created through Core: the item
 * ids of each group, in creation order. Recommendation tests give each group's users its items.
 */
export async function createGroupItems(client: TenantClient, groups: readonly string[]): Promise<Record<string, string[]>> {
  const byGroup: Record<string, string[]> = {};
  for (const g of groups) {
    const r = await client.core(
      'POST',
      '/v1/items',
      Array.from({ length: 10 }, (_, i) => ({ name: `${g} gear ${i}`, description: `${g} equipment for ${g} fans`, metadata: { category: g } })),
    );
    byGroup[g] = r.body.data.map((x: { id: string }) => x.id);
  }
  return byGroup;
}
