import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, startTestStack, type TestStack } from '../helpers/stack.ts';

/*
 * Answers of many large items within what a Lambda function may answer: 6 MB (6,291,456 bytes)
 * as Lambda writes it, the body a JSON string inside its JSON (quotes escaped again). Past it
 * API Gateway answers its own 500 (the local server answers the whole body: measured here).
 */
const LAMBDA_ANSWER = 6 * 1024 * 1024;
const lambdaBytes = (r: Api) => Buffer.byteLength(JSON.stringify({ statusCode: r.status, body: JSON.stringify(r.body) }));

let t: TestStack;
/** The 100 large items' ids, in creation order. */
const big: string[] = [];

// Items as large as create takes: 1,000 characters of name (4-byte ones), 20,000 of description,
// 16 KiB of metadata (quotes, which the body's JSON string in Lambda's answer escapes again).
const largeItem = (i: number) => ({
  name: `gear ${i} ${'\u{1F600}'.repeat(990)}`,
  description: `gear ${'\u{1F600}'.repeat(19_990)}`,
  metadata: { category: 'big', rank: i, k: '"'.repeat(8000) },
});

beforeAll(async () => {
  t = await startTestStack({ LOCAL_RETRY_DELAY_MS: '50' });
  for (let b = 0; b < 10; b++) {
    const r = await t.demo.core(
      'POST',
      '/v1/items',
      Array.from({ length: 10 }, (_, i) => largeItem(b * 10 + i)),
    );
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(201);
    big.push(...r.body.data.map((i: { id: string }) => i.id));
  }
}, 120_000);
afterAll(() => t.stop());

/**
 * Pages through a list from `first` with `next(cursor)`: every answer 200 and within Lambda's
 * answer, every page but the last with a cursor; the ids in the order served.
 */
async function pageAll(first: () => Promise<Api>, next: (cursor: string) => Promise<Api>, pages = 20): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let r = await first();
  for (let k = 0; k < pages; k++) {
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    sizes.push(r.body.data.length);
    expect(lambdaBytes(r)).toBeLessThan(LAMBDA_ANSWER);
    ids.push(...r.body.data.map((h: { id: string }) => h.id));
    if (!r.body.has_more) return { ids, sizes };
    r = await next(r.body.next_cursor);
  }
  throw new Error('too many pages');
}

