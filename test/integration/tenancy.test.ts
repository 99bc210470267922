import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTimeOf } from '../../local/lock.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenantClient, expectCoreError, startTestStack, type TestStack } from '../helpers/stack.ts';

const run = promisify(execFile);
let t: TestStack;
let other: TenantClient;

/** The admin CLI as a user runs it, while the server is up. */
async function admin(...args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args], { env: { ...process.env, DATA_DIR: t.dataDir }, cwd: process.cwd() });
}

beforeAll(async () => {
  t = await startTestStack();
  const { stdout } = await admin('tenant', 'create', 'acme', '--json');
  const creds = JSON.parse(stdout);
  other = new TenantClient(t.base, creds);
}, 120_000);
afterAll(() => t.stop());

describe('admin CLI against the running stack', () => {
  it('tenant create --json prints one credentials.json-shaped object that works', async () => {
    expect(Object.keys(other.creds).sort()).toEqual(['api_key', 'auth_url', 'base_url', 'client_id', 'client_secret', 'console_url', 'tenant']);
    expect(other.creds.tenant).toBe('acme');
    expect(other.creds.base_url).toBe(`http://localhost:${t.stack.port}`);
    expect((await other.core('GET', '/v1/items')).status).toBe(200);
    expect((await other.platform('GET', '/api/clients')).body.data).toHaveLength(1);
  });

  it('refuses a duplicate or malformed tenant with a non-zero exit', async () => {
    await expect(admin('tenant', 'create', 'acme', '--json')).rejects.toMatchObject({ code: 1 });
    await expect(admin('tenant', 'create', 'Bad Name', '--json')).rejects.toMatchObject({ code: 1 });
    await expect(admin('nonsense')).rejects.toMatchObject({ code: 2 });
  });

  it('creates, lists and revokes clients and API keys', async () => {
    const c = JSON.parse((await admin('client', 'create', '--tenant', 'acme', '--name', 'cli', '--scopes', 'service-api/read', '--json')).stdout);
    const reader = new TenantClient(t.base, { ...other.creds, client_id: c.client_id, client_secret: c.client_secret });
    expect((await reader.core('GET', '/v1/items')).status).toBe(200);
    expect((await reader.core('POST', '/v1/items', { name: 'x' })).status).toBe(403);
    expect((await admin('client', 'list', '--tenant', 'acme')).stdout).toContain(c.client_id);
    await admin('client', 'delete', '--tenant', 'acme', c.client_id);
    expect((await reader.fetchToken()).status).toBe(401);

    const k = JSON.parse((await admin('api-key', 'create', '--tenant', 'acme', '--name', 'ops', '--scopes', 'items', '--json')).stdout);
    expect(k.key).toMatch(/^svc_[a-z0-9]{8}_/);
    expect((await admin('api-key', 'list', '--tenant', 'acme')).stdout).toContain(k.id);
    await admin('api-key', 'revoke', '--tenant', 'acme', k.id);
    expect((await other.platform('GET', '/api/clients', undefined, k.key)).status).toBe(401);
  });

  it('refuses a --tenant nobody created (a typo would make clients of a tenant that does not exist), or one no tenant could be named', async () => {
    for (const args of [
      ['client', 'create', '--tenant', 'ghost', '--name', 'x'],
      ['client', 'list', '--tenant', 'ghost'],
      ['api-key', 'create', '--tenant', 'ghost', '--name', 'x', '--scopes', 'items'],
      ['api-key', 'list', '--tenant', 'ghost'],
    ]) {
      const failed = await admin(...args).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      expect(failed?.code, args.join(' ')).toBe(1);
      expect(failed?.stderr).toContain('No tenant ghost');
    }
    await expect(admin('client', 'create', '--tenant', 'Bad Name!', '--name', 'x')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('Tenant ids are') });
    // The tenant can still be created afterwards: nothing was made in its name.
    expect(JSON.parse((await admin('tenant', 'create', 'ghost', '--json')).stdout).tenant).toBe('ghost');
  });

  it('lists every client and key, past a page of 100', async () => {
    await Promise.all(Array.from({ length: 101 }, (_, i) => other.platform('POST', '/api/clients', { name: `many-${i}`, scopes: ['service-api/read'] })));
    const listed = JSON.parse((await admin('client', 'list', '--tenant', 'acme', '--json')).stdout);
    expect(listed.data.length).toBeGreaterThanOrEqual(102);
    expect(listed.has_more).toBe(false);
    expect((await admin('client', 'list', '--tenant', 'acme')).stdout.trim().split('\n').length).toBe(listed.data.length);
  });
});

