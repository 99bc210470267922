/**
 * The typed client's transport against fake answers (a fetch, or a bare HTTP server for a body
 * that stalls): what a review of the client found (2026-12-05), each failing before its fix.
 */
import { createServer, type Server } from 'node:http';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, CoreClient, Paginator, PlatformClient, retryAfterMs, type FetchLike } from '../../packages/client/src/index.ts';
import { KEY_IN_USE_MESSAGE } from '../../shared/http/idempotency.ts';

const TOKEN = () => Response.json({ access_token: 't', token_type: 'Bearer', expires_in: 3600 });
const isToken = (r: Request) => new URL(r.url).pathname === '/oauth2/token';
const item = { object: 'item', id: '7', name: 'b', active: true, metadata: {}, created: 1, updated_at: 1 };

describe('an answer whose body stalls', () => {
  let server: Server;
  let base = '';
  let gets = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/oauth2/token') {
        res.end(JSON.stringify({ access_token: 't', token_type: 'Bearer', expires_in: 3600 }));
        return;
      }
      // The first GET: headers and half a body, then nothing.
      if (++gets === 1) {
        res.writeHead(200);
        res.write('{"object":"item",');
        return;
      }
      res.end(JSON.stringify(item));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('times its attempt out (the answer read within it) and retries a safe request', async () => {
    const c = new CoreClient({ baseUrl: base, clientId: 'c', clientSecret: 's', timeoutMs: 300, retry: { baseDelayMs: 1 } });
    // Until 2026-12-05 the body was read after the attempt: its abort reached the caller, unretried.
    expect(await c.items.get('7')).toMatchObject({ id: '7' });
    expect(gets).toBe(2);
  });
});

describe('409 idempotency_key_in_use (the key first attempt still running)', () => {
  it('a keyed Core create asks again until that attempt ends (3 s here), past its retries', async () => {
    let n = 0;
    let doneAt = 0;
    const fetch: FetchLike = async (r) => {
      if (isToken(r)) return TOKEN();
      if (++n === 1) {
        doneAt = Date.now() + 3000;
        return new Response('gateway timeout', { status: 504 });
      }
      if (Date.now() < doneAt) return Response.json({ error: { type: 'conflict_error', code: 'idempotency_key_in_use', message: 'in use', request_id: 'r' } }, { status: 409 });
      return Response.json(item, { status: 201 });
    };
    const c = new CoreClient({ baseUrl: 'http://core.test', clientId: 'c', clientSecret: 's', fetch, retry: { baseDelayMs: 1 } });
    // Until 2026-12-05 three backoffs (at most 1.75 s), then the 409 for a create that was stored.
    expect(await c.items.create({ name: 'b' })).toMatchObject({ id: '7' });
    expect(n).toBeGreaterThan(3);
  }, 20_000);

  it('waits as long as inUseWaitMs says, then returns the 409 (a key held by an attempt a crash cut off: up to 120 s)', async () => {
    let posts = 0;
    const fetch: FetchLike = async (r) => {
      if (isToken(r)) return TOKEN();
      posts += 1;
      return Response.json({ error: { type: 'conflict_error', code: 'idempotency_key_in_use', message: 'in use', request_id: 'r' } }, { status: 409 });
    };
    const c = new CoreClient({ baseUrl: 'http://core.test', clientId: 'c', clientSecret: 's', fetch, retry: { baseDelayMs: 1, inUseWaitMs: 2500 } });
    const started = Date.now();
    await expect(c.items.create({ name: 'b' }, { idempotencyKey: 'k-1' })).rejects.toMatchObject({ status: 409, code: 'idempotency_key_in_use' });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(2500);
    expect(waited).toBeLessThan(10_000);
    expect(posts).toBeGreaterThan(1);
    // A value that is no finite number is refused at once (NaN waited for ever).
    for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
      expect(() => new CoreClient({ baseUrl: 'http://core.test', clientId: 'c', clientSecret: 's', fetch, retry: { inUseWaitMs: bad } }), String(bad)).toThrow(
        /retry.inUseWaitMs must be a finite number/,
      );
    }
    posts = 0;
    const none = new CoreClient({ baseUrl: 'http://core.test', clientId: 'c', clientSecret: 's', fetch, retry: { baseDelayMs: 1, inUseWaitMs: 0 } });
    await expect(none.items.create({ name: 'b' }, { idempotencyKey: 'k-2' })).rejects.toMatchObject({ status: 409 });
    expect(posts).toBe(1);
  }, 20_000);

  it("a Platform create's, as that API answers it (its message), under the same key", async () => {
    const sent: { status: number; key: string | null }[] = [];
    const fetch: FetchLike = async (r) => {
      const status = [503, 409][sent.length] ?? 201;
      sent.push({ status, key: r.headers.get('idempotency-key') });
      if (status === 503) return Response.json({ error: 'The service failed to answer.' }, { status });
      if (status === 409) return Response.json({ error: KEY_IN_USE_MESSAGE }, { status });
      return Response.json({ id: 3, name: 'home', description: '', created: 1 }, { status });
    };
    const p = new PlatformClient({ baseUrl: 'http://platform.test', apiKey: 'svc_abcdefgh_x', fetch, retry: { baseDelayMs: 1 } });
    // Until 2026-12-05 the Platform's 409 was not recognised: thrown, for a create that was stored.
    expect(await p.contexts.create({ name: 'home' })).toMatchObject({ id: 3 });
    expect(sent.map((s) => s.status)).toEqual([503, 409, 201]);
    expect(new Set(sent.map((s) => s.key)).size).toBe(1);
  });
});

