import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServer as startedServer, TenantClient, UUID_RE } from '../helpers/stack.ts';

/*
 * `npm start` (bin/server.ts) as its own process: its one-line start-up errors, the data
 * directory lock, and the access log.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'recsearch-start-'));
  dirs.push(d);
  return d;
};

const spawnServer = (dataDir: string, env: Record<string, string> = {}) =>
  spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', DEMO: '0', CONSOLE_BUILD: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** A server that started (without the demo seed or the console build these tests do not need). */
const startServer = (dataDir: string, env: Record<string, string> = {}) => startedServer(dataDir, { DEMO: '0', CONSOLE_BUILD: 'off', ...env });

/** A server that does not start: its exit code and what it wrote. */
async function failedStart(dataDir: string, env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawnServer(dataDir, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stderr, stdout };
}

/** One line, no stack trace. */
function expectOneLine(text: string): void {
  const lines = text.trim().split('\n');
  expect(lines, text).toHaveLength(1);
  expect(text).not.toMatch(/\n\s+at /);
}

describe('npm start: start-up errors', () => {
  it('a port in use: says so and suggests PORT=0, in one line, exit 1', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const r = await failedStart(tempDir(), { PORT: String(port) });
      expect(r.code).toBe(1);
      expectOneLine(r.stderr);
      expect(r.stderr).toMatch(new RegExp(`^recsearch: Port ${port} on 127\\.0\\.0\\.1 is already in use`));
      expect(r.stderr).toContain('PORT=0');
    } finally {
      holder.close();
    }
  }, 60_000);

  it('a second server on one data directory: says which process has it, exit 1; a stale lock is taken over', async () => {
    const dataDir = tempDir();
    // A lock left by a process that is gone does not stop the first start.
    const gone = spawnSync(process.execPath, ['-e', '']).pid as number;
    writeFileSync(join(dataDir, 'server.lock'), JSON.stringify({ pid: gone }));
    const first = await startServer(dataDir);
    try {
      expect(JSON.parse(readFileSync(join(dataDir, 'server.lock'), 'utf8')).pid).toBe(first.pid);
      const r = await failedStart(dataDir);
      expect(r.code).toBe(1);
      expectOneLine(r.stderr);
      expect(r.stderr).toMatch(new RegExp(`^recsearch: .* is in use by another server \\(pid ${first.pid}\\)`));
      // The first one is unharmed.
      expect((await fetch(`${first.base}/.well-known/jwks.json`)).status).toBe(200);
    } finally {
      await first.stop();
    }
    // Stopped, it leaves no lock: the next start takes the directory.
    const again = await startServer(dataDir);
    await again.stop();
  }, 90_000);

  it('a damaged data directory (database files, credentials.json) or one that cannot be made: says what, in one line, exit 1, and changes nothing', async () => {
    const dataDir = tempDir();
    await (await startServer(dataDir)).stop();
    // LevelDB's CURRENT cut short: the database thread stops while the stack starts. It crashed
    // the server with a ReferenceError (its stop() was not declared yet) after "Database is not open".
    const current = join(dataDir, 'dynamodb', 'CURRENT');
    const kept = readFileSync(current);
    writeFileSync(current, 'MANIFEST');
    let r = await failedStart(dataDir);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr);
    expect(r.stderr).toMatch(/^recsearch: the local database .* could not open .*Corruption/);
    writeFileSync(current, kept);
    // credentials.json cut short, or without its secrets: it was a stack trace, or a start as
    // tenant "undefined" that wrote the file again without them.
    const credentials = join(dataDir, 'credentials.json');
    const whole = readFileSync(credentials, 'utf8');
    for (const damaged of [whole.slice(0, 40), JSON.stringify({ tenant: 'demo' })]) {
      writeFileSync(credentials, damaged);
      r = await failedStart(dataDir);
      expect(r.code).toBe(1);
      expectOneLine(r.stderr);
      expect(r.stderr).toMatch(/^recsearch: .*credentials\.json is damaged/);
      expect(readFileSync(credentials, 'utf8')).toBe(damaged);
    }
    writeFileSync(credentials, whole);
    await (await startServer(dataDir)).stop();
    // A data directory under a file (as under a read-only or full disk): one line, not a stack trace.
    r = await failedStart(join(credentials, 'data'));
    expect(r.code).toBe(1);
    expectOneLine(r.stderr);
    expect(r.stderr).toMatch(/^recsearch: The data directory .* cannot be written \(ENOTDIR/);
  }, 120_000);

  it('an invalid setting: names the variable, exit 1', async () => {
    const r = await failedStart(tempDir(), { LOG_FORMAT: 'xml' });
    expect(r.code).toBe(1);
    expectOneLine(r.stderr);
    expect(r.stderr).toContain('LOG_FORMAT');
  }, 60_000);

  it("an invalid setting of the service's own (read by the handlers on first use): refused at the start too, not a 500 on every request", async () => {
    for (const [name, value] of [
      ['TOKEN_BURST', 'many'],
      ['TENANT_BURST', 'x'],
      ['MAINTENANCE_SECONDS', '3000000'],
    ]) {
      const r = await failedStart(tempDir(), { [name as string]: value as string });
      expect(r.code, name).toBe(1);
      expectOneLine(r.stderr);
      expect(r.stderr).toContain(`Environment variable ${name}`);
    }
  }, 120_000);
});

