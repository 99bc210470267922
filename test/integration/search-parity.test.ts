import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowMs, setClock } from '../../shared/clock.ts';
import { dayOf } from '../../shared/clock.ts';
import { FOLD_LAG_SECONDS } from '../../shared/search/analytics.ts';
import { expectCoreError, startTestStack, storedSearchable, type Api, type TestStack, until } from '../helpers/stack.ts';
import { nextSecond } from '../helpers/clock.ts';

/*
 * What search users reach for (issue 19, "Algolia parity") over real HTTP: facets, highlighting
 * and snippets, filters on any metadata key, sort by a numeric key, synonyms managed on the
 * Platform API, and search analytics. Keyword mode keeps the matches exact. The synonym cache is
 * off (SYNONYMS_CACHE_MS=0) so a change serves at once; its 5 s bound is documented.
 */
let t: TestStack;
type Hit = { id: string; name: string; score: number; metadata: Record<string, unknown>; highlight?: { name: string; description: string | null } };

const search = async (body: Record<string, unknown>): Promise<Api> => {
  const r = await t.demo.core('POST', '/v1/search', { mode: 'keyword', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r;
};
const hits = (r: Api) => r.body.data as Hit[];
const ids = (r: Api) => hits(r).map((h) => h.id);
const P = (m: string, p: string, b?: unknown, key?: string) => t.demo.platform(m, p, b, key);

const LONG =
  'This shoe was built for a long season of hard miles on every kind of ground you can imagine and then some more after that when the running gets serious on steep muddy hills far from any road';

let id: Record<string, string> = {};
/** When this file's first search could have been served (Unix seconds): the analytics tests count every search since. */
let startedAt = 0;
beforeAll(async () => {
  startedAt = Math.floor(nowMs() / 1000);
  t = await startTestStack({ LOCAL_RETRY_DELAY_MS: '50', SYNONYMS_CACHE_MS: '0' });
  const items = [
    { key: 'trail', name: 'Trail running shoe', description: 'Light shoe for rough ground', metadata: { category: 'shoes', brand: 'Acme', price: 129, tags: ['outdoor', 'running'] } },
    { key: 'road', name: 'Road runner', description: LONG, metadata: { category: 'shoes', brand: 'Bolt', price: 89 } },
    { key: 'rain', name: 'Rain jacket', description: 'Waterproof shell', metadata: { category: 'jackets', brand: 'Acme', price: 200 } },
    { key: 'runjacket', name: 'Running jacket', description: 'Bright & light', metadata: { category: 'jackets', brand: 'Cog', price: 150 } },
    { key: 'socks', name: 'Wool socks', description: 'Warm merino', metadata: { category: 'socks', brand: 'Acme', price: 19 } },
    { key: 'cap', name: 'Running cap', metadata: { category: 'hats', brand: 'Bolt', in_stock: true } },
    { key: 'fish', name: 'Fish & <Chips> "running" tee', description: 'A <b>bold</b> tee & more', metadata: { category: 'tees', brand: 'Cog', price: '12' } },
    { key: 'sneaker', name: 'Classic sneaker', metadata: { category: 'shoes', brand: 'Cog', price: 60 } },
    { key: 'trainer', name: 'Deluxe trainer', metadata: { category: 'shoes', brand: 'Bolt', price: 75 } },
    { key: 'parka', name: 'Winter parka', metadata: { category: 'coats', brand: 'Acme', price: 300 } },
  ];
  // Searchable once the delta serves them.
  const ids = await storedSearchable(
    t.demo,
    items.map(({ key: _k, ...i }) => i),
  );
  id = Object.fromEntries(items.map((i, k) => [i.key, ids[k] as string]));
}, 90_000);
afterAll(() => t.stop());

describe('facets', () => {
  it('counts each value over all matches, not only the page, and gives min and max of numbers', async () => {
    const r = await search({ query: 'running', limit: 1, facets: ['category', 'metadata.brand', 'price', 'in_stock', 'tags'] });
    // trail, runjacket, cap, fish (name); road (description).
    expect(r.body.total).toBe(5);
    expect(hits(r)).toHaveLength(1);
    const f = r.body.facets;
    expect(f.category).toEqual({
      count: 5,
      values: [
        { value: 'shoes', count: 2 },
        { value: 'hats', count: 1 },
        { value: 'jackets', count: 1 },
        { value: 'tees', count: 1 },
      ],
      values_truncated: false,
      min: null,
      max: null,
    });
    expect(f.brand.values).toEqual([
      { value: 'Bolt', count: 2 },
      { value: 'Cog', count: 2 },
      { value: 'Acme', count: 1 },
    ]);
    // A number-valued key: its range (the tee's price is a string, counted as a value).
    expect(f.price).toMatchObject({ count: 4, min: 89, max: 150, values: [{ value: '12', count: 1 }] });
    expect(f.in_stock).toMatchObject({ count: 1, values: [{ value: true, count: 1 }] });
    // A list counts each element.
    expect(f.tags.values).toEqual([
      { value: 'outdoor', count: 1 },
      { value: 'running', count: 1 },
    ]);
    // The next page answers the same facets.
    const next = await search({ query: 'running', limit: 1, facets: ['category', 'metadata.brand', 'price', 'in_stock', 'tags'], starting_after: r.body.next_cursor });
    expect(next.body.facets).toEqual(f);
    // Without facets asked for, none are answered.
    expect((await search({ query: 'running' })).body.facets).toBeUndefined();
    // A key Object.prototype has is answered like any other.
    const odd = await search({ query: 'running', limit: 1, facets: ['__proto__', 'category'] });
    expect(Object.keys(odd.body.facets)).toEqual(['__proto__', 'category']);
    expect(odd.body.facets.category).toEqual(f.category);
  });

  it('counts with the filters applied', async () => {
    const r = await search({ query: 'running', limit: 1, facets: ['category', 'brand'], filters: { brand: ['Bolt', 'Cog'] } });
    expect(r.body.total).toBe(4);
    expect(r.body.facets.category.values).toEqual([
      { value: 'hats', count: 1 },
      { value: 'jackets', count: 1 },
      { value: 'shoes', count: 1 },
      { value: 'tees', count: 1 },
    ]);
    expect(r.body.facets.brand.values).toEqual([
      { value: 'Bolt', count: 2 },
      { value: 'Cog', count: 2 },
    ]);
    const listed = await search({ query: '', facets: ['category'], filters: [{ field: 'metadata.price', op: 'gte', value: 100 }] });
    expect(listed.body.facets.category.values).toEqual([
      { value: 'jackets', count: 2 },
      { value: 'coats', count: 1 },
      { value: 'shoes', count: 1 },
    ]);
  });

  it('works in every mode and with a context', async () => {
    for (const mode of ['hybrid', 'semantic'] as const) {
      const r = await search({ query: 'running', mode, facets: ['category'] });
      const counted = (r.body.facets.category.values as { count: number }[]).reduce((a, v) => a + v.count, 0);
      expect(counted, mode).toBe(r.body.total);
    }
    const ctx = (await P('POST', '/api/contexts', { name: 'facets' })).body.id as number;
    const r = await search({ query: 'running', limit: 2, context_id: ctx, facets: ['brand'], highlight: true });
    expect(r.body.facets.brand.values).toEqual([
      { value: 'Bolt', count: 2 },
      { value: 'Cog', count: 2 },
      { value: 'Acme', count: 1 },
    ]);
    expect(hits(r).every((h) => h.highlight !== undefined)).toBe(true);
    expect(hits(r).some((h) => h.highlight?.name.includes('<em>'))).toBe(true);
  });

  it('counts a disjunctive facet without the filters on its own key, the others applied (a multi-select facet list)', async () => {
    const brands = [
      { value: 'Bolt', count: 2 },
      { value: 'Cog', count: 2 },
      { value: 'Acme', count: 1 },
    ];
    const body = { query: 'running', limit: 1, facets: ['category'], disjunctive_facets: ['brand'], filters: { brand: ['Bolt'] } };
    const r = await search(body);
    // The hits, total and other facets keep the brand filter; brand counts every brand the query matches.
    expect(r.body.total).toBe(2);
    expect(Object.keys(r.body.facets)).toEqual(['category', 'brand']);
    expect(r.body.facets.category.values).toEqual([
      { value: 'hats', count: 1 },
      { value: 'shoes', count: 1 },
    ]);
    expect(r.body.facets.brand.values).toEqual(brands);
    expect(r.body.facets.brand.count).toBe(5);
    // The next page, a context's search and a sorted one answer the same facets.
    expect((await search({ ...body, starting_after: r.body.next_cursor })).body.facets).toEqual(r.body.facets);
    const ctx = (await P('POST', '/api/contexts', { name: 'disjunctive facets' })).body.id as number;
    expect((await search({ ...body, context_id: ctx })).body.facets).toEqual(r.body.facets);
    expect((await search({ ...body, sort: { field: 'metadata.price' } })).body.facets).toEqual(r.body.facets);
    // Clauses: each disjunctive key drops its own clause and keeps the other's.
    const both = await search({
      query: 'running',
      disjunctive_facets: ['brand', 'category'],
      filters: [
        { field: 'metadata.brand', op: 'in', value: ['Bolt'] },
        { field: 'metadata.category', op: 'neq', value: 'hats' },
      ],
    });
    expect(ids(both)).toEqual([id.road]);
    expect(both.body.facets.brand.values).toEqual([
      { value: 'Cog', count: 2 },
      { value: 'Acme', count: 1 },
      { value: 'Bolt', count: 1 },
    ]);
    expect(both.body.facets.category.values).toEqual([
      { value: 'hats', count: 1 },
      { value: 'shoes', count: 1 },
    ]);
    // A disjunctive key no filter names counts as a facet does; so does one without filters at all.
    const plain = await search({ query: 'running', disjunctive_facets: ['category'], filters: { brand: ['Bolt'] } });
    expect(plain.body.facets.category).toEqual(r.body.facets.category);
    expect((await search({ query: 'running', disjunctive_facets: ['brand'] })).body.facets.brand.values).toEqual(brands);
    // In the shorthand's metadata object too.
    const inMetadata = await search({ query: 'running', disjunctive_facets: ['brand'], filters: { metadata: { brand: 'Cog' } } });
    expect(inMetadata.body.total).toBe(2);
    expect(inMetadata.body.facets.brand.values).toEqual(brands);
  });

  it('refuses more than 5 disjunctive facets, or more than 20 facets in all (400 in the envelope)', async () => {
    const six = await t.demo.core('POST', '/v1/search', { query: 'x', disjunctive_facets: ['a', 'b', 'c', 'd', 'e', 'f'] });
    expectCoreError(six, 400, 'invalid_request_error', 'validation_error');
    expect(Object.keys(six.body.error.details.fieldErrors)).toEqual(['disjunctive_facets']);
    const keys = Array.from({ length: 20 }, (_, k) => `k${k}`);
    expect((await t.demo.core('POST', '/v1/search', { query: 'x', facets: keys, disjunctive_facets: ['k0', 'k1'] })).status).toBe(200);
    const many = await t.demo.core('POST', '/v1/search', { query: 'x', facets: keys, disjunctive_facets: ['k20'] });
    expectCoreError(many, 400, 'invalid_request_error', 'validation_error');
    expect(Object.keys(many.body.error.details.fieldErrors)).toEqual(['disjunctive_facets']);
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: 'x', disjunctive_facets: ['metadata.'] }), 400, 'invalid_request_error', 'validation_error');
  });

  it('refuses a facet that is no metadata key (400 in the envelope)', async () => {
    const r = await t.demo.core('POST', '/v1/search', { query: 'x', facets: ['brand', 'metadata.'] });
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    expect(Object.keys(r.body.error.details.fieldErrors)).toEqual(['facets.1']);
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: 'x', facets: [''] }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: 'x', facets: 'category' }), 400, 'invalid_request_error', 'validation_error');
  });
});

