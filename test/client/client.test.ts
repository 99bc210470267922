/**
 * @recsearch/client against a real local stack (dynalite + handlers + HTTP) whose access tokens
 * live 5 s: token refresh before expiry, one re-fetch on a 401, retries that reuse one
 * Idempotency-Key, cursor pagination, typed errors, and the Platform helpers.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, CoreClient, PlatformClient, TokenManager, Transport, type FetchLike, type Item } from '../../packages/client/src/index.ts';
import { gate } from '../helpers/fixtures.ts';
import { startTestStack, UUID_RE, type TestStack } from '../helpers/stack.ts';

const TOKEN_LIFETIME_SECONDS = 5;
let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ TOKEN_LIFETIME_SECONDS: String(TOKEN_LIFETIME_SECONDS), LOCAL_RETRY_DELAY_MS: '50' });
});
afterAll(async () => {
  await t?.stop();
});

const core = (extra: Partial<ConstructorParameters<typeof CoreClient>[0]> = {}) =>
  new CoreClient({ baseUrl: t.base, clientId: t.demo.creds.client_id, clientSecret: t.demo.creds.client_secret, ...extra });
const platform = (fetch?: FetchLike) => new PlatformClient({ baseUrl: t.base, apiKey: t.demo.creds.api_key, ...(fetch ? { fetch } : {}) });
const isToken = (r: Request) => new URL(r.url).pathname === '/oauth2/token';

/** A fetch that records every exchange (method, path, status, headers sent). */
function recorder(inner: FetchLike = (r) => fetch(r)) {
  const log: { method: string; path: string; status: number; key: string | null; at: number }[] = [];
  const f: FetchLike = async (r) => {
    const res = await inner(r);
    log.push({ method: r.method, path: new URL(r.url).pathname, status: res.status, key: r.headers.get('idempotency-key'), at: Date.now() });
    return res;
  };
  return { fetch: f, log };
}