describe("409 changed_meanwhile (the record kept changing under the server's own tries)", () => {
  it('is retried, whatever the method (nothing was written; the answer says retry), and no other 409 is', async () => {
    const sent: string[] = [];
    const rule = { id: 12, name: 'boost', context_id: 1, conditions: [], boost: 2, created: 1, updated_at: 1 };
    let conflicts = 0;
    const fetch: FetchLike = async (r) => {
      sent.push(`${r.method} ${new URL(r.url).pathname}`);
      if (conflicts-- > 0) return Response.json({ error: 'Rule 12 kept changing meanwhile; retry.' }, { status: 409 });
      if (r.url.endsWith('/promote')) return Response.json({ error: 'Endpoint main kept changing meanwhile; retry.' }, { status: 409 });
      if (r.method === 'DELETE') return Response.json({ error: 'A rule named boost already exists.' }, { status: 409 });
      return Response.json(rule);
    };
    const p = new PlatformClient({ baseUrl: 'http://platform.test', apiKey: 'svc_abcdefgh_x', fetch, retry: { baseDelayMs: 1 } });
    // A PATCH (never retried after a 5xx) whose first two tries met the conflict: until 2026-12-08 thrown at once.
    conflicts = 2;
    expect(await p.rules.update(12, { boost: 2 })).toMatchObject({ id: 12 });
    expect(sent).toEqual(Array(3).fill('PATCH /api/rules/12'));
    // Retried as a 429 is: up to maxRetries, then the 409 itself.
    sent.length = 0;
    await expect(p.models.promote(3, { endpoint_name: 'main' })).rejects.toMatchObject({ status: 409, type: 'conflict_error', message: 'Endpoint main kept changing meanwhile; retry.' });
    expect(sent).toHaveLength(4);
    // Another conflict is the caller's to settle: sent once.
    sent.length = 0;
    await expect(p.rules.delete(12)).rejects.toMatchObject({ status: 409 });
    expect(sent).toEqual(['DELETE /api/rules/12']);
    // The Core envelope's code too; its idempotency_key_reused is not retried.
    const core = (code: string) => {
      let n = 0;
      const f: FetchLike = async (r) => {
        if (isToken(r)) return TOKEN();
        return ++n === 1 ? Response.json({ error: { type: 'conflict_error', code, message: 'x', request_id: 'r' } }, { status: 409 }) : Response.json(item, { status: 201 });
      };
      return { c: new CoreClient({ baseUrl: 'http://core.test', clientId: 'c', clientSecret: 's', fetch: f, retry: { baseDelayMs: 1 } }), tries: () => n };
    };
    const meanwhile = core('changed_meanwhile');
    expect(await meanwhile.c.items.update('7', { name: 'b' })).toMatchObject({ id: '7' });
    expect(meanwhile.tries()).toBe(2);
    const reused = core('idempotency_key_reused');
    await expect(reused.c.items.create({ name: 'b' })).rejects.toMatchObject({ status: 409, code: 'idempotency_key_reused' });
    expect(reused.tries()).toBe(1);
  });
});

describe('a cursor the server answers again', () => {
  it('the start cursor is one followed: a page answering it again throws, never yields that page twice', async () => {
    const p = new Paginator<{ id: string }>(async () => ({ data: [{ id: 'x' }], has_more: true, next_cursor: 'S' }), 'S');
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const x of p) seen.push(x.id);
      })(),
    ).rejects.toThrow('pagination did not advance');
    expect(seen).toEqual(['x']);
  });
});

