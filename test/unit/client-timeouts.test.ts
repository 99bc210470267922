import { describe, expect, it } from 'vitest';
import { CoreClient, PlatformClient, type FetchLike } from '../../packages/client/src/index.ts';

const TOKEN = () => Response.json({ access_token: 't', token_type: 'Bearer', expires_in: 3600 });
const never = () => new Promise<Response>(() => undefined);
const core = (fetch: FetchLike, extra: Partial<ConstructorParameters<typeof CoreClient>[0]> = {}) =>
  new CoreClient({ baseUrl: 'http://core.test', clientId: 'c', clientSecret: 's', fetch, retry: { baseDelayMs: 1 }, ...extra });
const item = { object: 'item', id: '7', name: 'b', active: true, metadata: {}, created: 1, updated: 1 };

describe("the client's per-attempt timeout", () => {
  it('drops an attempt that hangs and retries a read; the answer of the next attempt is returned', async () => {
    let attempts = 0;
    const fetch: FetchLike = async (r) => {
      if (new URL(r.url).pathname === '/oauth2/token') return TOKEN();
      attempts++;
      // The first attempt never answers, and (as some fetches do) ignores its signal.
      return attempts === 1 ? never() : Response.json(item);
    };
    expect(await core(fetch, { timeoutMs: 50 }).items.get('7')).toMatchObject({ id: '7' });
    expect(attempts).toBe(2);
  });

  it('throws a TimeoutError naming the call and the limit when every attempt hangs, and never repeats a create without a key', async () => {
    let gets = 0;
    const hangs: FetchLike = async (r) => {
      if (new URL(r.url).pathname === '/oauth2/token') return TOKEN();
      gets++;
      return never();
    };
    const err = await core(hangs, { timeoutMs: 20, retry: { maxRetries: 2, baseDelayMs: 1 } })
      .items.get('7')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TimeoutError', message: 'GET /v1/items/7: no answer within 20 ms (timeoutMs)' });
    expect(gets).toBe(3);
    let posts = 0;
    const p = new PlatformClient({
      baseUrl: 'http://platform.test',
      apiKey: 'svc_abcdefgh_x',
      timeoutMs: 20,
      fetch: async () => {
        posts++;
        return never();
      },
    });
    expect(await p.apiKeys.create({ name: 'c', scopes: ['items'] }).catch((e: unknown) => (e as Error).name)).toBe('TimeoutError');
    expect(posts).toBe(1);
  });

  it("the caller's own abort is thrown as it is, at once, not retried", async () => {
    let attempts = 0;
    const fetch: FetchLike = async (r) => {
      if (new URL(r.url).pathname === '/oauth2/token') return TOKEN();
      attempts++;
      return never();
    };
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('left the page')), 20);
    const err = await core(fetch, { timeoutMs: 10_000 })
      .items.get('7', { signal: ctl.signal })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('left the page');
    expect(attempts).toBe(1);
  });

  it('0 turns the limit off, and a limit that is no number of milliseconds is refused before anything is sent', async () => {
    let answered = false;
    const slow: FetchLike = async (r) => {
      if (new URL(r.url).pathname === '/oauth2/token') return TOKEN();
      await new Promise((res) => setTimeout(res, 80));
      answered = true;
      return Response.json(item);
    };
    expect(await core(slow, { timeoutMs: 0 }).items.get('7')).toMatchObject({ id: '7' });
    expect(answered).toBe(true);
    for (const timeoutMs of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => core(slow, { timeoutMs })).toThrow(/timeoutMs must be a finite number/);
    }
  });
});

describe('a 5xx asking to wait longer than the client waits', () => {
  it('is answered (thrown as its ApiError), not retried early; one within the limit is waited for', async () => {
    let attempts = 0;
    const busy =
      (after: string): FetchLike =>
      async (r) => {
        if (new URL(r.url).pathname === '/oauth2/token') return TOKEN();
        attempts++;
        return attempts === 1
          ? Response.json(
              { error: { type: 'api_error', code: 'unavailable', message: 'busy', request_id: '00000000-0000-0000-0000-000000000000' } },
              { status: 503, headers: { 'retry-after': after } },
            )
          : Response.json(item);
      };
    const err = await core(busy('120'), { retry: { baseDelayMs: 1, maxRetryAfterMs: 1000 } })
      .items.get('7')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'unavailable' });
    expect(attempts).toBe(1);
    attempts = 0;
    const started = Date.now();
    expect(await core(busy('1'), { retry: { baseDelayMs: 1, maxRetryAfterMs: 1000 } }).items.get('7')).toMatchObject({ id: '7' });
    expect(attempts).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
  });
});