describe('tokens', () => {
  it('refreshes before expiry with a 5 s token lifetime: calls over 12 s never see a 401', async () => {
    const rec = recorder();
    const c = core({ fetch: rec.fetch });
    const item = await c.items.create({ name: 'token probe' });
    // At least 12 s and at least 31 calls, however long the calls take (a loaded machine answers
    // them more slowly): the bounds on token requests follow from the time the calls took.
    const started = Date.now();
    let calls = 0;
    while (Date.now() - started < 12_000 || calls < 31) {
      const got = await c.items.get(item.id);
      expect(got.id).toBe(item.id);
      calls++;
      await new Promise((r) => setTimeout(r, 150));
    }
    const elapsed = Date.now() - started;
    expect(rec.log.filter((e) => e.status === 401)).toEqual([]);
    const tokenFetches = rec.log.filter((e) => e.path === '/oauth2/token');
    // 5 s tokens, taken as good for 4 s and refreshed ~1 s before that: a new one before each
    // expires (at least 3 over 12 s), about one per 3 s of calls (6 over 12 s), not one per call.
    expect(tokenFetches.length).toBeGreaterThanOrEqual(3);
    expect(tokenFetches.length).toBeLessThanOrEqual(Math.ceil(elapsed / 3000) + 2);
    expect(tokenFetches.length).toBeLessThan(calls / 4);
    expect(c.tokens.fetches).toBe(tokenFetches.length);
  }, 90_000);

  it('shares one token request between concurrent calls', async () => {
    const rec = recorder();
    const c = core({ fetch: rec.fetch });
    const pages = await Promise.all(Array.from({ length: 20 }, () => c.items.listPage({ limit: 1 })));
    expect(pages).toHaveLength(20);
    expect(rec.log.filter((e) => e.path === '/oauth2/token')).toHaveLength(1);
  });

  it('a refresh margin longer than the token lives still fetches one token for many calls, not one per call', async () => {
    const rec = recorder();
    // 60 s asked of 5 s tokens: until 2026-12-08 each token was due for refresh as soon as it
    // came, and every call after the first fetched another beside it.
    const c = core({ fetch: rec.fetch, refreshMarginMs: 60_000 });
    for (let k = 0; k < 6; k++) {
      expect((await c.items.listPage({ limit: 1 })).object).toBe('list');
      // Time for a token request started beside the call to be made and answered.
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rec.log.filter((e) => e.path === '/oauth2/token')).toHaveLength(1);
    expect(rec.log.filter((e) => e.path === '/v1/items').map((e) => e.status)).toEqual(Array(6).fill(200));
    // A margin that is no number is refused before any request (NaN had the same effect).
    expect(() => core({ refreshMarginMs: Number.NaN })).toThrow(TypeError);
  }, 20_000);

  it('a 401 (an expired token) fetches one new token and retries once', async () => {
    const rec = recorder();
    // Never refresh early: the client keeps its token until the server refuses it.
    const c = core({ fetch: rec.fetch, refreshMarginMs: -60_000 });
    await c.items.listPage({ limit: 1 });
    await new Promise((r) => setTimeout(r, (TOKEN_LIFETIME_SECONDS + 1.2) * 1000));
    const page = await c.items.listPage({ limit: 1 });
    expect(page.object).toBe('list');
    expect(rec.log.map((e) => `${e.path} ${e.status}`)).toEqual(['/oauth2/token 200', '/v1/items 200', '/v1/items 401', '/oauth2/token 200', '/v1/items 200']);
  }, 20_000);

  it('a 401 that a new token does not cure is thrown as ApiError (no loop)', async () => {
    const rec = recorder(async (r) => {
      if (!isToken(r)) r.headers.set('authorization', 'Bearer not-a-token');
      return fetch(r);
    });
    const c = core({ fetch: rec.fetch });
    const err = await c.items.listPage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(401);
    expect((err as ApiError).type).toBe('authentication_error');
    expect(rec.log.filter((e) => e.path === '/v1/items')).toHaveLength(2);
  });

  it("a call's signal also ends its wait for a token (a token endpoint that hangs)", async () => {
    // The token endpoint hangs until the test opens the gate, after the answers: each call must
    // end while it is still hanging (not a bound on elapsed time, which a loaded machine overruns).
    const tokenHangs = gate();
    const hang: FetchLike = async (r) => {
      if (isToken(r)) await tokenHangs.opened;
      return fetch(r);
    };
    const c = core({ fetch: hang });
    try {
      await expect(tokenHangs.notWaitedFor(c.items.listPage({ limit: 1 }, { signal: AbortSignal.timeout(300) }))).rejects.toMatchObject({ name: 'TimeoutError' });
      // Aborted before the call: no token request is waited for either.
      await expect(tokenHangs.notWaitedFor(c.items.listPage({ limit: 1 }, { signal: AbortSignal.abort() }))).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      tokenHangs.open();
    }
  });

  it('a failed early refresh fails no call while the token in hand is accepted', async () => {
    let failToken = false;
    let tokenRequests = 0;
    const flaky: FetchLike = async (r) => {
      if (!isToken(r)) return fetch(r);
      tokenRequests++;
      return failToken ? new Response('{"error":"temporarily_unavailable"}', { status: 503, headers: { 'content-type': 'application/json' } }) : fetch(r);
    };
    // The token manager's own clock (its `now`, which CoreClient does not pass on), moved by the
    // test: the token is past its refresh time and still good for 2.7 s by that clock however
    // long the calls take. (The server accepts it for 5 s of real time: the four calls follow
    // its fetch at once.)
    let clock = Date.now();
    const retry = { maxRetries: 0 };
    const tokens = new TokenManager(new Transport({ fetch: flaky, retry }), {
      tokenUrl: `${t.base}/oauth2/token`,
      clientId: t.demo.creds.client_id,
      clientSecret: t.demo.creds.client_secret,
      // 5 s tokens, taken as good for 4 s, refreshed from 1 s on.
      refreshMarginMs: 3000,
      now: () => clock,
    });
    const api = new Transport({ fetch: flaky, retry, auth: tokens });
    const listPage = async () => {
      const res = await api.fetch(new Request(`${t.base}/v1/items?limit=1`));
      expect(res.status).toBe(200);
      return ((await res.json()) as { object: string }).object;
    };
    // Each call answered (200, a page), whatever items earlier tests left.
    expect(await listPage()).toBe('list');
    clock += 1300;
    failToken = true;
    for (let k = 0; k < 3; k++) expect(await listPage()).toBe('list');
    // One refresh tried (and failed) for the three calls: the next not before 5 s.
    await new Promise((done) => setTimeout(done, 200));
    expect(tokenRequests).toBe(2);
  });

  it('wrong client credentials are an ApiError from the token endpoint', async () => {
    const c = core({ clientSecret: 'wrong' });
    const err = await c.items.listPage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 401, source: 'oauth', code: 'invalid_client', type: 'authentication_error' });
  });
});