describe('npm start: access log', () => {
  it('one readable line per request: method, path, status, ms, tenant, request_id', async () => {
    const s = await startServer(tempDir());
    try {
      // The start-up lines name the console and how to sign in to it (they named the three APIs only).
      const consoleLine = await waitFor(() =>
        s
          .stdout()
          .split('\n')
          .find((l) => l.includes('Demo tenant') || l.includes('/console/')),
      );
      expect(consoleLine).toMatch(/^ {2}Console {7}http:\/\/localhost:\d+\/console\/ \(sign in with console_email and console_password of the file below\)$/);
      const client = new TenantClient(s.base, s.creds);
      const r = await client.core('GET', '/v1/items?limit=1');
      expect(r.status).toBe(200);
      const id = r.headers.get('x-request-id') as string;
      const line = await waitFor(() =>
        s
          .stdout()
          .split('\n')
          .find((l) => l.includes(id)),
      );
      expect(line).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z GET /v1/items 200 \\d+\\.\\d ms tenant=demo request_id=${id}$`));
      // Before authentication: no tenant.
      await client.core('GET', '/v1/items', undefined, { token: 'not-a-token' });
      await waitFor(() =>
        s
          .stdout()
          .split('\n')
          .find((l) => / GET \/v1\/items 401 .* tenant=- request_id=/.test(l)),
      );
    } finally {
      await s.stop();
    }
  }, 60_000);

  it('JSON lines with LOG_FORMAT=json', async () => {
    const s = await startServer(tempDir(), { LOG_FORMAT: 'json' });
    try {
      const client = new TenantClient(s.base, s.creds);
      const r = await client.platform('GET', '/api/event-types');
      expect(r.status).toBe(200);
      const line = await waitFor(() =>
        s
          .stdout()
          .split('\n')
          .find((l) => l.includes('"path":"/api/event-types"')),
      );
      const entry = JSON.parse(line);
      expect(entry).toMatchObject({ level: 'info', msg: 'request', method: 'GET', path: '/api/event-types', status: 200, tenant: 'demo' });
      expect(entry.request_id).toMatch(UUID_RE);
      expect(typeof entry.ms).toBe('number');
      expect(Date.parse(entry.time)).toBeGreaterThan(0);
      // The start-up lines are JSON too.
      const banner = s
        .stdout()
        .split('\n')
        .find((l) => l.includes('listening on')) as string;
      expect(JSON.parse(banner)).toMatchObject({ level: 'info', msg: expect.stringMatching(/^Service listening on http:\/\/localhost:\d+$/) });
    } finally {
      await s.stop();
    }
  }, 60_000);
});

async function waitFor<T>(fn: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