describe('POST /v1/search and the Platform item search over 100 large items at limit 100', () => {
  const search = (body: Record<string, unknown>) => t.demo.core('POST', '/v1/search', body);
  const core = (body: Record<string, unknown>) =>
    pageAll(
      () => search(body),
      (c) => search({ ...body, starting_after: c }),
    );
  /** The same list in pages of 10 (within the answer at any size): the order a page of 100 must keep. */
  const inTens = (body: Record<string, unknown>) => core({ ...body, limit: 10 });

  it('by relevance (keyset cursors), highlighted and explained', async () => {
    const body = { query: 'gear', filters: { category: 'big' }, highlight: true, explain: true };
    const whole = await inTens(body);
    expect([...whole.ids].sort((a, b) => Number(a) - Number(b))).toEqual(big);
    const got = await core({ ...body, limit: 100 });
    expect(got.sizes.length).toBeGreaterThan(1);
    expect(got.ids).toEqual(whole.ids);
  });

  it('sorted by a field (sort cursors)', async () => {
    const body = { query: '', filters: { category: 'big' }, sort: { field: 'metadata.rank', order: 'desc' } };
    const got = await core({ ...body, limit: 100 });
    expect(got.sizes.length).toBeGreaterThan(1);
    expect(got.ids).toEqual([...big].reverse());
  });

  it('with a context (offset cursors)', async () => {
    const context = (await t.demo.platform('POST', '/api/contexts', { name: 'large items' })).body.id as number;
    const body = { query: 'gear', filters: { category: 'big' }, context_id: context };
    const whole = await inTens(body);
    expect([...whole.ids].sort((a, b) => Number(a) - Number(b))).toEqual(big);
    const got = await core({ ...body, limit: 100 });
    expect(got.sizes.length).toBeGreaterThan(1);
    expect(got.ids).toEqual(whole.ids);
  });

  it('the Platform item search, POST and GET', async () => {
    const post = (body: Record<string, unknown>) =>
      pageAll(
        () => t.demo.platform('POST', '/api/items/search', body),
        (cursor) => t.demo.platform('POST', '/api/items/search', { ...body, cursor }),
      );
    const whole = await post({ query: 'gear', limit: 10 });
    expect([...whole.ids].sort((a, b) => Number(a) - Number(b))).toEqual(big);
    const posted = await post({ query: 'gear', limit: 100 });
    expect(posted.sizes.length).toBeGreaterThan(1);
    expect(posted.ids).toEqual(whole.ids);
    const got = await pageAll(
      () => t.demo.platform('GET', '/api/items/search?query=gear&limit=100'),
      (cursor) => t.demo.platform('GET', `/api/items/search?query=gear&limit=100&cursor=${encodeURIComponent(cursor)}`),
    );
    expect(got.sizes.length).toBeGreaterThan(1);
    expect(got.ids).toEqual(whole.ids);
  });

  it("facets of large values are cut to fit, the page's hits beside them", async () => {
    // 200 items each with a value of 16 KiB (quotes) under one of two keys: 100 values a key, 13 MB as Lambda writes them.
    const made: string[] = [];
    for (let b = 0; b < 10; b++) {
      const r = await t.demo.core(
        'POST',
        '/v1/items',
        Array.from({ length: 20 }, (_, i) => {
          const n = b * 20 + i;
          return { name: `facet ${n}`, metadata: { category: 'facets', [`f${n % 2}`]: `${String(n).padStart(3, '0')}${'"'.repeat(8150)}` } };
        }),
      );
      expect(r.status).toBe(201);
      made.push(...r.body.data.map((i: { id: string }) => i.id));
    }
    const body = { query: '', filters: { category: 'facets' }, facets: ['f0', 'f1', 'category'] };
    const got = await core({ ...body, limit: 100 });
    expect([...got.ids].sort((a, b) => Number(a) - Number(b))).toEqual(made);
    const r = await search({ ...body, limit: 100 });
    // The most frequent first, in rounds: each key keeps as many values as the other, or one more.
    expect(r.body.facets.category).toEqual({ count: 200, values: [{ value: 'facets', count: 200 }], values_truncated: false, min: null, max: null });
    const [f0, f1] = [r.body.facets.f0, r.body.facets.f1];
    expect(f0.count).toBe(100);
    expect(f0.values_truncated).toBe(true);
    expect(f0.values.length).toBeGreaterThan(5);
    expect(f0.values.length - f1.values.length).toBeGreaterThanOrEqual(0);
    expect(f0.values.length - f1.values.length).toBeLessThanOrEqual(1);
    expect(f0.values.map((v: { value: string }) => v.value.slice(0, 3))).toEqual(Array.from({ length: f0.values.length }, (_, k) => String(2 * k).padStart(3, '0')));
  });
});

describe('GET /v1/recommendations over 100 large items at limit 100', () => {
  const recs = (query: string) => t.demo.core('GET', `/v1/recommendations?${query}`);
  for (const [what, query] of [
    ['personalised (popular for a user without events)', 'user_id=nobody-yet&category=big&explain=true'],
    ['similar items', `item_id=ANCHOR&category=big`],
  ] as const)
    it(`${what}: as many as fit the answer, the best first, numbered from 1`, async () => {
      const q = query.replace('ANCHOR', big[0] as string);
      const ten = await recs(`${q}&limit=10`);
      expect(ten.status).toBe(200);
      expect(ten.body.data).toHaveLength(10);
      const r = await recs(`${q}&limit=100`);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
      expect(lambdaBytes(r)).toBeLessThan(LAMBDA_ANSWER);
      const got = r.body.data as { item_id: string; rank: number; item: { id: string } }[];
      expect(got.length).toBeGreaterThan(10);
      expect(got.length).toBeLessThan(99);
      expect(got.map((x) => x.rank)).toEqual(got.map((_, k) => k + 1));
      expect(new Set(got.map((x) => x.item_id)).size).toBe(got.length);
      expect(got.every((x) => x.item.id === x.item_id)).toBe(true);
      // The same list as a shorter page begins: the best first, cut after the last that fits.
      expect(got.slice(0, 10).map((x) => x.item_id)).toEqual(ten.body.data.map((x: { item_id: string }) => x.item_id));
      expect(r.body.has_more).toBe(false);
      expect(r.body.next_cursor).toBeNull();
      expect(r.body.strategy).toBe(ten.body.strategy);
    });
});

