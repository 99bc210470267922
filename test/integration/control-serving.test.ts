import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowMs, nowSeconds, setClock } from '../../shared/clock.ts';
import { makeTable, type TableRef } from '../../shared/data/client.ts';
import { ExperimentUser } from '../../shared/data/entities.ts';
import { storesFor } from '../../shared/data/index.ts';
import { getRow } from '../../shared/data/ops.ts';
import { onboardTenant } from '../../shared/domain/credentials.ts';
import { request, runningExperiment, startTestStack, TenantClient, type Api, type TestStack, until } from '../helpers/stack.ts';

/*
 * What a context does to recommendations and search over real HTTP: rules, segments,
 * experiments and rerank controls. The control cache is off (CONTROL_CACHE_MS=0) so each
 * change serves at once; its bound is a unit test.
 */
let t: TestStack;
let other: TenantClient;
let table: TableRef;
const P = (m: string, p: string, b?: unknown) => t.demo.platform(m, p, b);
type Rec = { item_id: string; item: { metadata: Record<string, unknown> }; explain?: Record<string, unknown> };
type Hit = { id: string; metadata: Record<string, unknown>; explain?: Record<string, unknown> };
const recs = async (q: string) => {
  const r = await t.demo.core('GET', `/v1/recommendations?${q}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r;
};
const search = async (body: Record<string, unknown>) => {
  const r = await t.demo.core('POST', '/v1/search', { query: 'lamp', mode: 'keyword', limit: 30, ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r;
};
const recIds = (r: Api) => (r.body.data as Rec[]).map((x) => x.item_id);
const hitIds = (r: Api) => (r.body.data as Hit[]).map((x) => x.id);
const brandsOfRecs = (r: Api) => (r.body.data as Rec[]).map((x) => x.item.metadata.brand);
const brandsOfHits = (r: Api) => (r.body.data as Hit[]).map((x) => x.metadata.brand);
const context = async (name: string): Promise<number> => (await P('POST', '/api/contexts', { name })).body.id;
const newRule = async (body: Record<string, unknown>) => {
  const r = await P('POST', '/api/rules', { name: 'rule', boost: 1, conditions: [], ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as number;
};

const brands = ['Acme', 'Bolt', 'Cog'];
const cats = ['lamps', 'tents', 'stoves', 'mugs'];
let items: string[] = [];

beforeAll(async () => {
  t = await startTestStack({ LOCAL_RETRY_DELAY_MS: '50', CONTROL_CACHE_MS: '0' });
  // 24 lamps: brand, category and sku each cycle, so every brand and category is among the popular ones.
  const r = await t.demo.core(
    'POST',
    '/v1/items',
    Array.from({ length: 24 }, (_, i) => ({
      name: `Camping lamp ${i}`,
      description: `lamp number ${i}`,
      metadata: { brand: brands[i % 3], category: cats[i % 4], sku: `sku-${i}`, spec: { watt: i } },
    })),
  );
  items = (r.body.data as { id: string }[]).map((x) => x.id);
  // Popularity: item k gets 30 - k views, so lower ids are more popular.
  const events: object[] = [];
  for (let k = 0; k < 24; k++) for (let n = 0; n < 30 - k; n++) events.push({ type: 'view', user_id: `crowd-${n}`, item_id: items[k] });
  for (let i = 0; i < events.length; i += 500) expect((await t.demo.core('POST', '/v1/events', events.slice(i, i + 500))).status).toBe(201);
  const endpoint = JSON.parse((await import('node:fs')).readFileSync(`${t.dataDir}/stack.json`, 'utf8')).dynamodb_endpoint as string;
  table = makeTable('recsearch-local', endpoint, 'us-east-1');
  const creds = await onboardTenant(storesFor(table).credentials, 'other', { base_url: t.base, console_url: t.base, auth_url: t.base });
  other = new TenantClient(t.base, creds);
  // Searchable once embedded (the delta serves them).
  await until(
    () => t.demo.core('POST', '/v1/search', { query: 'lamp', mode: 'keyword', limit: 100 }),
    (x) => x.body.data?.length === 24,
    20_000,
  );
}, 90_000);
afterAll(() => t.stop());

describe('rules', () => {
  it('an excluding rule removes matching items from recommendations and search of its context, and from nothing else', async () => {
    const home = await context('home');
    const elsewhere = await context('elsewhere');
    await newRule({ context_id: home, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Acme' }], boost: 0 });
    const inHome = await recs(`user_id=fresh-1&limit=20&context_id=${home}`);
    expect(recIds(inHome)).toHaveLength(16);
    expect(brandsOfRecs(inHome)).not.toContain('Acme');
    expect(brandsOfHits(await search({ context_id: home }))).not.toContain('Acme');
    expect(brandsOfHits(await search({ context_id: String(home), mode: 'hybrid' }))).not.toContain('Acme');
    for (const q of ['user_id=fresh-1&limit=20', `user_id=fresh-1&limit=20&context_id=${elsewhere}`]) expect(brandsOfRecs(await recs(q))).toContain('Acme');
    expect(brandsOfHits(await search({}))).toContain('Acme');
    expect(brandsOfHits(await search({ context_id: elsewhere }))).toContain('Acme');
  });

  it('a promoting rule lifts a matching item above better-scored ones; disabled or outside its window it does nothing', async () => {
    const ctx = await context('promo');
    const plain = recIds(await recs(`user_id=fresh-2&limit=10&context_id=${ctx}`));
    expect(plain[0]).toBe(items[0]);
    const target = items[9] as string;
    expect(plain.indexOf(target)).toBeGreaterThan(0);
    const id = await newRule({ context_id: ctx, conditions: [{ field: 'metadata.sku', op: 'eq', value: 'sku-9' }], boost: 10 });
    const boosted = await recs(`user_id=fresh-2&limit=10&context_id=${ctx}&explain=true`);
    expect(recIds(boosted)[0]).toBe(target);
    expect((boosted.body.data as Rec[])[0]?.explain).toMatchObject({ rules: [{ id, boost: 10 }], experiment: null });
    const s = await search({ context_id: ctx, explain: true });
    expect(hitIds(s)[0]).toBe(target);
    expect((s.body.data as Hit[])[0]?.explain).toMatchObject({ rules: [{ id, boost: 10 }] });

    expect((await P('PATCH', `/api/rules/${id}`, { enabled: false })).status).toBe(200);
    expect(recIds(await recs(`user_id=fresh-2&limit=10&context_id=${ctx}`))).toEqual(plain);
    const now = Math.floor(Date.now() / 1000);
    expect((await P('PATCH', `/api/rules/${id}`, { enabled: true, starts_at: now + 3600, ends_at: now + 7200 })).status).toBe(200);
    expect(recIds(await recs(`user_id=fresh-2&limit=10&context_id=${ctx}`))).toEqual(plain);
    expect((await P('PATCH', `/api/rules/${id}`, { starts_at: now - 7200, ends_at: now - 3600 })).status).toBe(200);
    expect(recIds(await recs(`user_id=fresh-2&limit=10&context_id=${ctx}`))).toEqual(plain);
    expect((await P('PATCH', `/api/rules/${id}`, { starts_at: now - 60, ends_at: now + 3600 })).status).toBe(200);
    expect(recIds(await recs(`user_id=fresh-2&limit=10&context_id=${ctx}`))[0]).toBe(target);
  });

  it('a segment-scoped rule applies only to members, and a user becomes one at the qualifying event', async () => {
    const ctx = await context('members');
    const seg = await P('POST', '/api/segments', { name: 'buyers', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } });
    expect(seg.status).toBe(201);
    await newRule({ context_id: ctx, segment_id: seg.body.id, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Bolt' }], boost: 0 });
    const q = `user_id=shopper&limit=20&context_id=${ctx}`;
    expect(brandsOfRecs(await recs(q))).toContain('Bolt');
    expect(brandsOfHits(await search({ context_id: ctx, user_id: 'shopper' }))).toContain('Bolt');
    expect((await t.demo.core('POST', '/v1/events', [{ type: 'purchase', user_id: 'shopper', item_id: items[23] }])).status).toBe(201);
    expect(brandsOfRecs(await recs(q))).not.toContain('Bolt');
    expect(brandsOfHits(await search({ context_id: ctx, user_id: 'shopper' }))).not.toContain('Bolt');
    // Not a member: unchanged.
    expect(brandsOfRecs(await recs(`user_id=browser&limit=20&context_id=${ctx}`))).toContain('Bolt');
  });

  it("a search's later pages are planned as its first was: a segment the user joins, or a rule window that opens, between pages neither repeats nor skips a hit", async () => {
    const ctx = await context('planned pages');
    const seg = await P('POST', '/api/segments', { name: 'page buyers', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } });
    await newRule({ context_id: ctx, segment_id: seg.body.id, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Bolt' }], boost: 0 });
    // The service's clock (shared/clock.ts, in this process) stands still until the first page is
    // served, then is moved past the window's opening: was the system's, the window opening
    // floor(now) + 2 s ahead, leaving about a second for the rule's write and two searches, which
    // on a loaded machine could be planned after it opened (the test then failing, or passing
    // without the window).
    const frozen = nowMs();
    let clock = () => frozen;
    const restore = setClock({ nowMs: () => clock() });
    try {
      // A promotion of the mugs whose window opens two seconds from now.
      const opens = Math.floor(frozen / 1000) + 2;
      await newRule({ context_id: ctx, conditions: [{ field: 'metadata.category', op: 'eq', value: 'mugs' }], boost: 50, starts_at: opens });
      const body = { context_id: ctx, user_id: 'page-shopper' };
      const closed = await search({ ...body, limit: 100 });
      const whole = hitIds(closed);
      expect(whole).toHaveLength(24);
      // Planned while the window is closed: the mugs not lifted.
      expect((closed.body.data as Hit[])[0]?.metadata.category).not.toBe('mugs');
      const first = await search({ ...body, limit: 5 });
      const paged = hitIds(first);
      // Between pages the user becomes a member (Bolt left out from then on) and the window opens (mugs lifted).
      expect((await t.demo.core('POST', '/v1/events', [{ type: 'purchase', user_id: 'page-shopper', item_id: items[23] }])).status).toBe(201);
      // Past the opening: a second after it (standing there until the system's clock gets there).
      clock = () => Math.max(Date.now(), (opens + 1) * 1000);
      expect(nowSeconds()).toBeGreaterThan(opens);
      let cursor: string | null = first.body.next_cursor;
      while (cursor) {
        const page: Api = await search({ ...body, limit: 5, starting_after: cursor });
        paged.push(...hitIds(page));
        cursor = page.body.next_cursor;
      }
      expect(paged).toEqual(whole);
      // The next search is planned anew: the member sees no Bolt, and mugs first.
      const now = await search({ ...body, limit: 100 });
      expect(brandsOfHits(now)).not.toContain('Bolt');
      expect((now.body.data as Hit[])[0]?.metadata.category).toBe('mugs');
    } finally {
      // Back to the system's clock once it has caught up (under 3 s): not back in time, which
      // would leave what the stack stamped meanwhile (a view's last look for a build, a cache's
      // read) in the future, taken for fresh by the tests after this one.
      while (Date.now() < nowMs()) await new Promise((r) => setTimeout(r, Math.min(100, nowMs() - Date.now() + 1)));
      restore();
    }
  });
});

describe('rerank controls', () => {
  it('max_per_category 1 leaves no two results of one category, in recommendations and search', async () => {
    const ctx = await context('one per category');
    expect((await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { max_per_category: 1 })).status).toBe(200);
    const r = await recs(`user_id=fresh-3&limit=10&context_id=${ctx}`);
    const rc = (r.body.data as Rec[]).map((x) => x.item.metadata.category);
    expect(rc).toHaveLength(4);
    expect(new Set(rc).size).toBe(4);
    const sc = (await search({ context_id: ctx })).body.data.map((x: Hit) => x.metadata.category);
    expect(new Set(sc).size).toBe(sc.length);
    // Explain says which items moved up because others were left out, and from where.
    const plain = hitIds(await search({ limit: 100 }));
    const explained = (await search({ context_id: ctx, explain: true })).body.data as (Hit & { explain: { rerank: unknown[] } })[];
    expect(explained.map((x) => x.metadata.category)).toEqual(sc);
    explained.forEach((x, k) => {
      const from = plain.indexOf(x.id) + 1;
      expect(x.explain.rerank).toEqual(from === k + 1 ? [] : [{ control: 'max_per_category', moved_from: from, moved_to: k + 1 }]);
    });
    expect(explained.some((x) => x.explain.rerank.length > 0)).toBe(true);
  });

  it('exclude_seen leaves out of search what the user interacted with; pages of a context list do not repeat', async () => {
    const ctx = await context('unseen');
    expect((await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { exclude_seen: true })).status).toBe(200);
    expect((await t.demo.core('POST', '/v1/events', [{ type: 'view', user_id: 'looker', item_id: items[2] }])).status).toBe(201);
    expect(hitIds(await search({ context_id: ctx, user_id: 'looker' }))).not.toContain(items[2]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Api = await search({ context_id: ctx, limit: 5, ...(cursor ? { starting_after: cursor } : {}) });
      seen.push(...hitIds(page));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(24);
    expect(new Set(seen).size).toBe(24);
  });
});

describe('exclude_seen in recommendations', () => {
  it("a context's exclude_seen leaves seen items out even of a request with include_seen=true", async () => {
    const ctx = await context('unseen recs');
    expect((await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { exclude_seen: true })).status).toBe(200);
    expect((await t.demo.core('POST', '/v1/events', [{ type: 'view', user_id: 'rec-looker', item_id: items[0] }])).status).toBe(201);
    // Without the context, include_seen=true shows the item the user viewed...
    expect(recIds(await recs('user_id=rec-looker&limit=100&include_seen=true'))).toContain(items[0]);
    // ...the context's control wins over the request (docs/api.md, Rerank controls).
    const inContext = recIds(await recs(`user_id=rec-looker&limit=100&include_seen=true&context_id=${ctx}`));
    expect(inContext.length).toBeGreaterThan(0);
    expect(inContext).not.toContain(items[0]);
  });
});

describe('exclude_seen in search', () => {
  it("leaves out the items of the user's latest 100 events, not those of older ones", async () => {
    const ctx = await context('unseen-100');
    expect((await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { exclude_seen: true })).status).toBe(200);
    const view = (item: string | undefined, n = 1) => Array.from({ length: n }, () => ({ type: 'view', user_id: 'hundred', item_id: item }));
    // Oldest first: items[5] (the 101st latest), items[6] (the 100th), then 99 views of items[7].
    for (const batch of [view(items[5]), view(items[6]), view(items[7], 99)]) expect((await t.demo.core('POST', '/v1/events', batch)).status).toBe(201);
    const ids = hitIds(await search({ context_id: ctx, user_id: 'hundred' }));
    // 100 events for search (docs/api.md): one fewer would show items[6]; one more would leave out items[5].
    expect(ids).toContain(items[5]);
    expect(ids).not.toContain(items[6]);
    expect(ids).not.toContain(items[7]);
  });
});

describe('pages of a context list', () => {
  it('with diversity and a category cap, page after page are the one list a single page shows', async () => {
    const ctx = await context('diverse, two per category');
    expect((await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { diversity: 0.3, max_per_category: 2 })).status).toBe(200);
    const whole = hitIds(await search({ context_id: ctx, limit: 100 }));
    expect(whole).toHaveLength(8); // four categories, two of each
    for (const limit of [1, 3]) {
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Api = await search({ context_id: ctx, limit, ...(cursor ? { starting_after: cursor } : {}) });
        paged.push(...hitIds(page));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(paged).toEqual(whole);
    }
  });

  it('go on past the pool the plan orders, through its exclusions and category cap, to the last match', async () => {
    // 90 lanterns: more than the pool of a limit-10 list (60).
    const made = await t.demo.core(
      'POST',
      '/v1/items',
      Array.from({ length: 90 }, (_, i) => ({ name: `Lantern ${i}`, description: `a lantern, number ${i}`, metadata: { brand: brands[i % 3], category: cats[i % 4] } })),
    );
    const lanterns = (made.body.data as { id: string; metadata: { brand: string } }[]).map((x) => ({ id: x.id, brand: x.metadata.brand }));
    await until(
      () => t.demo.core('POST', '/v1/search', { query: 'lantern', mode: 'keyword', limit: 100 }),
      (x) => x.body.total === 90,
      20_000,
    );
    const walk = async (ctx: number, extra: Record<string, unknown> = {}) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Api = await search({ query: 'lantern', context_id: ctx, limit: 10, ...extra, ...(cursor ? { starting_after: cursor } : {}) });
        ids.push(...hitIds(page));
        expect(page.body.has_more).toBe(page.body.next_cursor !== null);
        cursor = page.body.next_cursor;
        pages += 1;
      } while (cursor && pages < 20);
      return ids;
    };
    const noBolt = await context('no Bolt lanterns');
    await newRule({ context_id: noBolt, boost: 0, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Bolt' }] });
    const kept = await walk(noBolt);
    expect(new Set(kept).size).toBe(kept.length);
    expect([...kept].sort()).toEqual(
      lanterns
        .filter((l) => l.brand !== 'Bolt')
        .map((l) => l.id)
        .sort(),
    );
    // An offset far past the matches (cursors are the client's to send) is an empty last page.
    const first: Api = await search({ query: 'lantern', context_id: noBolt, limit: 10 });
    const [tag, , builtAt] = JSON.parse(Buffer.from(first.body.next_cursor, 'base64url').toString());
    const far: Api = await search({ query: 'lantern', context_id: noBolt, limit: 10, starting_after: Buffer.from(JSON.stringify([tag, 1e12, builtAt])).toString('base64url') });
    expect(far.body).toMatchObject({ data: [], has_more: false, next_cursor: null });
    // The cursor of this list sent with another query or another context is a 400 (was a page of that list).
    for (const other of [
      { query: 'candle', context_id: noBolt },
      { query: 'lantern', context_id: await context('another placement') },
    ]) {
      const r = await t.demo.core('POST', '/v1/search', { mode: 'keyword', limit: 10, ...other, starting_after: first.body.next_cursor });
      expect(r.status, JSON.stringify(other)).toBe(400);
      expect(r.body.error.details.fieldErrors.starting_after).toEqual(['This cursor is from another search: send the query, mode, filters, user_id and context_id it was made with.']);
    }
    const capped = await context('five lanterns a category');
    expect((await P('PUT', `/api/rerank-controls?contextId=${capped}`, { max_per_category: 5 })).status).toBe(200);
    expect(await walk(capped)).toHaveLength(20);
    // exclude_seen past the pool too: a user who saw 80 lanterns (within their latest 100; more than the pool of 60 holds,
    // however their taste ranks them) is served the other 10 only.
    const unseen = await context('lanterns not seen');
    expect((await P('PUT', `/api/rerank-controls?contextId=${unseen}`, { exclude_seen: true })).status).toBe(200);
    const seenOnes = lanterns.filter((_, i) => i % 9 !== 0).map((l) => l.id);
    const views = seenOnes.map((item_id) => ({ type: 'view', user_id: 'lantern-looker', item_id }));
    expect((await t.demo.core('POST', '/v1/events', views)).status).toBe(201);
    const notSeen = await walk(unseen, { user_id: 'lantern-looker' });
    expect(new Set(notSeen).size).toBe(notSeen.length);
    expect([...notSeen].sort()).toEqual(
      lanterns
        .filter((_, i) => i % 9 === 0)
        .map((l) => l.id)
        .sort(),
    );
  });

  it('past the pool, serve every match once when a rule boosts some of them, however deep the page', async () => {
    // 250 candles: deeper pages rank deeper past the pool (60 for limit 20), where the boosted
    // brand's candles move ahead; pages must still be positions in one list.
    for (let b = 0; b < 250; b += 100) {
      const batch = Array.from({ length: Math.min(100, 250 - b) }, (_, k) => ({
        name: `Candle ${b + k}`,
        description: `a candle${' wax'.repeat((b + k) % 7)}`,
        metadata: { brand: brands[(b + k) % 3] },
      }));
      expect((await t.demo.core('POST', '/v1/items', batch)).status).toBe(201);
    }
    await until(
      () => t.demo.core('POST', '/v1/search', { query: 'candle', mode: 'keyword', limit: 1 }),
      (x) => x.body.total === 250,
      20_000,
    );
    const ctx = await context('Bolt candles boosted');
    await newRule({ context_id: ctx, boost: 3, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Bolt' }] });
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Api = await search({ query: 'candle', mode: 'keyword', context_id: ctx, limit: 20, ...(cursor ? { starting_after: cursor } : {}) });
      ids.push(...hitIds(page));
      cursor = page.body.next_cursor;
    } while (cursor && ids.length <= 300);
    expect(ids).toHaveLength(250);
    expect(new Set(ids).size).toBe(250);
  });
});

describe('experiments', () => {
  it('over 400 users a 50/50 split serves each variant 40-60 %, each user always the same one, and counts exactly the attributed events', async () => {
    for (const name of ['main', 'next']) expect((await P('POST', '/api/model-endpoints', { endpoint_name: name, is_default: name === 'main' })).status).toBe(201);
    const ctx = await context('ab');
    const created = await P('POST', '/api/experiments', {
      name: 'main vs next',
      context_id: ctx,
      variants: [
        { name: 'control', endpoint_name: 'main', traffic_percent: 50 },
        { name: 'treatment', endpoint_name: 'next', traffic_percent: 50 },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const exp = created.body.id as number;
    // A Draft experiment assigns nobody.
    expect((await recs(`user_id=ab-0&limit=3&context_id=${ctx}`)).body.experiment).toBeUndefined();
    expect((await P('PATCH', `/api/experiments/${exp}`, { status: 'Running' })).status).toBe(200);

    const variantOf = new Map<string, string>();
    const served: { user: string; variant: string; requestId: string }[] = [];
    const users = Array.from({ length: 400 }, (_, u) => `ab-${u}`);
    for (let i = 0; i < users.length; i += 8) {
      await Promise.all(
        users.slice(i, i + 8).map(async (user) => {
          const r = await recs(`user_id=${user}&limit=3&context_id=${ctx}`);
          expect(r.body.experiment).toMatchObject({ id: exp });
          expect(r.body.model).toBeNull();
          variantOf.set(user, r.body.experiment.variant);
          served.push({ user, variant: r.body.experiment.variant, requestId: r.body.request_id });
        }),
      );
    }
    const treated = [...variantOf.values()].filter((v) => v === 'treatment').length;
    expect(treated).toBeGreaterThanOrEqual(160);
    expect(treated).toBeLessThanOrEqual(240);
    // Sticky, in search too.
    for (const user of users.slice(0, 40)) {
      const again = await recs(`user_id=${user}&limit=3&context_id=${ctx}`);
      expect(again.body.experiment.variant).toBe(variantOf.get(user));
      served.push({ user, variant: again.body.experiment.variant, requestId: again.body.request_id });
    }
    const s = await search({ context_id: ctx, user_id: users[0] });
    expect(s.body.experiment).toEqual({ id: exp, variant: variantOf.get(users[0] as string) });
    served.push({ user: users[0] as string, variant: s.body.experiment.variant, requestId: s.body.request_id });

    // Requests refused after their plan was made (an unknown item, a bad cursor) were not served: they count nothing, nor do events naming them.
    const refused = [
      await t.demo.core('GET', `/v1/recommendations?user_id=ab-refused-0&item_id=999999&context_id=${ctx}`),
      await t.demo.core('POST', '/v1/search', { query: 'lamp', context_id: ctx, user_id: 'ab-refused-1', starting_after: 'garbage' }),
    ];
    expect(refused.map((r) => r.status)).toEqual([404, 400]);
    const refusedIds = refused.map((r) => r.body.error.request_id as string);

    // Clicks for the first 60 requests (the 61st's request_id in upper case: a UUID in either case),
    // purchases for every 7th; one sent twice under one Idempotency-Key; one naming no experiment
    // request; purchases by users other than the one a request was served to, naming it, which count for nobody.
    const clicks = served.slice(0, 61).map((x, k) => ({ type: 'click', user_id: x.user, item_id: items[0], request_id: k === 60 ? x.requestId.toUpperCase() : x.requestId }));
    const buys = served.filter((_, k) => k % 7 === 0).map((x) => ({ type: 'purchase', user_id: x.user, item_id: items[1], request_id: x.requestId }));
    const body = [
      ...clicks,
      ...buys,
      { type: 'click', user_id: 'nobody', item_id: items[0], request_id: '00000000-0000-4000-8000-000000000000' },
      ...refusedIds.map((request_id, k) => ({ type: 'click', user_id: `ab-refused-${k}`, item_id: items[0], request_id })),
      ...served.slice(1, 30).map((x) => ({ type: 'purchase', user_id: `${x.user}-friend`, item_id: items[1], request_id: x.requestId })),
    ];
    for (let k = 0; k < 2; k++) expect((await t.demo.core('POST', '/v1/events', body, { headers: { 'Idempotency-Key': 'ab-events' } })).status).toBe(201);

    const want = (variant: string, list: { request_id: string }[]) => list.filter((e) => served.find((x) => x.requestId === e.request_id.toLowerCase())?.variant === variant).length;
    const res = await P('GET', `/api/experiments/${exp}`);
    expect(res.status).toBe(200);
    const results = res.body.results as {
      variants: { name: string; requests: number; users: number; events: Record<string, { events: number; rate_per_request: number; lift: unknown }> }[];
      sample_ratio_mismatch: { mismatch: boolean };
    };
    for (const v of results.variants) {
      expect(v.requests).toBe(served.filter((x) => x.variant === v.name).length);
      expect(v.users).toBe([...variantOf.values()].filter((x) => x === v.name).length);
      expect(v.events.click?.events).toBe(want(v.name, clicks));
      expect(v.events.purchase?.events).toBe(want(v.name, buys));
    }
    expect(results.variants[1]?.events.click?.lift).toMatchObject({ relative: expect.any(Number) });
    expect(results.sample_ratio_mismatch.mismatch).toBe(false);
    expect((await P('GET', `/api/experiments?contextId=${ctx}`)).body.data[0].results.variants).toHaveLength(2);

    // Stopped: nobody is assigned any more.
    expect((await P('PATCH', `/api/experiments/${exp}`, { status: 'Stopped' })).status).toBe(200);
    expect((await recs(`user_id=ab-1&limit=3&context_id=${ctx}`)).body.experiment).toBeUndefined();
  }, 120_000);

  it("an explicit endpoint bypasses the experiment: its variant's rerank controls do not apply either", async () => {
    for (const name of ['pinned-a', 'pinned-b']) expect((await P('POST', '/api/model-endpoints', { endpoint_name: name, is_default: false })).status).toBe(201);
    const ctx = await context('pinned');
    const created = await P('POST', '/api/experiments', {
      name: 'one per category in every variant',
      context_id: ctx,
      variants: [
        { name: 'a', endpoint_name: 'pinned-a', traffic_percent: 50, rerank: { max_per_category: 1 } },
        { name: 'b', endpoint_name: 'pinned-b', traffic_percent: 50, rerank: { max_per_category: 1 } },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await P('PATCH', `/api/experiments/${created.body.id}`, { status: 'Running' })).status).toBe(200);
    // In the experiment: the variant's cap, one lamp.
    const assigned = await recs(`user_id=pinned-user&category=lamps&limit=5&context_id=${ctx}`);
    expect(assigned.body.experiment).toMatchObject({ id: created.body.id });
    expect(recIds(assigned)).toHaveLength(1);
    // Naming the endpoint: no variant, so none of its controls (the context has none of its own).
    const pinned = await recs(`user_id=pinned-user&category=lamps&limit=5&context_id=${ctx}&endpoint=pinned-a`);
    expect(pinned.body.experiment).toBeUndefined();
    expect(pinned.body.model).toBeNull();
    // Until 2026-12-02 the variant's max_per_category still applied: one lamp of five.
    expect(recIds(pinned)).toHaveLength(5);
    expect(recIds(pinned)).toEqual(recIds(await recs('user_id=pinned-user&category=lamps&limit=5&endpoint=pinned-a')));
  });
});

describe("a user's erasure and experiments", () => {
  it("deletes the user's membership row in each experiment, Running or Stopped; the results stay, and a later conversion on a request served before counts for the request, not the user; served again, the user is a new member, even by the container that recorded them before", async () => {
    const stamp = Date.now();
    const [user, kept] = [`erased-member-${stamp}`, `kept-member-${stamp}`];
    const tenant = t.demo.creds.tenant;
    const member = (experiment: number, userId: string) => getRow(table, ExperimentUser.key({ tenant, experiment, user_id: userId }), { consistent: true });
    for (const name of ['erase-a', 'erase-b']) expect((await P('POST', '/api/model-endpoints', { endpoint_name: name })).status).toBe(201);
    const experiment = async (name: string) => {
      const ctx = await context(name);
      return { id: await runningExperiment(t.demo, name, ctx, ['erase-a', 'erase-b']), ctx };
    };
    const running = await experiment(`erase-running-${stamp}`);
    const stopped = await experiment(`erase-stopped-${stamp}`);
    const served = async (e: { id: number; ctx: number }, userId: string) => {
      const r = await recs(`user_id=${userId}&limit=3&context_id=${e.ctx}`);
      expect(r.body.experiment).toMatchObject({ id: e.id });
      return r.body.request_id as string;
    };
    const before = await served(running, user);
    await served(running, kept);
    await served(stopped, user);
    expect((await P('PATCH', `/api/experiments/${stopped.id}`, { status: 'Stopped' })).status).toBe(200);
    // A click on the request: the user converted.
    expect((await t.demo.core('POST', '/v1/events', [{ type: 'click', user_id: user, item_id: items[0], request_id: before }])).status).toBe(201);
    for (const id of [running.id, stopped.id]) expect(await member(id, user)).toMatchObject({ first_served_at: expect.any(Number) });
    const results = async (id: number) => {
      const r = await P('GET', `/api/experiments/${id}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.results;
    };
    const was = { running: await results(running.id), stopped: await results(stopped.id) };
    expect(was.running.variants.map((v: { users: number }) => v.users).reduce((a: number, b: number) => a + b)).toBe(2);

    expect(await P('DELETE', `/api/users/${user}`)).toMatchObject({ status: 200, body: { user_id: user } });

    // The rows are gone, in the Stopped experiment too; another member's stays.
    expect(await member(running.id, user)).toBeUndefined();
    expect(await member(stopped.id, user)).toBeUndefined();
    expect(await member(running.id, kept)).toMatchObject({ first_served_at: expect.any(Number) });
    // The results still answer, as they were: the totals keep what they counted.
    expect(await results(running.id)).toEqual(was.running);
    expect(await results(stopped.id)).toEqual(was.stopped);

    // A purchase sent after the erasure naming the request served before it (its exposure is kept
    // until it expires): counted for the request, not for the user, and no row is written back.
    expect((await t.demo.core('POST', '/v1/events', [{ type: 'purchase', user_id: user, item_id: items[1], request_id: before }])).status).toBe(201);
    const after = await results(running.id);
    const purchases = after.variants.map((v: { events: Record<string, { events: number; requests_with_event: number; users_with_event: number }> }) => v.events.purchase);
    expect(purchases.reduce((n: number, p: { events: number }) => n + p.events, 0)).toBe(1);
    expect(purchases.reduce((n: number, p: { requests_with_event: number }) => n + p.requests_with_event, 0)).toBe(1);
    expect(purchases.reduce((n: number, p: { users_with_event: number }) => n + p.users_with_event, 0)).toBe(0);
    expect(after.variants.map((v: { users: number; events: { click: unknown } }) => [v.users, v.events.click])).toEqual(
      was.running.variants.map((v: { users: number; events: { click: unknown } }) => [v.users, v.events.click]),
    );
    expect(await member(running.id, user)).toBeUndefined();

    // Served again after the erasure by the container that recorded them before it: by their
    // erasure marker it writes their membership again, and they count among the users anew.
    const usersOf = (r: { variants: { users: number }[] }) => r.variants.reduce((n, v) => n + v.users, 0);
    await served(running, user);
    expect(await member(running.id, user)).toMatchObject({ first_served_at: expect.any(Number) });
    expect(usersOf(await results(running.id))).toBe(3);
  });
});

