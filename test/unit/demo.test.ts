import { describe, expect, it } from 'vitest';
import { DEMO_SIZES, generateDemo, type DemoShop } from '../../shared/demo/generate.ts';
import { demoQueries, NOT_SOLD } from '../../shared/demo/searches.ts';
import { DEMO_EVENT_TYPES, SHOWCASE_USER } from '../../shared/demo/shoppers.ts';
import { seededRandom } from '../../shared/random.ts';
import { CATEGORIES } from '../../shared/demo/vocabulary.ts';
import { createItemsBody } from '../../shared/schemas/items.ts';
import { HashingEmbedding, itemText } from '../../shared/search/embedding.ts';
import { idfOf, NO_FILTER, SearchIndex } from '../../shared/search/engine.ts';
import { PreparedDelta, rank } from '../../shared/search/rank.ts';
import { ingestEventsBody } from '../../shared/schemas/events.ts';

const NOW = 1_790_000_000;
const full = generateDemo(DEMO_SIZES.full, { now: NOW });

/** Per shopper: how many of their events fall in their preferred categories, and in all. */
function tasteShares(shop: DemoShop): { inTaste: number; all: number }[] {
  const users = new Map(shop.users.map((u) => [u.id, { categories: u.categories, inTaste: 0, all: 0 }]));
  for (const e of shop.events) {
    const u = users.get(e.user);
    if (!u) throw new Error(`event of unknown user ${e.user}`);
    u.all++;
    if (u.categories.includes(shop.items[e.item]?.metadata.category as string)) u.inTaste++;
  }
  return [...users.values()];
}