describe('GET /v1/events over 100 large events at limit 100', () => {
  it('every page within the answer, every event once, in order, filtered or not', async () => {
    // Events as large as ingest takes (32 KiB serialised): a payload of quotes, which the answer
    // holds twice (at top level and in metadata) and Lambda's answer escapes again.
    const made: string[] = [];
    for (let b = 0; b < 5; b++) {
      const r = await t.demo.core(
        'POST',
        '/v1/events',
        Array.from({ length: 20 }, (_, i) => ({ type: 'view', user_id: 'reader', item_id: big[b * 20 + i], view: { k: '"'.repeat(16_000) } })),
      );
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(201);
      expect(lambdaBytes(r)).toBeLessThan(LAMBDA_ANSWER);
      made.push(...r.body.data.map((e: { id: string }) => e.id));
    }
    const list = (query: string) =>
      pageAll(
        () => t.demo.core('GET', `/v1/events?${query}`),
        (c) => t.demo.core('GET', `/v1/events?${query}&starting_after=${c}`),
      );
    for (const query of ['limit=100', 'limit=100&user_id=reader', 'limit=100&type=view', 'limit=100&user_id=reader&type=view']) {
      const got = await list(query);
      expect(got.sizes.length, query).toBeGreaterThan(1);
      expect(got.ids, query).toEqual(made);
    }
  });
});

describe('Platform lists of large records at limit 100', () => {
  it("rules (64 KB of conditions each) and a rule's audit trail (two of them an entry): every page within the answer, each record once, in order", async () => {
    const context = (await t.demo.platform('POST', '/api/contexts', { name: 'large rules' })).body.id as number;
    // Conditions of 64 KB of JSON, quotes (escaped again in Lambda's answer).
    const conditions = (i: number) => [{ field: 'metadata.k', op: 'in', value: Array.from({ length: 32 }, (_, v) => `${i}-${v}${'"'.repeat(990)}`) }];
    const made: number[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await t.demo.platform('POST', '/api/rules', { name: `large ${i}`, context_id: context, conditions: conditions(i), boost: 2 });
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(201);
      made.push(r.body.id);
    }
    const rules = await pageAll(
      () => t.demo.platform('GET', `/api/rules?contextId=${context}&limit=100`),
      (c) => t.demo.platform('GET', `/api/rules?contextId=${context}&limit=100&starting_after=${c}`),
    );
    expect(rules.sizes.length).toBeGreaterThan(1);
    expect(rules.ids).toEqual(made);
    // One rule changed 99 times: 100 entries of its trail, newest first.
    const one = made[0] as number;
    for (let k = 1; k < 100; k++) expect((await t.demo.platform('PATCH', `/api/rules/${one}`, { conditions: conditions(1000 + k) })).status).toBe(200);
    const trail = await pageAll(
      () => t.demo.platform('GET', `/api/audit?resource=rules/${one}&limit=100`),
      (c) => t.demo.platform('GET', `/api/audit?resource=rules/${one}&limit=100&starting_after=${c}`),
    );
    expect(trail.sizes.length).toBeGreaterThan(1);
    expect(trail.ids).toHaveLength(100);
    expect(new Set(trail.ids).size).toBe(100);
    expect(trail.ids).toEqual([...trail.ids].sort((a, b) => Number(b) - Number(a)));
  }, 120_000);
});