describe('contexts of another tenant', () => {
  it('are 404 on recommendations and search', async () => {
    const ctx = await context('mine');
    for (const r of [await other.core('GET', `/v1/recommendations?user_id=x&context_id=${ctx}`), await other.core('POST', '/v1/search', { query: 'lamp', context_id: ctx })]) {
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ type: 'not_found_error', code: 'context_not_found' });
    }
    expect((await recs(`user_id=x&context_id=${ctx}`)).status).toBe(200);
  });

  it('an id past the largest is well formed and absent: 404 naming the digits as sent, not a context looked up under a rounded id', async () => {
    // As the Platform's contextId and every numeric path id answer it (docs/api.md, Path IDs).
    for (const big of ['99999999999999999999', '9007199254740993']) {
      for (const r of [await t.demo.core('GET', `/v1/recommendations?user_id=x&context_id=${big}`), await t.demo.core('POST', '/v1/search', { query: 'lamp', context_id: big })]) {
        expect(r.status, JSON.stringify(r.body)).toBe(404);
        expect(r.body.error).toMatchObject({ type: 'not_found_error', code: 'context_not_found', message: `No context ${big}.` });
      }
    }
    // Not digits: 400 naming context_id.
    const notDigits = await t.demo.core('GET', '/v1/recommendations?user_id=x&context_id=abc');
    expect(notDigits.body.error.details.fieldErrors).toEqual({ context_id: ['context_id must be a numeric console context ID'] });
  });

  it('a context_id sent as a JSON number that is no positive integer, or past the largest, is 400 saying what to send', async () => {
    const notId = 'context_id must be a numeric console context ID (a positive integer, or its digits as a string)';
    for (const bad of [0, -3, 1.5, true]) {
      const r = await t.demo.core('POST', '/v1/search', { query: 'lamp', context_id: bad });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', details: { fieldErrors: { context_id: [notId] } } });
    }
    // Past 2^53-1 a JSON number arrives rounded (9007199254740993 parses as ...992): its digits as
    // sent are lost, so it is neither looked up nor stored as another id. Sent as digits it is 404,
    // as GET /v1/recommendations answers it.
    const big = 'context_id past 9007199254740991 must be sent as a string of its digits (a JSON number that large is not exact)';
    for (const raw of ['9007199254740993', '1e300']) {
      const r = await request(t.base, 'POST', '/v1/search', { rawBody: `{"query":"lamp","context_id":${raw}}`, headers: { authorization: `Bearer ${await t.demo.accessToken()}` } });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', details: { fieldErrors: { context_id: [big] } } });
      const ev = await request(t.base, 'POST', '/v1/events', {
        rawBody: `[{"type":"click","user_id":"u","item_id":"1","context_id":${raw}}]`,
        headers: { authorization: `Bearer ${await t.demo.accessToken()}` },
      });
      expect(ev.status, JSON.stringify(ev.body)).toBe(400);
      expect(ev.body.error.details.fieldErrors).toEqual({ '0.context_id': [big] });
    }
    expect((await t.demo.core('POST', '/v1/search', { query: 'lamp', context_id: '9007199254740993' })).body.error).toMatchObject({
      code: 'context_not_found',
      message: 'No context 9007199254740993.',
    });
  });
});