describe('admin CLI errors it explains', () => {
  /** The CLI on data directory `dir` with `env`: its exit code and what it printed. */
  const adminIn = (dir: string, env: Record<string, string>, ...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args], { env: { ...process.env, DATA_DIR: dir, ...env }, cwd: process.cwd() }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  const trace = /\n\s+at /;

  it('says in one line, without a stack trace, that a setting is bad, that the data directory is held, and reads a damaged stack.json as no server', async () => {
    // Found by a review (2026-12-05): each of these printed its stack trace.
    const dir = mkdtempSync(join(tmpdir(), 'admin-errors-'));
    const holder = spawn('sleep', ['30']);
    try {
      const bad = await adminIn(dir, { PORT: 'abc' }, 'client', 'list', '--tenant', 'demo');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^error: Environment variable PORT/);
      expect(bad.stderr).not.toMatch(trace);
      // A stack.json cut off as it was written: no server named; the directory's own lock decides.
      writeFileSync(join(dir, 'stack.json'), '{"pid": 12');
      await new Promise((r) => setTimeout(r, 100));
      writeFileSync(join(dir, 'server.lock'), `${JSON.stringify({ pid: holder.pid, start: startTimeOf(holder.pid as number), role: 'server' })}\n`);
      const held = await adminIn(dir, {}, 'client', 'list', '--tenant', 'demo');
      expect(held.code).toBe(1);
      expect(held.stderr).toMatch(/^error: .* is in use by another server/);
      expect(held.stderr).not.toMatch(trace);
    } finally {
      holder.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('tenant isolation', () => {
  it("another tenant's items are not found, not listed, not changeable", async () => {
    const mine = await t.demo.core('POST', '/v1/items', { name: 'private', metadata: { category: 'secret' } });
    const id = mine.body.id;
    expectCoreError(await other.core('GET', `/v1/items/${id}`), 404, 'not_found_error', 'item_not_found');
    expectCoreError(await other.core('PATCH', `/v1/items/${id}`, { name: 'hijack' }), 404, 'not_found_error', 'item_not_found');
    expectCoreError(await other.core('POST', `/v1/items/${id}`, { active: false }), 404, 'not_found_error', 'item_not_found');
    expectCoreError(await other.core('DELETE', `/v1/items/${id}`), 404, 'not_found_error', 'item_not_found');
    expect((await other.core('GET', '/v1/items?category=secret')).body.data).toEqual([]);
    const theirs = await other.core('GET', '/v1/items?limit=100');
    expect(theirs.body.data.map((i: { name: string }) => i.name)).not.toContain('private');
    expect((await t.demo.core('GET', `/v1/items/${id}`)).body.name).toBe('private');
  });

  it("another tenant's events are not found and not listed; ids are per tenant", async () => {
    const mine = await t.demo.core('POST', '/v1/events', [{ type: 'click', user_id: 'shared-user', item_id: '1' }]);
    const theirs = await other.core('POST', '/v1/events', [{ type: 'click', user_id: 'shared-user', item_id: '1' }]);
    expect(theirs.body.data[0].id).toBe('1');
    if (mine.body.data[0].id !== '1') expectCoreError(await other.core('GET', `/v1/events/${mine.body.data[0].id}`), 404, 'not_found_error');
    const list = await other.core('GET', '/v1/events?user_id=shared-user');
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual(['1']);
    const all = await other.core('GET', '/v1/events?limit=100');
    expect(all.body.data).toHaveLength(1);
  });

  it("a tenant's API key cannot delete another tenant's client or key", async () => {
    expect((await other.platform('DELETE', `/api/clients/${t.stack.credentials.client_id}`)).status).toBe(404);
    const demoKeyId = t.stack.credentials.api_key.slice(4, 12);
    expect((await other.platform('DELETE', `/api/api-keys/${demoKeyId}`)).status).toBe(404);
    expect((await t.demo.core('GET', '/v1/items')).status).toBe(200);
  });
});

describe('a new tenant', () => {
  it('with items and no events yet gets its newest items recommended, never an empty list', async () => {
    const fresh = new TenantClient(t.base, JSON.parse((await admin('tenant', 'create', 'fresh', '--json')).stdout));
    const made = await fresh.core('POST', '/v1/items', [{ name: 'First lamp' }, { name: 'Second lamp' }, { name: 'Third lamp' }]);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const [first, second, third] = made.body.data.map((x: { id: string }) => x.id) as [string, string, string];
    expect((await fresh.core('PATCH', `/v1/items/${third}`, { active: false })).status).toBe(200);
    const r = await fresh.core('GET', '/v1/recommendations?user_id=nobody-yet&limit=10');
    expect(r.status).toBe(200);
    expect(r.body.strategy).toBe('popular');
    // Newest first; an inactive item never.
    expect(r.body.data.map((x: { item_id: string }) => x.item_id)).toEqual([second, first]);
    // Each says why: nothing is popular yet.
    expect(r.body.data.map((x: { reason: string }) => x.reason)).toEqual(['new in the catalog', 'new in the catalog']);
  }, 60_000);
});