describe('highlighting and snippets', () => {
  it('marks the matched words of the name, stemmed, as a prefix and with a typo', async () => {
    const stemmed = await search({ query: 'runs', highlight: true, filters: { category: 'jackets' } });
    expect(hits(stemmed).map((h) => h.highlight)).toEqual([{ name: '<em>Running</em> jacket', description: 'Bright &amp; light' }]);
    const typoPrefix = await search({ query: 'runing jack', highlight: true, filters: { category: 'jackets' } });
    expect(hits(typoPrefix).find((h) => h.id === id.runjacket)?.highlight?.name).toBe('<em>Running</em> <em>jacket</em>');
    expect(hits(typoPrefix).find((h) => h.id === id.rain)?.highlight).toEqual({ name: 'Rain <em>jacket</em>', description: 'Waterproof shell' });
    // Not asked for: no highlight.
    expect(hits(await search({ query: 'runs' }))[0]?.highlight).toBeUndefined();
  });

  it('marks the opening words of a name that a query of stop words only found', async () => {
    // "The Who" is stop words only: no index term matches it, the names that begin with it do
    // (until 2026-12-07 such a hit showed nothing marked). Its description holds them too, unmarked:
    // what matched is the name's opening.
    const made = await t.demo.core('POST', '/v1/items', [{ name: 'The Who: Live at Leeds', description: 'The Who, live in 1970', metadata: { category: 'albums' } }]);
    expect(made.status).toBe(201);
    const album = (made.body.data as { id: string }[])[0]?.id as string;
    try {
      for (const mode of ['keyword', 'hybrid']) {
        const r = await until(
          () => t.demo.core('POST', '/v1/search', { mode, query: 'The Who', highlight: true, filters: { category: 'albums' } }),
          (x) => x.body.data?.length === 1,
          20_000,
        );
        expect((r.body.data as Hit[])[0]?.highlight, mode).toEqual({ name: '<em>The</em> <em>Who</em>: Live at Leeds', description: 'The Who, live in 1970' });
      }
    } finally {
      expect((await t.demo.core('DELETE', `/v1/items/${album}`)).status).toBe(200);
    }
  });

  it('HTML-escapes the text, not the tags, and takes other tags', async () => {
    const r = await search({ query: 'running tee', highlight: true, filters: { category: 'tees' } });
    expect(hits(r)[0]?.highlight).toEqual({
      name: 'Fish &amp; &lt;Chips&gt; &quot;<em>running</em>&quot; <em>tee</em>',
      description: 'A &lt;b&gt;bold&lt;/b&gt; <em>tee</em> &amp; more',
    });
    const tagged = await search({ query: 'running tee', highlight: true, highlight_tags: { pre: '<mark class="hit">', post: '</mark>' }, filters: { category: 'tees' } });
    expect(hits(tagged)[0]?.highlight?.name).toBe('Fish &amp; &lt;Chips&gt; &quot;<mark class="hit">running</mark>&quot; <mark class="hit">tee</mark>');
  });

  it('snippets a long description around its matched words', async () => {
    const r = await search({ query: 'muddy hills', highlight: true });
    const snip = hits(r).find((h) => h.id === id.road)?.highlight?.description as string;
    expect(snip.startsWith('…')).toBe(true);
    expect(snip).toContain('<em>muddy</em> <em>hills</em>');
    expect(
      snip
        .replace(/<\/?em>|…/g, '')
        .split(/\s+/)
        .filter(Boolean).length,
    ).toBeLessThanOrEqual(20);
    // An item without a description: null.
    const cap = await search({ query: 'cap', highlight: true });
    expect(hits(cap)[0]?.highlight).toEqual({ name: 'Running <em>cap</em>', description: null });
  });

  it("chooses a snippet from a long description's first 5,000 characters, and from fewer on a page of more than 20 hits", async () => {
    // The matched word at character 3,000: within a page of 20's 5,000 characters, not within a page of 100's 1,000.
    const description = `${'fell '.repeat(600)}gaiter ${'fell '.repeat(400)}`;
    const made = await t.demo.core('POST', '/v1/items', [{ name: 'Snow gaiter', description, metadata: { category: 'gaiters' } }]);
    expect(made.status).toBe(201);
    const gaiter = (made.body.data as { id: string }[])[0]?.id as string;
    const snip = async (limit: number) => {
      const r = await until(
        () => t.demo.core('POST', '/v1/search', { mode: 'keyword', query: 'gaiter', highlight: true, limit }),
        (x) => x.body.data?.length === 1,
        20_000,
      );
      return (r.body.data as Hit[])[0]?.highlight?.description as string;
    };
    try {
      // The match in the middle of its 20 words: 9 before it, 10 after.
      expect(await snip(20)).toBe(`…${'fell '.repeat(9)}<em>gaiter</em>${' fell'.repeat(10)}…`);
      expect(await snip(100)).toBe(`${'fell '.repeat(19)}fell…`);
      expect(await snip(25)).toBe(await snip(20));
    } finally {
      expect((await t.demo.core('DELETE', `/v1/items/${gaiter}`)).status).toBe(200);
    }
  });

  it('chooses a snippet from characters that hold a matched word ending at their last one', async () => {
    // "crampon" ends at the 1,000th character: within what a page of 100 chooses from, the last of
    // its 20 words (until 2026-12-07 the cut fell before it, and its snippet showed no match).
    const description = `${'fell '.repeat(198)}ax crampon ${'fell '.repeat(400)}`;
    expect(description.indexOf('crampon') + 'crampon'.length).toBe(1000);
    const made = await t.demo.core('POST', '/v1/items', [{ name: 'Ice spikes', description, metadata: { category: 'spikes' } }]);
    expect(made.status).toBe(201);
    const spikes = (made.body.data as { id: string }[])[0]?.id as string;
    try {
      const r = await until(
        () => t.demo.core('POST', '/v1/search', { mode: 'keyword', query: 'crampon', highlight: true, limit: 100 }),
        (x) => x.body.data?.length === 1,
        20_000,
      );
      expect((r.body.data as Hit[])[0]?.highlight?.description).toBe(`…${'fell '.repeat(18)}ax <em>crampon</em>…`);
    } finally {
      expect((await t.demo.core('DELETE', `/v1/items/${spikes}`)).status).toBe(200);
    }
  });

  it('refuses tags without highlight, and tags that are not strings (400)', async () => {
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: 'x', highlight_tags: { pre: '[', post: ']' } }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: 'x', highlight: true, highlight_tags: { pre: 1, post: ']' } }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: 'x', highlight: 'yes' }), 400, 'invalid_request_error', 'validation_error');
  });
});