describe("a training run's log", () => {
  it('is read line by line across its pages (lines, next_cursor null at the end), from a cursor when given', async () => {
    const pages: Record<string, { lines: { ts: number; message: string }[]; next_cursor: string | null }> = {
      '': {
        lines: [
          { ts: 1, message: 'Queued' },
          { ts: 2, message: 'epoch 1' },
        ],
        next_cursor: 'c1',
      },
      c1: { lines: [{ ts: 3, message: 'epoch 2' }], next_cursor: 'c2' },
      c2: { lines: [{ ts: 4, message: 'Completed' }], next_cursor: null },
    };
    const asked: string[] = [];
    const fetch: FetchLike = async (r) => {
      const u = new URL(r.url);
      asked.push(`${u.pathname}?${u.searchParams}`);
      return Response.json({ job_name: 'run-1', ...pages[u.searchParams.get('cursor') ?? ''] });
    };
    const p = new PlatformClient({ baseUrl: 'http://platform.test', apiKey: 'svc_abcdefgh_x', fetch });
    expect((await p.trainingJobs.logs('run-1', { limit: 2 }).toArray()).map((l) => l.message)).toEqual(['Queued', 'epoch 1', 'epoch 2', 'Completed']);
    expect(asked).toEqual(['/api/training-jobs/logs/run-1?limit=2', '/api/training-jobs/logs/run-1?limit=2&cursor=c1', '/api/training-jobs/logs/run-1?limit=2&cursor=c2']);
    expect((await p.trainingJobs.logs('run-1', { cursor: 'c1' }).toArray()).map((l) => l.ts)).toEqual([3, 4]);
    const first = await p.trainingJobs.logs('run-1').firstPage();
    expect([first.job_name, first.next_cursor, first.lastResponse.statusCode]).toEqual(['run-1', 'c1', 200]);
  });
});

describe("a running training run's log", () => {
  it('is read to its last line so far, its end page keeping the cursor a later call follows it from (the page after it is empty, the same cursor again)', async () => {
    // docs/api.md: while the run has not ended, the page that reaches the end still has a
    // next_cursor (after its last line; the same one again when no line came).
    const pages: Record<string, { lines: { ts: number; message: string }[]; next_cursor: string | null }> = {
      '': { lines: [{ ts: 1, message: 'Queued' }], next_cursor: 'c1' },
      c1: { lines: [{ ts: 2, message: 'epoch 1' }], next_cursor: 'c2' },
      c2: { lines: [], next_cursor: 'c2' },
    };
    const asked: string[] = [];
    const fetch: FetchLike = async (r) => {
      const u = new URL(r.url);
      asked.push(u.searchParams.get('cursor') ?? '');
      return Response.json({ job_name: 'run-1', ...pages[u.searchParams.get('cursor') ?? ''] });
    };
    const p = new PlatformClient({ baseUrl: 'http://platform.test', apiKey: 'svc_abcdefgh_x', fetch });
    // It threw 'pagination did not advance (cursor c2 repeated)'.
    expect((await p.trainingJobs.logs('run-1').toArray()).map((l) => l.message)).toEqual(['Queued', 'epoch 1']);
    expect(asked).toEqual(['', 'c1', 'c2']);
    const pagesRead = [];
    for await (const page of p.trainingJobs.logs('run-1').pages()) pagesRead.push(page.next_cursor);
    expect(pagesRead.at(-1)).toBe('c2');
    // Followed later from that cursor: nothing new yet, no error.
    expect(await p.trainingJobs.logs('run-1', { cursor: 'c2' }).toArray()).toEqual([]);
  });
});

describe('a token answer the client cannot use', () => {
  it('throws invalid_token_response without the tokens it holds', async () => {
    const fetch: FetchLike = async (r) => (isToken(r) ? Response.json({ access_token: 'SECRET-ACCESS-TOKEN', token_type: 'Bearer', expires_in: '3600' }) : Response.json(item));
    const err = await new CoreClient({ baseUrl: 'http://core.test', clientId: 'c', clientSecret: 's', fetch }).items.get('7').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'invalid_token_response', body: { access_token: '[redacted]', expires_in: '3600' } });
    expect(inspect(err)).not.toContain('SECRET-ACCESS-TOKEN');
  });
});

describe("API Gateway's own answers", () => {
  it('an error of { message } (its throttle, a failed function) says its message, under HTTP/2 too (no status text)', () => {
    const e = ApiError.from(new Response(null, { status: 429 }), { message: 'Too Many Requests' }, 'platform');
    expect([e.status, e.type, e.code, e.message]).toEqual([429, 'rate_limit_error', 'http_429', 'Too Many Requests']);
    const core = ApiError.from(new Response(null, { status: 500 }), { message: 'Internal Server Error' }, 'core');
    expect([core.type, core.message]).toEqual(['api_error', 'Internal Server Error']);
  });
});

describe('Retry-After', () => {
  it('is whole seconds or an HTTP date; anything else is unreadable (the client backs off as without one), never a date long past', () => {
    const now = Date.parse('Tue, 08 Dec 2026 04:00:00 GMT');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Tue, 08 Dec 2026 04:00:02 GMT', now)).toBe(2000);
    expect(retryAfterMs('Tue, 08 Dec 2026 03:59:00 GMT', now)).toBe(0);
    // Date.parse reads these as dates (2001, 1970): a wait of 0 where the server asked for one.
    for (const h of ['1.5', '-1', '2 ', ' 12.0']) expect(retryAfterMs(h, now), h).toBe(h.trim() === '2' ? 2000 : undefined);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });
});