describe('demo shop generator', () => {
  it('is deterministic: the same size, seed and clock give the same shop; another seed another', () => {
    expect(generateDemo(DEMO_SIZES.small, { now: NOW })).toEqual(generateDemo(DEMO_SIZES.small, { now: NOW }));
    const other = generateDemo(DEMO_SIZES.small, { now: NOW, seed: 99 });
    expect(other.items.map((i) => i.name)).not.toEqual(generateDemo(DEMO_SIZES.small, { now: NOW }).items.map((i) => i.name));
  });

  it('has the sizes asked for, npm start a realistic shop of a few hundred items and tens of thousands of events', () => {
    expect(DEMO_SIZES.full.items).toBeGreaterThanOrEqual(300);
    expect(DEMO_SIZES.full.items).toBeLessThanOrEqual(500);
    expect(DEMO_SIZES.full.users).toBeGreaterThanOrEqual(2000);
    expect(DEMO_SIZES.full.events).toBeGreaterThanOrEqual(20_000);
    for (const [size, shop] of [
      [DEMO_SIZES.full, full],
      [DEMO_SIZES.small, generateDemo(DEMO_SIZES.small, { now: NOW })],
    ] as const) {
      expect(shop.items).toHaveLength(size.items);
      expect(shop.users).toHaveLength(size.users);
      expect(shop.events).toHaveLength(size.events);
      // Every shopper comes at least once.
      expect(new Set(shop.events.map((e) => e.user)).size).toBe(size.users);
    }
  });

  it('makes items the Core API takes: unique names, descriptions, category, brand and a price in cents', () => {
    expect(new Set(full.items.map((i) => i.name)).size).toBe(full.items.length);
    const categories = new Set(CATEGORIES.map((c) => c.category));
    for (const item of full.items) {
      expect(item.description.length).toBeGreaterThan(40);
      expect(categories.has(item.metadata.category)).toBe(true);
      expect(item.name.startsWith(item.metadata.brand)).toBe(true);
      expect(Number.isInteger(item.metadata.price) && item.metadata.price > 0).toBe(true);
    }
    // Every category is stocked evenly.
    const perCategory = new Map<string, number>();
    for (const i of full.items) perCategory.set(i.metadata.category, (perCategory.get(i.metadata.category) ?? 0) + 1);
    expect(perCategory.size).toBe(CATEGORIES.length);
    for (const n of perCategory.values()) expect(n).toBe(full.items.length / CATEGORIES.length);
    for (let i = 0; i < full.items.length; i += 100) expect(createItemsBody.safeParse(full.items.slice(i, i + 100)).success).toBe(true);
  });

  it("reads as a shop's copy does: a search for a category's name shows that category's items first", () => {
    // Searched as the service searches (hybrid); a category whose items only their metadata called
    // by its name ranked under books that mention the word ("coffee": twelve books first).
    const emb = new HashingEmbedding(512);
    const docs = full.items.map((item, i) => ({ id: i + 1, ...item, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: emb.embedOne(itemText(item)) }));
    const index = SearchIndex.build(docs, 512, 1);
    const delta = new PreparedDelta({ docs: [], masked: new Set() });
    delta.bind(index);
    const stats = delta.stats();
    for (const { category } of CATEGORIES) {
      const queryVector = emb.embedOne(category, (t) => idfOf(stats.n, stats.df(t)));
      const { hits } = rank(index, delta, { query: category, mode: 'hybrid', filter: NO_FILTER, queryVector, profile: null }, { limit: 5 });
      expect(hits.slice(0, 5).map((h) => h.doc.metadata.category)).toEqual(Array(5).fill(category));
    }
  });

  it('makes events of the demo types, in time order, within the 60 days before now, purchases after a cart', () => {
    const types = new Set<string>(DEMO_EVENT_TYPES);
    let last = 0;
    const carted = new Set<string>();
    const wrong: unknown[] = [];
    for (const e of full.events) {
      if (!types.has(e.type) || e.occurred_at < last || e.occurred_at <= NOW - 61 * 86_400 || e.occurred_at >= NOW) wrong.push(e);
      last = e.occurred_at;
      if (e.type === 'add_to_cart') carted.add(`${e.user}/${e.item}`);
      if (e.type === 'purchase' && !carted.has(`${e.user}/${e.item}`)) wrong.push(e);
    }
    expect(wrong).toEqual([]);
    const count = (t: string) => full.events.filter((e) => e.type === t).length;
    // Mostly views, some carts, fewer purchases.
    expect(count('view')).toBeGreaterThan(count('add_to_cart'));
    expect(count('add_to_cart')).toBeGreaterThan(count('purchase'));
    expect(count('purchase')).toBeGreaterThan(full.events.length * 0.03);
    const sample = full.events.slice(0, 500).map((e) => ({ type: e.type, user_id: e.user, item_id: String(e.item + 1), occurred_at: e.occurred_at }));
    expect(ingestEventsBody.safeParse(sample).success).toBe(true);
  });

  it('gives shoppers coherent tastes: their events concentrate on their 1 to 3 preferred categories', () => {
    for (const u of full.users) {
      expect(u.categories.length).toBeGreaterThanOrEqual(1);
      expect(u.categories.length).toBeLessThanOrEqual(3);
      expect(new Set(u.categories).size).toBe(u.categories.length);
    }
    const shares = tasteShares(full);
    const inTaste = shares.reduce((s, u) => s + u.inTaste, 0);
    // Preferred categories are 1-3 of 12 (a quarter at most at random): here nearly all events.
    expect(inTaste / full.events.length).toBeGreaterThan(0.85);
    const regulars = shares
      .filter((u) => u.all >= 10)
      .map((u) => u.inTaste / u.all)
      .sort((a, b) => a - b);
    expect(regulars.length).toBeGreaterThan(500);
    expect(regulars[Math.floor(regulars.length / 2)]).toBeGreaterThan(0.8);
    // Favourite brands are looked at more than their share of their category.
    let favourite = 0;
    let inFavouriteCategories = 0;
    let expected = 0;
    const users = new Map(full.users.map((u) => [u.id, u]));
    for (const e of full.events) {
      const item = full.items[e.item];
      const u = users.get(e.user);
      if (!item || !u || u.brands.length === 0) continue;
      const fav = u.brands.find((b) => CATEGORIES.find((c) => c.category === item.metadata.category)?.brands.includes(b));
      if (!fav) continue;
      inFavouriteCategories++;
      if (item.metadata.brand === fav) favourite++;
      const stock = full.items.filter((i) => i.metadata.category === item.metadata.category);
      expected += stock.filter((i) => i.metadata.brand === fav).length / stock.length;
    }
    expect(favourite / inFavouriteCategories).toBeGreaterThan((1.5 * expected) / inFavouriteCategories);
  });

  it('gives the walkthrough shopper u-1 a short coffee and running history, the same every time', () => {
    expect(full.users[0]).toEqual(SHOWCASE_USER);
    const history = full.events.filter((e) => e.user === SHOWCASE_USER.id);
    expect(history.length).toBeGreaterThanOrEqual(4);
    expect(history.length).toBeLessThanOrEqual(25);
    for (const e of history) expect(['coffee', 'running']).toContain(full.items[e.item]?.metadata.category);
    expect(history.some((e) => full.items[e.item]?.metadata.category === 'camping')).toBe(false);
  });

  it("makes the shoppers' queries: distinct, product kinds first in a random order, categories, brands, typos and half-typed words, and things the shop does not sell", () => {
    const queries = demoQueries(seededRandom(22));
    expect(new Set(queries).size).toBe(queries.length);
    for (const q of NOT_SOLD) expect(queries).toContain(q);
    for (const c of CATEGORIES) {
      expect(queries).toContain(c.category);
      for (const b of c.brands) expect(queries).toContain(b.toLowerCase());
    }
    const kinds = new Set(CATEGORIES.flatMap((c) => c.products.map((p) => p.name.toLowerCase())));
    const known = new Set([...kinds, ...CATEGORIES.flatMap((c) => [c.category, ...c.brands.map((b) => b.toLowerCase())]), ...NOT_SOLD]);
    // Not a kind, category or brand as written: a kind with two letters swapped, or cut short.
    const typed = queries.filter((q) => !known.has(q) && ![...kinds].some((k) => k.endsWith(` ${q}`)));
    expect(typed.length).toBeGreaterThan(0);
    for (const q of typed) expect([...kinds].some((k) => k.startsWith(q) || (k.length === q.length && [...k].filter((ch, i) => ch !== q[i]).length === 2))).toBe(true);
    // Another seed, another order.
    expect(demoQueries(seededRandom(23))).not.toEqual(queries);
  });
});