describe('filters on any metadata key', () => {
  const browse = async (filters: unknown) => new Set(ids(await search({ query: '', limit: 100, filters })));
  const of = (...keys: string[]) => new Set(keys.map((k) => id[k]));
  const price = (op: string, value: unknown) => browse([{ field: 'metadata.price', op, value }]);

  it('takes every operator on metadata.<key>', async () => {
    expect(await price('eq', 129)).toEqual(of('trail'));
    // neq also holds where the key is absent (the cap) or of another kind (the tee's '12').
    expect(await price('neq', 129)).toEqual(of('road', 'rain', 'runjacket', 'socks', 'cap', 'fish', 'sneaker', 'trainer', 'parka'));
    expect(await price('in', [19, 60, '12'])).toEqual(of('socks', 'sneaker', 'fish'));
    expect(await price('gt', 129)).toEqual(of('runjacket', 'rain', 'parka'));
    expect(await price('gte', 129)).toEqual(of('trail', 'runjacket', 'rain', 'parka'));
    expect(await price('lt', 75)).toEqual(of('socks', 'sneaker'));
    expect(await price('lte', 75)).toEqual(of('socks', 'sneaker', 'trainer'));
    expect(await price('exists', false)).toEqual(of('cap'));
    expect(await price('exists', true)).toEqual(of('trail', 'road', 'rain', 'runjacket', 'socks', 'fish', 'sneaker', 'trainer', 'parka'));
    // Strings, booleans and lists (an element matches).
    expect(await browse([{ field: 'metadata.brand', op: 'eq', value: 'Bolt' }])).toEqual(of('road', 'cap', 'trainer'));
    expect(await browse([{ field: 'metadata.in_stock', op: 'eq', value: true }])).toEqual(of('cap'));
    expect(await browse([{ field: 'metadata.tags', op: 'eq', value: 'outdoor' }])).toEqual(of('trail'));
    // Clauses all hold; with a query too.
    expect(
      await browse([
        { field: 'metadata.category', op: 'eq', value: 'shoes' },
        { field: 'metadata.price', op: 'lt', value: 100 },
      ]),
    ).toEqual(of('road', 'sneaker', 'trainer'));
    expect(new Set(ids(await search({ query: 'running', filters: [{ field: 'metadata.brand', op: 'in', value: ['Acme', 'Cog'] }] })))).toEqual(of('trail', 'runjacket', 'fish'));
  });

  it('keeps the shorthand object working', async () => {
    expect(await browse({ category: 'shoes', price: { lte: 80 } })).toEqual(of('sneaker', 'trainer'));
    expect(await browse({ metadata: { brand: 'Cog' } })).toEqual(of('runjacket', 'fish', 'sneaker'));
    // A list-valued key matches when it holds the value, as clause eq does.
    expect(await browse({ metadata: { tags: 'running' } })).toEqual(await browse([{ field: 'metadata.tags', op: 'eq', value: 'running' }]));
    expect((await browse({ metadata: { tags: 'running' } })).has(id.trail as string)).toBe(true);
    // A key Object.prototype also has is the item's own or absent.
    expect(await browse({ metadata: { constructor: 'x' } })).toEqual(new Set());
  });

  it('refuses bad clauses with 400 naming the field, never 500', async () => {
    const bad = async (filters: unknown, field: string) => {
      const r = await t.demo.core('POST', '/v1/search', { query: '', filters });
      expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
      expect(Object.keys(r.body.error.details.fieldErrors), JSON.stringify(r.body)).toContain(field);
    };
    await bad([{ field: 'metadata.price', op: 'gt', value: 'cheap' }], 'filters.0.value');
    await bad([{ field: 'metadata.price', op: 'in', value: 5 }], 'filters.0.value');
    await bad([{ field: 'metadata.price', op: 'exists', value: 'yes' }], 'filters.0.value');
    await bad([{ field: 'metadata.price', op: 'like', value: 5 }], 'filters.0.op');
    await bad([{ field: 'price', op: 'eq', value: 5 }], 'filters.0.field');
    await bad([{ field: 'metadata.price', op: 'eq', value: 5, extra: 1 }], 'filters.0.extra');
    await bad({ colour: 'red' }, 'filters.colour');
    await bad('shoes', 'filters');
    await bad(
      Array.from({ length: 21 }, () => ({ field: 'metadata.a', op: 'exists', value: true })),
      'filters',
    );
  });
});

