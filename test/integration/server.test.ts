import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { nextSecond } from '../helpers/clock.ts';
import { TenantClient, expectCoreError, request, spawnServer, startTestStack, until, untilEmbedded, type TestStack } from '../helpers/stack.ts';
import type { LocalQueue } from '../../local/queue.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('local server', () => {
  describe('answering what it does not serve or refuses (one stack: none of these writes, stops it or sets a setting)', () => {
    // Handlers in a thread of their own, as the 431 and 413 tests had on stacks of their own: the
    // stacks this file starts after it would find this one's in this thread's module caches (its
    // token endpoint answered a later stack's first token request 500; one stack a process, as
    // npm start runs, has none).
    let t: TestStack;
    beforeAll(async () => {
      t = await startTestStack({ LOCAL_API_THREADS: '1' });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it('answers unknown routes with 404 and wrong methods with 405, in each API envelope', async () => {
      expectCoreError(await t.demo.core('GET', '/v1/nothing'), 404, 'not_found_error', 'route_not_found');
      // A path that starts with two slashes (a base URL that ends in one) is that path, not a host.
      const doubled = await t.demo.core('GET', '//v1/items/1');
      expectCoreError(doubled, 404, 'not_found_error', 'route_not_found');
      expect(doubled.body.error.message).toBe('No route GET //v1/items/1.');
      const wrong = await t.demo.core('PUT', '/v1/items');
      expect(wrong.status).toBe(405);
      expect(wrong.body.error.code).toBe('method_not_allowed');
      // RFC 9110: a 405 says in Allow which methods the resource takes.
      expect(wrong.headers.get('allow')).toBe('POST, GET, OPTIONS');
      // The token endpoint takes POST only, and answers in its own (RFC 6749) envelope.
      const token = await request(t.base, 'GET', '/oauth2/token');
      expect(token.status).toBe(405);
      expect(token.body).toEqual({ error: 'invalid_request', error_description: 'GET is not allowed on /oauth2/token; use POST.' });
      expect(token.headers.get('allow')).toBe('POST');
      const platformWrong = await t.demo.platform('PUT', '/api/rules');
      expect(platformWrong.status).toBe(405);
      expect(platformWrong.headers.get('allow')).toBe('POST, GET');
      const platform = await request(t.base, 'GET', '/api/nothing');
      expect(platform.status).toBe(404);
      expect(Object.keys(platform.body)).toEqual(['error']);
      const jwks = await request(t.base, 'GET', '/.well-known/jwks.json');
      expect(jwks.body.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256' });
    });

    it('answers a request its HTTP parser refuses (headers over 16 KiB: 431; malformed: 400) with a JSON body, as API Gateway answers what it refuses itself', async () => {
      // Until 2026-12-06 Node's default answer: the status line and no body.
      const big = await fetch(`${t.base}/v1/items`, { headers: { 'x-padding': 'a'.repeat(20_000) } });
      expect(big.status).toBe(431);
      expect(big.headers.get('content-type')).toBe('application/json');
      expect(await big.json()).toEqual({ message: 'Request Header Fields Too Large' });
      const { port, hostname } = new URL(t.base);
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect({ port: Number(port), host: hostname }, () => socket.write('NOT A REQUEST\r\n\r\n'));
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({ message: 'Bad Request' });
      // The server goes on answering.
      expect((await t.demo.core('GET', '/v1/items?limit=1')).status).toBe(200);
    });

    it("answers a body over API Gateway's 10 MiB with 413 and closes the connection, saying so (Connection: close), not keep-alive on a socket it then resets", async () => {
      // Until 2026-12-07 the 413 said `Connection: keep-alive` while the unread rest of the body ended
      // the socket: a keep-alive client's next request on it failed with a reset.
      const { port, hostname } = new URL(t.base);
      const size = 10 * 1024 * 1024 + 1;
      let closed = false;
      const raw = await new Promise<string>((resolve) => {
        let text = '';
        const socket = connect({ port: Number(port), host: hostname }, () => {
          socket.write(`POST /v1/items HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\nConnection: keep-alive\r\n\r\n`);
          // The body in parts, until the server answers and closes (then writes fail: ignored).
          const part = Buffer.alloc(1024 * 1024, 'a');
          const writeMore = (left: number) => {
            if (left <= 0 || socket.destroyed) return;
            const n = Math.min(left, part.length);
            socket.write(part.subarray(0, n), () => writeMore(left - n));
          };
          writeMore(size);
        });
        socket.on('data', (d) => {
          text += d.toString();
          // The whole answer: resolved then, whether or not the socket closes.
          if (text.includes('}')) resolve(text);
        });
        socket.on('close', () => {
          closed = true;
          resolve(text);
        });
        socket.on('error', () => undefined);
      });
      const [head = ''] = raw.split('\r\n\r\n');
      expect(head.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
      expect(JSON.parse(/\{.*\}/.exec(raw)?.[0] ?? '')).toEqual({ message: 'Request Entity Too Large' });
      expect(head.toLowerCase()).toContain('connection: close');
      expect(
        await until(
          async () => closed,
          (c) => c,
          5000,
        ),
      ).toBe(true);
      // The server goes on answering.
      expect((await t.demo.core('GET', '/v1/items?limit=1')).status).toBe(200);
    });
  });

  it('answers the requests in flight when it stops, before it closes the database', async () => {
    // Handlers in a thread of their own: module state (the table client) of an earlier stack in
    // this process would point at that stack's database.
    const t = await startTestStack({ LOCAL_API_THREADS: '1' });
    dirs.push(t.dataDir);
    const item = await t.demo.core('POST', '/v1/items', { name: 'drained' });
    await t.demo.accessToken();
    const batch = (n: number) => Array.from({ length: 500 }, (_, k) => ({ type: 'view', user_id: `u${n}-${k}`, item_id: item.body.id }));
    let answered = 0;
    const sent = Array.from({ length: 6 }, (_, n) =>
      t.demo.core('POST', '/v1/events', batch(n)).then((a) => {
        answered += 1;
        return a;
      }),
    );
    // Stop while the batches are being written: once the first is answered, the server holds the
    // others (sent with it, on connections it accepted then). Was a fixed 30 ms, which on a loaded
    // machine could stop it before it had accepted them: a connection still in the listener's
    // backlog is reset when the listener closes (ECONNRESET), a request it never received.
    await Promise.race(sent);
    expect(answered, 'batches still being written when the stop begins').toBeLessThan(6);
    const stopped = t.stop({ keepData: true });
    const answers = await Promise.all(sent);
    await stopped;
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
    // Every acknowledged event is there after a restart.
    const again = await spawnServer(t.dataDir);
    try {
      const client = new TenantClient(again.base, again.creds);
      for (const a of answers) {
        const ids = (a.body.data as { id: string }[]).map((e) => e.id);
        for (const id of [ids[0], ids[ids.length - 1]]) expect((await client.core('GET', `/v1/events/${id}`)).status).toBe(200);
      }
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('runs a training run queued before a restart to its end: recovery comes before the queue delivers it again', async () => {
    // A crash review's find: the journal delivered the run as the queue was made, the worker set it
    // going, and the restart's recovery (later in startup) then ended it as interrupted while it ran.
    // Handlers in a thread of their own (see above). Until 2026-12-07 this and the stacks below
    // had it from process.env, where the stacks before had left it.
    const t = await startTestStack({ LOCAL_RETRY_DELAY_MS: '50', LOCAL_API_THREADS: '1' });
    dirs.push(t.dataDir);
    const P = (m: string, p: string, b?: unknown) => t.demo.platform(m, p, b);
    const items = await t.demo.core(
      'POST',
      '/v1/items',
      Array.from({ length: 100 }, (_, i) => ({ name: `thing ${i}`, metadata: { category: `c${i % 5}` } })),
    );
    const ids = (items.body.data as { id: string }[]).map((x) => x.id);
    for (let b = 0; b < 8; b++) {
      const events = Array.from({ length: 500 }, (_, k) => ({ type: 'view', user_id: `u${(b * 500 + k) % 400}`, item_id: ids[(b * 37 + k * 13) % ids.length] }));
      expect((await t.demo.core('POST', '/v1/events', events)).status).toBe(201);
    }
    const view = (await P('POST', '/api/event-types', { name: 'view', weight: 1 })).body.id;
    const tpl = await P('POST', '/api/events/templates', { name: 'default', event_types: [{ id: view, weight: 1 }], thresholds: { per_signal_min: 1, total_min: 10 } });
    await P('PATCH', `/api/events/templates/${tpl.body.id}`, { status: 'Published' });
    // As a kill right after the 202 would leave it: queued and journaled, never delivered.
    (t.stack.workQueue.queues.get('training') as LocalQueue).stop();
    const run = await P('POST', '/api/training-jobs', { template_id: tpl.body.id, options: { algorithm: 'bpr', epochs: 50, batch_size: 64 } });
    expect(run.status).toBe(202);
    await t.stop({ keepData: true });
    // The retry delay of the stack it restarts (a server spawned had it from process.env, where that stack left it, until 2026-12-07).
    const again = await spawnServer(t.dataDir, { LOCAL_RETRY_DELAY_MS: '50' });
    try {
      const client = new TenantClient(again.base, again.creds);
      const ended = await until(
        () => client.platform('GET', `/api/training-jobs/${run.body.job_name}`),
        (r) => ['Completed', 'Failed', 'Stopped'].includes(r.body.status),
        60_000,
      );
      expect(ended.body.status, JSON.stringify(ended.body)).toBe('Completed');
      // Its credentials, rewritten at each start, were replaced whole, and are still its owner's only.
      expect(statSync(join(t.dataDir, 'credentials.json')).mode & 0o777).toBe(0o600);
      expect(existsSync(join(t.dataDir, 'credentials.json.tmp'))).toBe(false);
      const log = await client.platform('GET', `/api/training-jobs/logs/${run.body.job_name}`);
      expect(log.body.lines.map((l: { message: string }) => l.message).join('\n')).not.toMatch(/interrupted/);
    } finally {
      await again.stop();
    }
  }, 120_000);

  it('ends its maintenance pass (a thread of its own) when it stops: a run in progress ends, none starts after', async () => {
    const t = await startTestStack({ LOCAL_API_THREADS: '1' });
    let stopped = false;
    try {
      // The pass's thread is up; a second run is under way when the stack stops.
      expect(await t.stack.maintain()).toMatchObject({ folded: 0 });
      const run = t.stack.maintain().then(
        () => 'done',
        () => 'ended',
      );
      await t.stop();
      stopped = true;
      const hung = new Promise((r) => setTimeout(() => r('hung'), 10_000).unref());
      expect(await Promise.race([run, hung])).not.toBe('hung');
      await expect(t.stack.maintain()).rejects.toThrow(/closed/);
    } finally {
      if (!stopped) await t.stop();
    }
  }, 60_000);

  it('keeps data, credentials and the signing key across a restart of the server process', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-restart-'));
    dirs.push(dataDir);
    const first = await spawnServer(dataDir);
    const a = new TenantClient(first.base, first.creds);
    const token = await a.accessToken();
    const item = await a.core('POST', '/v1/items', { name: 'durable' });
    await a.core('POST', '/v1/events', [{ type: 'click', user_id: 'u', item_id: item.body.id }]);
    await first.stop();

    const second = await spawnServer(dataDir);
    try {
      expect(second.creds.client_id).toBe(first.creds.client_id);
      expect(second.creds.api_key).toBe(first.creds.api_key);
      const b = new TenantClient(second.base, second.creds);
      expect((await b.core('GET', `/v1/items/${item.body.id}`)).body.name).toBe('durable');
      expect((await b.core('GET', '/v1/events')).body.data).toHaveLength(1);
      // Counters survive too: the next id follows on.
      expect(Number((await b.core('POST', '/v1/items', { name: 'next' })).body.id)).toBe(Number(item.body.id) + 1);
      // The signing key survives: a token from before the restart still verifies when the port is the same issuer.
      expect(token.split('.')).toHaveLength(3);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('delivers after a restart the embedding and the index build it acknowledged before it stopped (its queues are kept on disk, as SQS keeps them)', async () => {
    // Handlers in a thread of their own (see above); no maintenance pass, which would re-queue them after its grace.
    const first = await startTestStack({ LOCAL_API_THREADS: '1', MAINTENANCE_SECONDS: '3600' });
    dirs.push(first.dataDir);
    // Nothing is delivered before the stop: both messages wait in the queue.
    (first.stack.workQueue.queues.get('embedding') as LocalQueue).stop();
    const item = await first.demo.core('POST', '/v1/items', { name: 'Acknowledged before a restart' });
    expect(item.status).toBe(201);
    await nextSecond(); // a build in the item's second would count as covering it
    const requested = await first.demo.platform('POST', '/api/search-index/rebuild');
    expect(requested.status).toBe(202);
    await first.stop({ keepData: true });
    const again = await spawnServer(first.dataDir, { MAINTENANCE_SECONDS: '3600' });
    try {
      const client = new TenantClient(again.base, again.creds);
      const embedded = await untilEmbedded(client, item.body.id);
      expect(embedded.body.embedding_updated_at).not.toBeNull();
      const built = await until(
        () => client.platform('GET', '/api/search-index'),
        (r) => r.body.index_built_at >= requested.body.requested_at,
      );
      expect(built.body.index_built_at).toBeGreaterThanOrEqual(requested.body.requested_at);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it("has the items of another vector width embedded again after EMBEDDING_DIMENSIONS changes: the embedding worker's thread reaches the queues", async () => {
    // Found by a review (2026-12-05): the SQS workers' threads had no work queue; the build's
    // messages failed ("No URL for queue embedding"), and the items waited for the sweep.
    const first = await startTestStack({ MAINTENANCE_SECONDS: '3600', LOCAL_API_THREADS: '1' });
    dirs.push(first.dataDir);
    const item = await first.demo.core('POST', '/v1/items', { name: 'red shoe' });
    const before = await untilEmbedded(first.demo, item.body.id);
    await first.stop({ keepData: true });
    await nextSecond(); // a new embedding in another second
    // No maintenance pass (its sweep would send them after its grace): the build's worker must.
    const again = await spawnServer(first.dataDir, { MAINTENANCE_SECONDS: '3600', EMBED_GRACE_SECONDS: '3600', EMBEDDING_DIMENSIONS: '256' });
    try {
      const client = new TenantClient(again.base, again.creds);
      expect((await client.platform('POST', '/api/search-index/rebuild')).status).toBe(202);
      const after = await until(
        () => client.core('GET', `/v1/items/${item.body.id}`),
        (r) => r.body.embedding_updated_at !== before.body.embedding_updated_at,
        15_000,
      );
      expect(after.body.embedding_updated_at).toBeGreaterThan(before.body.embedding_updated_at);
      expect(again.output()).not.toMatch(/No URL for queue/);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('runs the handlers in worker threads with LOCAL_API_THREADS, jobs still reaching the queues', async () => {
    const t = await startTestStack({ LOCAL_API_THREADS: '2', MAINTENANCE_SECONDS: '1' });
    try {
      expect(t.stack.apiThreads).toBe(2);
      const created = await t.demo.core('POST', '/v1/items', [{ name: 'threaded lantern' }, { name: 'threaded kettle' }]);
      expect(created.status).toBe(201);
      // The embedding message went from a handler thread to the main thread's queue and its worker.
      await until(
        async () => (await t.demo.platform('GET', '/api/search-index')).body,
        (b) => b.pending === 0 && b.items === 2,
      );
      const found = await t.demo.core('POST', '/v1/search', { query: 'lantern' });
      expect(found.body.data.map((d: { name: string }) => d.name)).toEqual(['threaded lantern']);
      expectCoreError(await t.demo.core('GET', '/v1/items/999999'), 404, 'not_found_error', 'item_not_found');
    } finally {
      await t.stop();
    }
  }, 120_000);
});