describe('idempotent retries', () => {
  it('a create whose response is lost is retried with the same Idempotency-Key and stored once', async () => {
    const category = `idem-${randomUUID()}`;
    const attempts: { key: string | null; replayed: string | null }[] = [];
    const c = core({
      retry: { baseDelayMs: 10 },
      fetch: async (r) => {
        const res = await fetch(r);
        if (r.method === 'POST' && new URL(r.url).pathname === '/v1/items') {
          attempts.push({ key: r.headers.get('idempotency-key'), replayed: res.headers.get('idempotent-replayed') });
          if (attempts.length === 1) {
            await res.text(); // the server handled it; its answer never arrives
            throw new TypeError('fetch failed (dropped by the test)');
          }
        }
        return res;
      },
    });
    const item = await c.items.create({ name: 'once', metadata: { category } });
    expect(attempts).toHaveLength(2);
    expect(attempts[0]!.key).toMatch(UUID_RE);
    expect(attempts[1]!.key).toBe(attempts[0]!.key);
    // The server answered the retry with the first attempt's stored answer.
    expect(attempts[0]!.replayed).toBeNull();
    expect(attempts[1]!.replayed).toBe('true');
    const listed = await c.items.list({ category, limit: 100 }).toArray();
    expect(listed.map((i) => i.id)).toEqual([item.id]);
    // What the answer said beside its body: the retry's, a replay of the stored 201.
    expect(item.lastResponse).toMatchObject({ statusCode: 201, idempotentReplayed: true, requestId: expect.stringMatching(UUID_RE) });
  });

  it("every answer carries its lastResponse (request id, status, replayed), left out of the record's own fields", async () => {
    const c = core();
    const key = randomUUID();
    const first = await c.items.create({ name: 'answered' }, { idempotencyKey: key });
    expect(first.lastResponse).toMatchObject({ statusCode: 201, idempotentReplayed: false });
    expect(first.lastResponse.requestId).toMatch(UUID_RE);
    expect(first.lastResponse.headers.get('x-request-id')).toBe(first.lastResponse.requestId);
    // Not one of the item's fields: JSON, keys and spreads do not show it.
    expect(Object.keys(first)).not.toContain('lastResponse');
    expect(JSON.parse(JSON.stringify(first))).not.toHaveProperty('lastResponse');
    const again = await c.items.create({ name: 'answered' }, { idempotencyKey: key });
    expect(again.lastResponse).toMatchObject({ statusCode: 201, idempotentReplayed: true });
    expect(again.lastResponse.requestId).not.toBe(first.lastResponse.requestId);
    const got = await c.items.get(first.id);
    expect(got.lastResponse).toMatchObject({ statusCode: 200, idempotentReplayed: false });
    // A method answering a list's elements alone carries the answer's too.
    const many = await c.items.createMany([{ name: 'a' }, { name: 'b' }]);
    expect(many.lastResponse.statusCode).toBe(201);
    const events = await c.events.send([{ type: 'view', user_id: `u-${randomUUID()}`, item_id: String(first.id) }]);
    expect(events.lastResponse.requestId).toMatch(UUID_RE);
    expect((await c.search({ query: 'answered' })).lastResponse.statusCode).toBe(200);
    const ctx = await platform().contexts.create({ name: `answered-${randomUUID().slice(0, 8)}` });
    expect(ctx.lastResponse).toMatchObject({ statusCode: 201, requestId: expect.stringMatching(UUID_RE) });
    // A Core paginator's pages too, in their type as in the Platform's (until 2026-12-06 they were
    // typed without it: this did not compile, `tsc -p .`, though every page carried one).
    const page = await c.items.list({ limit: 1 }).firstPage();
    expect(page.lastResponse.requestId).toMatch(UUID_RE);
    for await (const p of c.events.list({ limit: 1 }).pages()) expect(p.lastResponse.statusCode).toBe(200);
    for await (const p of c.searchAll({ query: 'answered', limit: 1 }).pages()) expect(p.lastResponse.statusCode).toBe(200);
  });

  it('a 503 after the server stored a batch of events: the retry answers the same events, stored once', async () => {
    const user = `u-${randomUUID()}`;
    const keys: (string | null)[] = [];
    let failed = false;
    const c = core({
      retry: { baseDelayMs: 10 },
      fetch: async (r) => {
        const res = await fetch(r);
        if (r.method === 'POST' && new URL(r.url).pathname === '/v1/events') {
          keys.push(r.headers.get('idempotency-key'));
          if (!failed) {
            failed = true;
            await res.text();
            return new Response(JSON.stringify({ error: { type: 'api_error', code: 'timeout', message: 'simulated', request_id: randomUUID() } }), { status: 503 });
          }
          expect(res.headers.get('idempotent-replayed')).toBe('true');
        }
        return res;
      },
    });
    const item = await c.items.create({ name: 'event target' });
    const sent = await c.events.send(
      [
        { type: 'click', user_id: user, item_id: item.id, click: {} },
        { type: 'click', user_id: user, item_id: item.id, click: {} },
      ],
      { idempotencyKey: `k-${randomUUID()}` },
    );
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[0]).toMatch(/^k-/);
    const listed = await c.events.list({ user_id: user }).toArray();
    expect(listed.map((e) => e.id)).toEqual(sent.map((e) => e.id));
  });

  it('a Platform create (a rule) whose response is lost is retried with the same Idempotency-Key and stored once; an API key create is not retried', async () => {
    const attempts: { path: string; key: string | null; replayed: string | null }[] = [];
    const watched = ['/api/rules', '/api/api-keys'];
    const dropFirst = new Set(watched);
    const p = platform(async (r) => {
      const res = await fetch(r);
      const path = new URL(r.url).pathname;
      if (r.method === 'POST' && watched.includes(path)) {
        attempts.push({ path, key: r.headers.get('idempotency-key'), replayed: res.headers.get('idempotent-replayed') });
        if (dropFirst.delete(path)) {
          await res.text(); // the server handled it; its answer never arrives
          throw new TypeError('fetch failed (dropped by the test)');
        }
      }
      return res;
    });
    const ctx = await p.contexts.create({ name: `ctx-${randomUUID().slice(0, 8)}` });
    const name = `rule-${randomUUID().slice(0, 8)}`;
    const rule = await p.rules.create({ name, context_id: ctx.id, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Acme' }], boost: 0 });
    const rules = attempts.filter((a) => a.path === '/api/rules');
    expect(rules).toHaveLength(2);
    expect(rules[0]!.key).toMatch(UUID_RE);
    expect(rules[1]).toEqual({ path: '/api/rules', key: rules[0]!.key, replayed: 'true' });
    expect((await p.rules.list({ contextId: String(ctx.id) }).toArray()).filter((r) => r.name === name).map((r) => r.id)).toEqual([rule.id]);
    // An API key's answer holds the key, which the API does not keep: no Idempotency-Key, no retry.
    const err = await p.apiKeys.create({ name: `k-${randomUUID().slice(0, 8)}`, scopes: ['items'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(attempts.filter((a) => a.path === '/api/api-keys')).toEqual([{ path: '/api/api-keys', key: null, replayed: null }]);
  });

  it('a POST without an Idempotency-Key is never retried after a network error', async () => {
    let attempts = 0;
    const c = core({
      retry: { baseDelayMs: 10 },
      fetch: async (r) => {
        if (isToken(r)) return fetch(r);
        attempts++;
        const res = await fetch(r);
        await res.text();
        throw new TypeError('fetch failed (dropped by the test)');
      },
    });
    const err = await c.raw.POST('/v1/items', { body: { name: 'no key' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(attempts).toBe(1);
  });

  it('a DELETE whose answer is lost is not repeated: the failure is reported, never a 404 for a delete that worked', async () => {
    let deletes = 0;
    const c = core({
      retry: { baseDelayMs: 10 },
      fetch: async (r) => {
        const res = await fetch(r);
        if (r.method !== 'DELETE') return res;
        deletes++;
        await res.text();
        return new Response(JSON.stringify({ error: { type: 'api_error', code: 'timeout', message: 'simulated', request_id: randomUUID() } }), { status: 503 });
      },
    });
    const item = await c.items.create({ name: 'deleted once' });
    const err = await c.items.delete(item.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(503);
    expect(deletes).toBe(1);
    expect(((await c.items.get(item.id).catch((e: unknown) => e)) as ApiError).code).toBe('item_not_found');
  });

  it('a 429 is retried after its Retry-After', async () => {
    let first = true;
    const c = core({
      fetch: async (r) => {
        if (!isToken(r) && first) {
          first = false;
          return new Response(JSON.stringify({ error: { type: 'rate_limit_error', code: 'rate_limited', message: 'simulated', request_id: randomUUID() } }), {
            status: 429,
            headers: { 'retry-after': '1' },
          });
        }
        return fetch(r);
      },
    });
    await c.accessToken();
    const started = Date.now();
    const page = await c.items.listPage({ limit: 1 });
    expect(page.object).toBe('list');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });
});

describe('pagination', () => {
  it('yields each of 250 items exactly once, 100 per page', async () => {
    const c = core();
    const category = `pages-${randomUUID()}`;
    const created: Item[] = [];
    for (const n of [100, 100, 50]) {
      created.push(...(await c.items.createMany(Array.from({ length: n }, (_, i) => ({ name: `p${created.length + i}`, metadata: { category } })))));
    }
    expect(created).toHaveLength(250);
    const seen: string[] = [];
    for await (const item of c.items.list({ category, limit: 100 })) seen.push(item.id);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect([...seen].sort()).toEqual(created.map((i) => i.id).sort());
    const sizes: number[] = [];
    for await (const page of c.items.list({ category, limit: 100 }).pages()) sizes.push(page.data.length);
    expect(sizes).toEqual([100, 100, 50]);
  });

  it('follows the events cursor too', async () => {
    const c = core();
    const user = `pu-${randomUUID()}`;
    const item = await c.items.create({ name: 'paged events target' });
    const sent = await c.events.send(Array.from({ length: 230 }, () => ({ type: 'view', user_id: user, item_id: item.id, view: {} })));
    const ids: string[] = [];
    for await (const e of c.events.list({ user_id: user, limit: 100 })) ids.push(e.id);
    expect(ids).toEqual(sent.map((e) => e.id));
  });
});

describe('typed errors', () => {
  it('a missing item: ApiError with the envelope and its request_id', async () => {
    const err = await core()
      .items.get('999999999')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e).toMatchObject({ status: 404, type: 'not_found_error', code: 'item_not_found', source: 'core' });
    expect(e.message).toBeTruthy();
    expect(e.request_id).toMatch(UUID_RE);
    expect(e.request_id).toBe(e.headers.get('x-request-id'));
  });

  it('a validation error names its param', async () => {
    const err = await core()
      .items.create({ name: '' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'validation_error', param: 'name' });
    expect(e.fieldErrors?.name?.length).toBeGreaterThan(0);
    expect(e.request_id).toMatch(UUID_RE);
  });

  it('a Platform error carries the status-mapped type and the X-Request-Id', async () => {
    const err = await platform()
      .segments.get(987654)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e).toMatchObject({ status: 404, type: 'not_found_error', source: 'platform' });
    expect(e.message).toBeTruthy();
    expect(e.request_id).toMatch(UUID_RE);
  });
});

describe('Core and Platform helpers', () => {
  it('items update/delete, search and recommendations', async () => {
    const c = core();
    const item = await c.items.create({ name: 'Client walkthrough jacket', description: 'waterproof shell', metadata: { category: 'client-jackets' } });
    const updated = await c.items.update(item.id, { active: false });
    expect(updated.active).toBe(false);
    await c.items.update(item.id, { active: true });
    const results = await c.search({ query: 'walkthrough jacket', limit: 5 });
    expect(results.url).toBe('/v1/search');
    const recs = await c.recommendations({ user_id: `u-${randomUUID()}`, limit: 3 });
    // A context by its numeric ID and flags as booleans, as the console's records give them.
    const ctx = await platform().contexts.create({ name: `ctx-${randomUUID().slice(0, 8)}` });
    const inContext = await c.recommendations({ user_id: `u-${randomUUID()}`, limit: 3, context_id: ctx.id, include_seen: true, explain: false });
    expect(inContext.object).toBe('list');
    // An Idempotency-Key the API would refuse is said before anything is sent.
    await expect(c.items.create({ name: 'x' }, { idempotencyKey: 'commande-✓' })).rejects.toThrow('idempotencyKey must be 1-255 visible ASCII characters');
    await expect(c.items.create({ name: 'x' }, { idempotencyKey: '' })).rejects.toThrow(TypeError);
    // A comma too: the API refuses it, as it cannot tell it from the header sent twice.
    await expect(c.items.create({ name: 'x' }, { idempotencyKey: 'k,k' })).rejects.toThrow('other than a comma');
    expect(recs.url).toBe('/v1/recommendations');
    const del = await c.items.delete(item.id);
    expect(del.deletedCount).toBe(1);
  });

  it('Platform: contexts, rules, segments, rerank controls, event types, templates, keys, clients, models, endpoints, audit, analytics', async () => {
    const rec = recorder();
    const p = platform(rec.fetch);
    const ctx = await p.contexts.create({ name: `ctx-${randomUUID().slice(0, 8)}` });
    expect(await p.contexts.get(ctx.id)).toEqual(ctx);
    expect((await p.contexts.listPage()).data.some((x) => x.id === ctx.id)).toBe(true);
    const rule = await p.rules.create({ name: 'boost shoes', context_id: ctx.id, conditions: [{ field: 'metadata.category', op: 'eq', value: 'shoes' }], boost: 2 });
    expect((await p.rules.get(rule.id)).name).toBe('boost shoes');
    const rules = await p.rules.list({ contextId: String(ctx.id) }).toArray();
    expect(rules.map((r) => r.id)).toContain(rule.id);
    // The context's numeric id as contexts.create answers it, as rerankControls takes it (until
    // 2026-12-06 the rule and experiment lists' contextId took text only: this did not compile).
    expect((await p.rules.listPage({ contextId: ctx.id })).data.map((r) => r.id)).toEqual([rule.id]);
    expect((await p.experiments.list({ contextId: ctx.id }).toArray()).length).toBe(0);
    expect(await p.rules.delete(rule.id)).toEqual({ id: rule.id, deleted: true });
    const seg = await p.segments.create({ name: 'buyers', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } });
    expect((await p.segments.update(seg.id, { description: 'bought once' })).description).toBe('bought once');
    expect(await p.segments.delete(seg.id)).toEqual({ id: seg.id, deleted: true });
    const controls = await p.rerankControls.put(ctx.id, { diversity: 0.2, max_per_category: 2 });
    expect(controls.diversity).toBe(0.2);
    expect((await p.rerankControls.get(ctx.id)).max_per_category).toBe(2);
    const et = await p.eventTypes.create({ name: `sig_${randomUUID().slice(0, 8)}`, weight: 40 });
    expect((await p.eventTypes.listPage()).data.map((x) => x.id)).toContain(et.id);
    expect(await p.eventTypes.get(et.id)).toEqual(et);
    const tpl = await p.templates.create({ name: `tpl-${randomUUID().slice(0, 8)}`, event_types: [{ id: et.id, weight: 1 }] });
    expect((await p.templates.get(tpl.id)).name).toBe(tpl.name);
    const keys = await p.apiKeys.list().toArray();
    expect(keys.length).toBeGreaterThan(0);
    const clients = await p.clients.list().toArray();
    expect(clients.map((x) => x.client_id)).toContain(t.demo.creds.client_id);
    expect(Array.isArray((await p.models.listPage()).data)).toBe(true);
    const endpoints = (await p.endpoints.listPage()).data;
    for (const e of endpoints) expect(await p.endpoints.get(e.id)).toEqual(e);
    // The audit trail of the rerank controls set above, and search analytics (a number of searches).
    const trail = await p.audit.list({ resource: `rerank-controls/${ctx.id}`, limit: 1 }).toArray();
    expect(trail.map((e) => [e.action, e.resource])).toEqual([['create', `rerank-controls/${ctx.id}`]]);
    expect((await p.apiKeys.listPage({ limit: 1 })).data).toHaveLength(1);
    const report = await p.analytics.searches({ limit: 5 });
    expect(report.object).toBe('search_analytics');
    expect(report.top_queries.length).toBeLessThanOrEqual(5);
    // A range as a Date, Unix seconds or a day: each is the range asked for.
    const day = new Date(Date.UTC(2026, 0, 5, 13, 30));
    const ranges = [
      await p.analytics.searches({ from: day, to: new Date(Date.UTC(2026, 0, 6, 12)) }),
      await p.analytics.searches({ from: Date.UTC(2026, 0, 5, 13, 30) / 1000, to: Date.UTC(2026, 0, 6, 12) / 1000 }),
      await p.analytics.searches({ from: '2026-01-05', to: '2026-01-06' }),
    ];
    expect(ranges.map((r) => [r.from, r.to])).toEqual(Array(3).fill(['2026-01-05', '2026-01-06']));
    expect(rec.log.every((e) => e.status < 400)).toBe(true);
  });
});