describe('sort by a numeric key', () => {
  const pages = async (body: Record<string, unknown>) => {
    const seen: Hit[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 20; n++) {
      const r = await search({ query: '', limit: 3, ...body, ...(cursor ? { starting_after: cursor } : {}) });
      seen.push(...hits(r));
      cursor = r.body.next_cursor ?? undefined;
      expect(r.body.has_more).toBe(cursor !== undefined);
      if (!cursor) break;
    }
    return seen;
  };

  it('orders by the key, ascending or descending, items without a number last, over stable cursors', async () => {
    const asc = await pages({ sort: { field: 'metadata.price', order: 'asc' } });
    expect(asc.map((h) => h.id)).toEqual([id.socks, id.sneaker, id.trainer, id.road, id.trail, id.runjacket, id.rain, id.parka, id.cap, id.fish].map(String));
    const desc = await pages({ sort: { field: 'metadata.price', order: 'desc' } });
    expect(desc.map((h) => h.id)).toEqual([id.parka, id.rain, id.runjacket, id.trail, id.road, id.trainer, id.sneaker, id.socks, id.fish, id.cap].map(String));
    // Items without the key come last in id order, the sort's: the cap (lower id) before the tee ascending, after it descending.
    expect(Number(id.cap)).toBeLessThan(Number(id.fish));
  });

  it('sorts the matches of a query, with filters and facets, and keeps their relevance score', async () => {
    const r = await search({ query: 'running', sort: { field: 'metadata.price', order: 'desc' }, filters: [{ field: 'metadata.category', op: 'neq', value: 'tees' }], facets: ['category'] });
    expect(ids(r)).toEqual([id.runjacket, id.trail, id.road, id.cap].map(String));
    expect(r.body.total).toBe(4);
    expect(hits(r).every((h) => h.score > 0)).toBe(true);
    expect(r.body.facets.category.count).toBe(4);
  });

  it('refuses a cursor of another order, a sort with a context, and bad sorts (400)', async () => {
    const first = await search({ query: '', limit: 2, sort: { field: 'metadata.price', order: 'asc' } });
    const cursor = first.body.next_cursor as string;
    expectCoreError(
      await t.demo.core('POST', '/v1/search', { query: '', limit: 2, sort: { field: 'metadata.price', order: 'desc' }, starting_after: cursor }),
      400,
      'invalid_request_error',
      'validation_error',
    );
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: '', limit: 2, starting_after: cursor }), 400, 'invalid_request_error', 'validation_error');
    // The same sort, another search: its page would be another list's (was answered).
    const other = await t.demo.core('POST', '/v1/search', { mode: 'keyword', query: 'running', limit: 2, sort: { field: 'metadata.price', order: 'asc' }, starting_after: cursor });
    expectCoreError(other, 400, 'invalid_request_error', 'validation_error');
    expect(JSON.stringify(other.body)).toContain('This cursor is from another search');
    expect((await search({ query: '', limit: 2, sort: { field: 'metadata.price', order: 'asc' }, starting_after: cursor })).status).toBe(200);
    const relevance = await search({ query: '', limit: 2 });
    expectCoreError(
      await t.demo.core('POST', '/v1/search', { query: '', limit: 2, sort: { field: 'metadata.price' }, starting_after: relevance.body.next_cursor }),
      400,
      'invalid_request_error',
      'validation_error',
    );
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: '', sort: { field: 'metadata.price', order: 'up' } }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: '', sort: { field: 'name' } }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/search', { query: '', sort: { field: 'metadata.price' }, context_id: 1 }), 400, 'invalid_request_error', 'validation_error');
  });
});

describe('synonyms', () => {
  it('are added, used at query time, changed and removed on the Platform API', async () => {
    expect(ids(await search({ query: 'sneaker' }))).toEqual([id.sneaker]);
    const created = await P('POST', '/api/synonyms', { synonyms: ['sneaker', 'trainer'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ type: 'two_way', input: null, synonyms: ['sneaker', 'trainer'] });
    const sid = created.body.id as number;
    expect((await P('GET', `/api/synonyms/${sid}`)).body).toEqual(created.body);
    // Two-way: each finds the other (no rebuild), and the synonym is highlighted.
    expect(new Set(ids(await search({ query: 'sneaker' })))).toEqual(new Set([id.sneaker, id.trainer]));
    const back = await search({ query: 'trainer', highlight: true });
    expect(new Set(ids(back))).toEqual(new Set([id.sneaker, id.trainer]));
    expect(hits(back).find((h) => h.id === id.sneaker)?.highlight?.name).toBe('Classic <em>sneaker</em>');

    // One-way: parka finds jackets, a jacket query does not find the parka.
    const oneWay = await P('POST', '/api/synonyms', { type: 'one_way', input: 'parka', synonyms: ['jacket'] });
    expect(oneWay.status).toBe(201);
    expect(new Set(ids(await search({ query: 'parka' })))).toEqual(new Set([id.parka, id.rain, id.runjacket]));
    expect(ids(await search({ query: 'jacket' }))).not.toContain(id.parka);

    const list = await P('GET', '/api/synonyms?limit=1');
    // The Platform list envelope, as every Platform list (no Core `object` or `url`).
    expect(list.body).toEqual({ data: [created.body], has_more: true, next_cursor: String(sid) });
    expect((await P('GET', `/api/synonyms?starting_after=${sid}`)).body.data.map((s: { id: number }) => s.id)).toEqual([oneWay.body.id]);

    // Changed: the set now maps sneaker to nothing the catalog has but trainer... and a new word.
    const patched = await P('PATCH', `/api/synonyms/${sid}`, { synonyms: ['sneaker', 'sock'] });
    expect(patched.status).toBe(200);
    expect(new Set(ids(await search({ query: 'sneaker' })))).toEqual(new Set([id.sneaker, id.socks]));

    // Removed: gone from the next search.
    expect(await P('DELETE', `/api/synonyms/${sid}`)).toMatchObject({ status: 200, body: { id: sid, deleted: true } });
    expect(ids(await search({ query: 'sneaker' }))).toEqual([id.sneaker]);
    const gone = await P('GET', `/api/synonyms/${sid}`);
    expect(gone.status).toBe(404);
    expect(typeof gone.body.error).toBe('string');
    expect((await P('DELETE', `/api/synonyms/${sid}`)).status).toBe(404);
    expect(await P('DELETE', `/api/synonyms/${oneWay.body.id}`)).toMatchObject({ status: 200, body: { deleted: true } });

    // A phrase finds what holds all its words: "running shoe" for trainer finds the shoes (the
    // road runner's description holds both words), not every item that says running.
    const phrase = await P('POST', '/api/synonyms', { synonyms: ['trainer', 'running shoe'] });
    expect(phrase.status).toBe(201);
    const found = await search({ query: 'trainer', highlight: true });
    expect(new Set(ids(found))).toEqual(new Set([id.trainer, id.trail, id.road]));
    expect(hits(found).find((h) => h.id === id.trail)?.highlight?.name).toBe('Trail <em>running</em> <em>shoe</em>');
    expect(await P('DELETE', `/api/synonyms/${phrase.body.id}`)).toMatchObject({ status: 200, body: { deleted: true } });

    // A synonym scores as the word that brought it, not as a word of its own: "Classic sneaker"
    // scores for sneaker what it scored before classic became a synonym of it (was about twice).
    const alone = hits(await search({ query: 'sneaker', mode: 'keyword' }));
    const both = await P('POST', '/api/synonyms', { synonyms: ['sneaker', 'classic'] });
    const withSynonym = hits(await search({ query: 'sneaker', mode: 'keyword' }));
    expect(withSynonym.find((h) => h.id === id.sneaker)?.score).toBe(alone.find((h) => h.id === id.sneaker)?.score);
    expect(await P('DELETE', `/api/synonyms/${both.body.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
  });

  it('keep both of two changes made at once to different fields of a set (neither answered 200 and then lost)', async () => {
    for (let n = 0; n < 5; n++) {
      const made = await P('POST', '/api/synonyms', { synonyms: ['qoph', 'qophs set'] });
      expect(made.status).toBe(201);
      const at = `/api/synonyms/${made.body.id}`;
      const [a, b] = await Promise.all([P('PATCH', at, { synonyms: ['alef', 'bet', 'gimel'] }), P('PATCH', at, { type: 'one_way', input: 'zayin' })]);
      expect([a.status, b.status]).toEqual([200, 200]);
      // Whichever came first, the other kept its fields: until 2026-12-02 the later write put back the fields it had read.
      expect((await P('GET', at)).body).toMatchObject({ type: 'one_way', input: 'zayin', synonyms: ['alef', 'bet', 'gimel'] });
      expect((await P('DELETE', at)).status).toBe(200);
    }
  });

  it('write each change of a set to the audit trail (resource synonyms/<id>), as the rules that also change every search are', async () => {
    const prefix = t.demo.creds.api_key.split('_')[1];
    const made = await P('POST', '/api/synonyms', { synonyms: ['kettle', 'boiler'] });
    expect(made.status).toBe(201);
    const at = `/api/synonyms/${made.body.id}`;
    const patched = await P('PATCH', at, { synonyms: ['kettle', 'boiler', 'urn'] });
    expect(patched.status).toBe(200);
    expect(await P('DELETE', at)).toMatchObject({ status: 200, body: { deleted: true } });
    // Until 2026-12-07 a synonym set was no resource of the trail (400) and its changes left none.
    const trail = await P('GET', `/api/audit?resource=synonyms/${made.body.id}`);
    expect(trail.status, JSON.stringify(trail.body)).toBe(200);
    expect(trail.body.data.map((e: { action: string }) => e.action)).toEqual(['delete', 'update', 'create']);
    const [deletion, update, creation] = trail.body.data;
    expect(creation).toMatchObject({ actor: prefix, resource: `synonyms/${made.body.id}`, before: null, after: made.body });
    expect(update).toMatchObject({ actor: prefix, before: made.body, after: patched.body });
    expect(deletion).toMatchObject({ actor: prefix, before: patched.body, after: null });
    expect(creation.id).toBeLessThan(update.id);
    expect(update.id).toBeLessThan(deletion.id);
  });

  it('take a PATCH that changes nothing as no change: updated_at as it was, no audit entry (as a rule)', async () => {
    const made = await P('POST', '/api/synonyms', { type: 'one_way', input: 'Cagoule', synonyms: ['anorak', 'Rain coat'] });
    expect(made.status).toBe(201);
    const at = `/api/synonyms/${made.body.id}`;
    // A second later, so that a write would show in updated_at (whole seconds).
    await nextSecond();
    // The fields as they are, as a retried PATCH or a form saved unchanged sends them (spelled as the set keeps them once trimmed).
    for (const body of [{ synonyms: ['anorak', 'Rain coat'] }, { type: 'one_way', input: ' Cagoule ' }, { type: 'one_way', input: 'Cagoule', synonyms: ['anorak ', 'Rain coat'] }]) {
      expect(await P('PATCH', at, body), JSON.stringify(body)).toMatchObject({ status: 200, body: made.body });
    }
    expect((await P('GET', at)).body).toEqual(made.body);
    // Until 2026-12-07 each wrote the set again with a new updated_at (and, with the trail, an entry whose before and after differed only in it).
    const trail = await P('GET', `/api/audit?resource=synonyms/${made.body.id}`);
    expect(trail.body.data.map((e: { action: string }) => e.action)).toEqual(['create']);
    // A change that does change the set is written.
    const changed = await P('PATCH', at, { synonyms: ['anorak'] });
    expect(changed.body).toMatchObject({ synonyms: ['anorak'] });
    expect(changed.body.updated_at).toBeGreaterThan(made.body.updated_at);
    expect((await P('DELETE', at)).status).toBe(200);
  });

  it("keep a one-way set's input as a synonym when a PATCH makes the set two-way (unless the change sends the synonyms or input: null)", async () => {
    const oneWay = async (synonyms: string[]) => {
      const r = await P('POST', '/api/synonyms', { type: 'one_way', input: 'parka', synonyms });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return `/api/synonyms/${r.body.id}`;
    };
    const at = await oneWay(['anorak', 'windcheater']);
    // Until 2026-12-03 this answered 200 with ["anorak", "windcheater"]: "parka" was gone unsaid.
    expect(await P('PATCH', at, { type: 'two_way' })).toMatchObject({ status: 200, body: { type: 'two_way', input: null, synonyms: ['parka', 'anorak', 'windcheater'] } });
    expect((await P('GET', at)).body).toMatchObject({ type: 'two_way', input: null, synonyms: ['parka', 'anorak', 'windcheater'] });
    expect((await P('DELETE', at)).status).toBe(200);
    // The synonyms sent replace the set's, and `input: null` says the input goes.
    const sent = await oneWay(['anorak', 'windcheater']);
    expect(await P('PATCH', sent, { type: 'two_way', synonyms: ['anorak', 'cagoule'] })).toMatchObject({ status: 200, body: { input: null, synonyms: ['anorak', 'cagoule'] } });
    const dropped = await oneWay(['anorak', 'windcheater']);
    expect(await P('PATCH', dropped, { type: 'two_way', input: null })).toMatchObject({ status: 200, body: { input: null, synonyms: ['anorak', 'windcheater'] } });
    // An input beside 20 synonyms would be a 21st: refused, the set as it was.
    const full = await oneWay('alfa bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango'.split(' '));
    const over = await P('PATCH', full, { type: 'two_way' });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatch(/at most 20 synonyms in a set/);
    expect((await P('GET', full)).body).toMatchObject({ type: 'one_way', input: 'parka' });
    for (const path of [sent, dropped, full]) expect((await P('DELETE', path)).status).toBe(200);
  });

  it('take admin keys only (api-decisions.md: items keys call item search and index status), and refuse bad sets with 400', async () => {
    const items = (await P('POST', '/api/api-keys', { name: 'merch', scopes: ['items'] })).body.key as string;
    const events = (await P('POST', '/api/api-keys', { name: 'ev', scopes: ['events'] })).body.key as string;
    // A security review's find: an items key could change every search's results.
    expect((await P('POST', '/api/synonyms', { synonyms: ['tee', 'shirt'] }, items)).status).toBe(403);
    expect((await P('GET', '/api/analytics/searches', undefined, items)).status).toBe(403);
    const made = await P('POST', '/api/synonyms', { synonyms: ['tee', 'shirt'] });
    expect(made.status).toBe(201);
    for (const key of [items, events]) {
      expect((await P('GET', '/api/synonyms', undefined, key)).status).toBe(403);
      expect((await P('DELETE', `/api/synonyms/${made.body.id}`, undefined, key)).status).toBe(403);
    }
    expect(await P('DELETE', `/api/synonyms/${made.body.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
    for (const body of [
      { synonyms: ['only one'] },
      { synonyms: ['b', 'b'] },
      { type: 'one_way', synonyms: ['x'] },
      { type: 'two_way', input: 'x', synonyms: ['b', 'c'] },
      { synonyms: ['!!!', 'b'] },
      { synonyms: ['tee\u0000shirt', 'b'] },
      { type: 'one_way', input: 'tee\nshirt', synonyms: ['b'] },
      { synonyms: 'a,b' },
      { synonyms: ['b', 'c'], extra: true },
      { type: 'three_way', synonyms: ['b', 'c'] },
    ]) {
      const r = await P('POST', '/api/synonyms', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(typeof r.body.error, JSON.stringify(r.body)).toBe('string');
    }
    expect((await P('POST', '/api/synonyms', { synonyms: ['tee\u0000shirt', 'b'] })).body.error).toMatch(/control characters/);
    expect((await P('PATCH', '/api/synonyms/999', { synonyms: ['b', 'c'] })).status).toBe(404);
    expect((await P('GET', '/api/synonyms/abc')).status).toBe(400);
    // Phrases that are one at query time are one synonym: too few left is 400.
    for (const body of [{ synonyms: ['Dup', 'dup'] }, { type: 'one_way', input: 'dup', synonyms: ['DUP'] }]) expect((await P('POST', '/api/synonyms', body)).status, JSON.stringify(body)).toBe(400);
    const folded = await P('POST', '/api/synonyms', { synonyms: ['Running shoes', 'running shoe', 'sneaker'] });
    expect(folded.body.synonyms).toEqual(['Running shoes', 'sneaker']);
    expect(await P('DELETE', `/api/synonyms/${folded.body.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
    expect(await P('GET', '/api/synonyms/999')).toMatchObject({ status: 404, body: { error: 'No synonym set 999.' } });
    // A PATCH that changes nothing is refused, as every Platform PATCH is.
    const set = await P('POST', '/api/synonyms', { synonyms: ['b', 'c'] });
    const empty = await P('PATCH', `/api/synonyms/${set.body.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/at least one field/);
    expect(await P('DELETE', `/api/synonyms/${set.body.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
  });
});

describe('search analytics', () => {
  const report = async (q = '') => {
    const r = await P('GET', `/api/analytics/searches${q}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };

  // Before the test below, whose maintenance pass folds the minutes up to two minutes from now.
  it("counts a first page a context's rules left empty as a search without results (its total counts the matches before them)", async () => {
    expect((await t.demo.core('POST', '/v1/items', { name: 'Zephyrine kettle', metadata: { category: 'zz-kettles' } })).status).toBe(201);
    const ctx = (await P('POST', '/api/contexts', { name: 'no kettles' })).body.id as number;
    expect((await P('POST', '/api/rules', { name: 'no zz-kettles', context_id: ctx, conditions: [{ field: 'category', op: 'eq', value: 'zz-kettles' }], boost: 0 })).status).toBe(201);
    await until(
      () => search({ query: 'zephyrine' }),
      (x) => x.body.data?.length === 1,
    );
    const before = await report('?limit=100');
    // Control changes serve within seconds: search with the context until the rule applies.
    let n = 0;
    const emptied = await until(
      () => {
        n++;
        return search({ query: 'zephyrine', context_id: ctx });
      },
      (x) => x.body.data?.length === 0,
    );
    expect(emptied.body.total).toBe(1);
    // The searches before the rule applied served the kettle: no searches without results.
    const after = await report('?limit=100');
    expect(after.totals.searches - before.totals.searches).toBe(n);
    expect(after.totals.no_results - before.totals.no_results).toBe(1);
    expect(after.no_result_queries).toContainEqual(expect.objectContaining({ query: 'zephyrine', no_results: 1 }));
  });

  it('counts searches, searches without results, and clicks and conversions per query from events with the request_id', async () => {
    const sent: Record<string, string[]> = { quasar: [], nebulaxx: [] };
    const created = await t.demo.core('POST', '/v1/items', { name: 'Quasar lamp', metadata: { category: 'lamps' } });
    await until(
      () => t.demo.core('POST', '/v1/search', { query: 'lamp', mode: 'keyword' }),
      (x) => x.body.data?.length === 1,
    );
    const before = await report();
    const base = before.totals.searches as number;
    // Three searches for quasar (written three ways: one normalised query), two without results.
    for (const q of ['quasar', 'Quasar!', '  QUASAR ']) sent.quasar?.push((await search({ query: q })).body.request_id);
    for (let n = 0; n < 2; n++) {
      const r = await search({ query: 'nebulaxx' });
      expect(r.body.total).toBe(0);
      sent.nebulaxx?.push(r.body.request_id);
    }
    const [q1, q2] = sent.quasar as [string, string];
    const item = created.body.id as string;
    const ev = await t.demo.core('POST', '/v1/events', [
      { type: 'click', user_id: 'u1', item_id: item, request_id: q1 },
      { type: 'click', user_id: 'u1', item_id: item, request_id: q1 },
      { type: 'purchase', user_id: 'u1', item_id: item, request_id: q1 },
      { type: 'click', user_id: 'u2', item_id: item, request_id: q2 },
      // Names no search: not counted.
      { type: 'click', user_id: 'u3', item_id: item, request_id: '00000000-0000-4000-8000-000000000000' },
      { type: 'click', user_id: 'u3', item_id: item },
    ]);
    expect(ev.status, JSON.stringify(ev.body)).toBe(201);

    const after = await report('?limit=100');
    expect(after.totals.searches - base).toBe(5);
    expect(after.totals.no_results - before.totals.no_results).toBe(2);
    const quasar = after.top_queries.find((q: { query: string }) => q.query === 'quasar');
    expect(quasar).toEqual({
      query: 'quasar',
      searches: 3,
      no_results: 0,
      clicks: 3,
      conversions: 1,
      click_through_rate: 0.666667,
      conversion_rate: 0.333333,
      events: { click: 3, purchase: 1 },
      searches_with: { click: 2, purchase: 1 },
    });
    expect(after.no_result_queries).toContainEqual({ query: 'nebulaxx', searches: 2, no_results: 2 });
    expect(after.top_queries.find((q: { query: string }) => q.query === 'nebulaxx')).toMatchObject({ searches: 2, click_through_rate: 0 });
    // Other event types as click and conversion.
    const other = await report('?limit=100&click_type=purchase&conversion_type=click');
    expect(other.top_queries.find((q: { query: string }) => q.query === 'quasar')).toMatchObject({ clicks: 1, conversions: 3, click_through_rate: 0.333333, conversion_rate: 0.666667 });
    // limit cuts the lists; a range without these days has none of them.
    expect((await report('?limit=1')).top_queries).toHaveLength(1);
    const empty = await report('?from=2020-01-01&to=2020-01-31');
    expect(empty).toMatchObject({ from: '2020-01-01', to: '2020-01-31', totals: { searches: 0 }, top_queries: [], no_result_queries: [] });
    // Every search of this file was served from the day it started to today: the same day unless
    // the run crossed midnight UTC (then a report of today alone would miss yesterday's searches).
    const today = dayOf(Math.floor(nowMs() / 1000));
    expect((await report(`?from=${dayOf(startedAt)}&to=${today}`)).totals.searches).toBe(after.totals.searches);
    expect((await report(`?from=${startedAt}`)).totals.searches).toBe(after.totals.searches);

    // The maintenance pass folds them into the counters once their minute is over by
    // FOLD_LAG_SECONDS (its clock moved on here); the report counts the same.
    const real = nowMs();
    const restore = setClock({ nowMs: () => real + (FOLD_LAG_SECONDS + 61) * 1000 });
    let pass: { folded?: number };
    try {
      pass = (await t.stack.maintain()) as { folded?: number };
    } finally {
      restore();
    }
    expect(pass.folded).toBeGreaterThanOrEqual(5);
    // The same counts (its default range moves on a day if midnight UTC passed since `after`).
    expect(await report('?limit=100')).toEqual({ ...after, from: expect.any(String), to: expect.any(String) });
    expect((await t.stack.maintain()) as { folded?: number }).toMatchObject({ folded: 0 });
  });

  it('refuses bad ranges and parameters with 400 in the Platform envelope', async () => {
    for (const q of ['?from=2026-02-30', '?from=yesterday', '?from=2026-01-10&to=2026-01-01', '?from=2025-01-01&to=2025-12-31', '?limit=0', '?limit=1000', '?click_type=Click', '?bogus=1']) {
      const r = await P('GET', `/api/analytics/searches${q}`);
      expect(r.status, q).toBe(400);
      expect(typeof r.body.error, q).toBe('string');
    }
    const events = (await P('POST', '/api/api-keys', { name: 'ev2', scopes: ['events'] })).body.key as string;
    expect((await P('GET', '/api/analytics/searches', undefined, events)).status).toBe(403);
    // At most 92 days: 2026-01-01 to 2026-04-02 is 92 days, one day more is refused.
    expect(await report('?from=2026-01-01&to=2026-04-02')).toMatchObject({ from: '2026-01-01', to: '2026-04-02' });
    expect((await P('GET', '/api/analytics/searches?from=2026-01-01&to=2026-04-03')).status).toBe(400);
  });

  it('counts the 7 days up to today by default', async () => {
    // Today as read before and after the request: the server's is one of them (both, but at midnight UTC).
    const before = Math.floor(nowMs() / 1000);
    const r = await report();
    const after = Math.floor(nowMs() / 1000);
    const today = dayOf(after) === r.to ? after : before;
    expect(r).toMatchObject({ from: dayOf(today - 6 * 86_400), to: dayOf(today) });
    expect(await report('?to=2026-03-01')).toMatchObject({ from: '2026-02-23', to: '2026-03-01' });
  });
});

describe('Chinese, Japanese and Korean text', () => {
  it('finds a word inside a run written without spaces, and marks it', async () => {
    const r = await t.demo.core('POST', '/v1/items', [
      { name: 'スマートフォンケース', description: 'iPhone用の耐衝撃ケース' },
      { name: '東京タワーの夜景ポスター', description: '東京の夜景を写した大判ポスター' },
      { name: '北京烤鸭礼盒', description: '正宗北京烤鸭' },
      { name: '서울 여행 가이드북', description: '서울에서 가볼 만한 곳' },
      { name: 'ランニング靴', description: '軽量' },
    ]);
    expect(r.status).toBe(201);
    const [phoneCase, tower, duck, seoul, shoes] = (r.body.data as { id: string }[]).map((i) => i.id);
    // Before pairs, "ケース" (case) matched only an item whose whole run it was.
    const found = await until(
      () => search({ query: 'ケース', highlight: true }),
      (x) => ids(x).includes(phoneCase as string),
      20_000,
    );
    expect(ids(found)).toEqual([phoneCase]);
    expect(hits(found)[0]?.highlight).toEqual({ name: 'スマートフォン<em>ケース</em>', description: 'iPhone用の耐衝撃<em>ケース</em>' });
    expect(ids(await search({ query: '夜景' }))).toEqual([tower]);
    expect(ids(await search({ query: '烤鸭', mode: 'hybrid' }))).toEqual([duck]);
    expect(ids(await search({ query: '서울' }))).toEqual([seoul]);
    // One character finds the letter wherever it is (here at a run's end).
    expect(ids(await search({ query: '靴', highlight: true }))).toEqual([shoes]);
  });
});

describe('Thai, Lao, Khmer and Burmese text', () => {
  it('finds a word inside a run written without spaces, and marks it', async () => {
    const r = await t.demo.core('POST', '/v1/items', [
      { name: 'หนังสือเรียนภาษาไทย', description: 'เรียนภาษาไทยง่ายนิดเดียว' },
      { name: 'รองเท้าวิ่งน้ำหนักเบา', description: 'เหมาะสำหรับการวิ่ง' },
      { name: 'ປຶ້ມພາສາລາວ' },
    ]);
    expect(r.status).toBe(201);
    const [book, shoes, lao] = (r.body.data as { id: string }[]).map((i) => i.id);
    const found = await until(
      () => search({ query: 'ภาษาไทย', highlight: true }),
      (x) => ids(x).includes(book as string),
      20_000,
    );
    expect(ids(found)).toEqual([book]);
    expect(hits(found)[0]?.highlight).toEqual({ name: 'หนังสือเรียน<em>ภาษาไทย</em>', description: 'เรียน<em>ภาษาไทย</em>ง่ายนิดเดียว' });
    expect(ids(await search({ query: 'รองเท้า' }))).toEqual([shoes]);
    expect(ids(await search({ query: 'วิ่ง', mode: 'hybrid' }))[0]).toBe(shoes);
    expect(ids(await search({ query: 'ລາວ' }))).toEqual([lao]);
  });
});

describe('metadata keys of any spelling', () => {
  it('are filtered on, counted and sorted by as items hold them (spaces, letters beyond ASCII, dots)', async () => {
    const r = await t.demo.core('POST', '/v1/items', [
      { name: 'Odd keys lamp', metadata: { 'sp ace': 'x', ünïcode: 'ja', 'a.b': 3, a: { b: 99 } } },
      { name: 'Odd keys stool', metadata: { 'sp ace': 'y', ünïcode: 'ja', 'a.b': 1 } },
    ]);
    expect(r.status).toBe(201);
    const [lamp, stool] = (r.body.data as { id: string }[]).map((i) => i.id);
    await until(
      () => search({ query: 'odd keys' }),
      (x) => ids(x).length === 2,
      20_000,
    );
    const q = (body: Record<string, unknown>) => search({ query: 'odd keys', ...body });
    expect(ids(await q({ filters: [{ field: 'metadata.sp ace', op: 'eq', value: 'x' }] }))).toEqual([lamp]);
    expect(ids(await q({ filters: [{ field: 'metadata.ünïcode', op: 'eq', value: 'ja' }] })).sort()).toEqual([lamp, stool].sort());
    // "metadata.a.b" is the top-level key "a.b" where the item has one, not the path into "a" (the lamp's 99).
    expect(ids(await q({ filters: [{ field: 'metadata.a.b', op: 'gte', value: 2 }] }))).toEqual([lamp]);
    const faceted = await q({ facets: ['sp ace', 'metadata.a.b'] });
    expect(faceted.body.facets['sp ace'].values).toEqual([
      { value: 'x', count: 1 },
      { value: 'y', count: 1 },
    ]);
    expect(faceted.body.facets['a.b']).toMatchObject({ count: 2, min: 1, max: 3 });
    expect(ids(await q({ sort: { field: 'metadata.a.b', order: 'asc' } }))).toEqual([stool, lamp]);
  });
});

describe('nested metadata keys (a dotted key is a path when no top-level key is spelled so)', () => {
  it('are filtered on, counted and sorted by, in Core search and the Platform item search', async () => {
    const r = await t.demo.core('POST', '/v1/items', [
      { name: 'Nested shelf', metadata: { dims: { w: 3, unit: 'cm' }, authors: [{ name: 'Ann' }, { name: 'Bo' }] } },
      { name: 'Nested desk', metadata: { dims: { w: 7, unit: 'in' }, authors: [{ name: 'Ann' }] } },
      { name: 'Nested chair', metadata: { 'dims.w': 5, dims: { w: 100, unit: 'cm' } } },
    ]);
    expect(r.status).toBe(201);
    const [shelf, desk, chair] = (r.body.data as { id: string }[]).map((i) => i.id);
    const q = (body: Record<string, unknown>) => search({ query: 'nested', ...body });
    await until(
      () => q({}),
      (x) => ids(x).length === 3,
      20_000,
    );
    expect(ids(await q({ filters: [{ field: 'metadata.dims.w', op: 'eq', value: 3 }] }))).toEqual([shelf]);
    // The chair's top-level "dims.w" (5) wins over its dims.w (100).
    expect(ids(await q({ filters: [{ field: 'metadata.dims.w', op: 'gte', value: 5 }] })).sort()).toEqual([desk, chair].sort());
    expect(ids(await q({ filters: [{ field: 'metadata.authors.name', op: 'eq', value: 'Bo' }] }))).toEqual([shelf]);
    expect(ids(await q({ filters: { metadata: { 'dims.unit': 'in' } } }))).toEqual([desk]);
    const faceted = await q({ facets: ['dims.w', 'metadata.dims.unit', 'authors.name'] });
    expect(faceted.body.facets['dims.w']).toMatchObject({ count: 3, values: [], min: 3, max: 7 });
    expect(faceted.body.facets['dims.unit'].values).toEqual([
      { value: 'cm', count: 2 },
      { value: 'in', count: 1 },
    ]);
    expect(faceted.body.facets['authors.name']).toMatchObject({
      count: 2,
      values: [
        { value: 'Ann', count: 2 },
        { value: 'Bo', count: 1 },
      ],
    });
    expect(ids(await q({ sort: { field: 'metadata.dims.w', order: 'desc' } }))).toEqual([desk, chair, shelf]);
    const platform = await P('POST', '/api/items/search', { query: 'nested', filters: [{ field: 'metadata.dims.unit', op: 'eq', value: 'cm' }] });
    expect(platform.status, JSON.stringify(platform.body)).toBe(200);
    expect((platform.body.data as { id: number | string }[]).map((i) => String(i.id)).sort()).toEqual([shelf, chair].sort());
  });
});
