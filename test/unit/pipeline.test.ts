import { nowSeconds, setClock } from '../../shared/clock.ts';
import { describe, expect, it } from 'vitest';
import { FRESHNESS_HALF_LIFE_DAYS, inForce, matches, runPipeline, type Candidate } from '../../shared/control/pipeline.ts';
import { afterFromPlan, CONTROL_CACHE_MS, decides, isMember, latestFromPlan, MISSING_CONTEXT_MS, planFor, SEGMENT_EVENTS, SEGMENT_FIRST_READ, type ControlDeps } from '../../shared/control/serving.ts';
import { STARTING_SECONDS, type ControlConfig, type Rule, type SegmentDefinition } from '../../shared/control/types.ts';
import { planAndRecord, type ExposureStore } from '../../shared/control/exposures.ts';
import type { RecentEvent } from '../../shared/domain/types.ts';
import { NotFound } from '../../shared/domain/errors.ts';
import { order, orderAfter } from '../../shared/serving/pipeline.ts';

const NOW = 1_800_000_000;
const doc = (id: number, metadata: Record<string, unknown> = {}, created = NOW - 86_400, vector: number[] | null = null): Candidate['doc'] => ({
  id,
  name: `item ${id}`,
  metadata: metadata as Candidate['doc']['metadata'],
  active: true,
  created,
  updated_at: created,
  embedding_updated_at: null,
  vector: vector ? Float32Array.from(vector) : null,
});
const cand = (id: number, score: number, metadata: Record<string, unknown> = {}, created?: number, vector?: number[]): Candidate => ({ id, score, doc: doc(id, metadata, created, vector ?? null) });
const rule = (over: Partial<Rule>): Rule => ({
  id: 1,
  name: 'r',
  context_id: 1,
  conditions: [],
  boost: 1,
  segment_id: null,
  starts_at: null,
  ends_at: null,
  enabled: true,
  created: NOW,
  updated_at: NOW,
  ...over,
});
const ids = (xs: { id: number }[]) => xs.map((x) => x.id);
/** Cosine of two candidates' (unit) vectors. */
const similarity = (a: Candidate) => (b: Candidate) => {
  let dot = 0;
  a.doc.vector?.forEach((x, d) => (dot += x * (b.doc.vector?.[d] ?? 0)));
  return dot;
};

describe('rule conditions', () => {
  const d = doc(1, { category: 'shoes', brand: 'Acme', price: 120, sku: '200', gone: null, tags: ['sale', 'new'], spec: { size: { eu: 42 } } }, NOW - 100);
  it.each([
    [{ field: 'category', op: 'eq', value: 'shoes' }, true],
    [{ field: 'metadata.category', op: 'eq', value: 'shoes' }, true],
    [{ field: 'metadata.brand', op: 'neq', value: 'Acme' }, false],
    [{ field: 'metadata.missing', op: 'neq', value: 'x' }, true],
    [{ field: 'metadata.brand', op: 'in', value: ['Bolt', 'Acme'] }, true],
    [{ field: 'metadata.price', op: 'gte', value: 120 }, true],
    [{ field: 'metadata.price', op: 'lte', value: 119 }, false],
    // gte and lte include their bound (an exclusive lte would leave out the item priced at it).
    [{ field: 'metadata.price', op: 'lte', value: 120 }, true],
    [{ field: 'metadata.price', op: 'gte', value: 121 }, false],
    // Numbers only: a string of digits is no number (JavaScript's "200" >= 100 would match it), nor is null.
    [{ field: 'metadata.sku', op: 'gte', value: 100 }, false],
    [{ field: 'metadata.sku', op: 'lte', value: 300 }, false],
    [{ field: 'metadata.gone', op: 'gte', value: 0 }, false],
    // A key whose value is null is absent (as the search filters and facets have it).
    [{ field: 'metadata.gone', op: 'exists', value: true }, false],
    [{ field: 'metadata.gone', op: 'exists', value: false }, true],
    [{ field: 'metadata.brand', op: 'gte', value: 1 }, false],
    [{ field: 'metadata.tags', op: 'eq', value: 'sale' }, true],
    [{ field: 'metadata.spec.size.eu', op: 'eq', value: 42 }, true],
    [{ field: 'metadata.spec.size.us', op: 'exists', value: false }, true],
    [{ field: 'metadata.spec', op: 'exists', value: true }, true],
    [{ field: 'name', op: 'eq', value: 'item 1' }, true],
    [{ field: 'created', op: 'gte', value: NOW - 200 }, true],
    [{ field: 'metadata.constructor', op: 'exists', value: true }, false],
  ] as const)('%j is %s', (c, want) => {
    expect(matches(d, { ...c, value: c.value as never })).toBe(want);
  });

  it('compare strings in NFC, as search filters do: "Café" composed or with e and U+0301 is one value, in the item and in the rule', () => {
    const [composed, decomposed] = ['Caf\u00e9', 'Cafe\u0301'];
    const items = [doc(1, { category: composed }, NOW), doc(2, { category: ['x', decomposed] }, NOW), doc(3, { category: 'Cafe' }, NOW)];
    const matching = (c: { field: string; op: string; value: unknown }) => items.filter((it) => matches(it, c as never)).map((it) => it.id);
    // Until 2026-12-07 each spelling matched only the items holding it as sent.
    for (const value of [composed, decomposed]) {
      expect(matching({ field: 'category', op: 'eq', value }), `eq ${JSON.stringify(value)}`).toEqual([1, 2]);
      expect(matching({ field: 'metadata.category', op: 'neq', value }), `neq ${JSON.stringify(value)}`).toEqual([3]);
      expect(matching({ field: 'category', op: 'in', value: ['y', value] }), `in ${JSON.stringify(value)}`).toEqual([1, 2]);
    }
  });
});

describe('the pipeline', () => {
  const pool = [
    cand(1, 1.0, { brand: 'Acme', category: 'a' }),
    cand(2, 0.9, { brand: 'Bolt', category: 'a' }),
    cand(3, 0.5, { brand: 'Cog', category: 'b' }),
    cand(4, 0.4, { brand: 'Acme', category: 'b' }),
  ];
  const none = { now: NOW };

  it('changes nothing without rules or controls', () => {
    expect(ids(runPipeline(pool, [], {}, none, null))).toEqual([1, 2, 3, 4]);
  });

  it('excludes matching items (boost 0) however few remain, and promotes by boosted score', () => {
    const out = runPipeline(
      pool,
      [
        rule({ id: 7, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Acme' }], boost: 0 }),
        rule({ id: 8, name: 'cog up', conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Cog' }], boost: 1.9 }),
      ],
      {},
      none,
      null,
    );
    expect(ids(out)).toEqual([3, 2]);
    expect(out[0]?.score).toBeCloseTo(0.95);
    expect(out[0]?.explain).toMatchObject({ base_score: 0.5, rules: [{ id: 8, name: 'cog up', boost: 1.9 }], score_after_rules: 0.95 });
  });

  it('multiplies the boosts of several matching rules; all conditions of a rule must hold; demotes below 1', () => {
    const out = runPipeline(
      pool,
      [
        rule({ id: 1, conditions: [{ field: 'category', op: 'eq', value: 'b' }], boost: 2 }),
        rule({
          id: 2,
          conditions: [
            { field: 'category', op: 'eq', value: 'b' },
            { field: 'metadata.brand', op: 'eq', value: 'Acme' },
          ],
          boost: 2,
        }),
        rule({ id: 3, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Bolt' }], boost: 0.1 }),
      ],
      {},
      none,
      null,
    );
    expect(out.map((o) => [o.id, Number(o.score.toFixed(3))])).toEqual([
      [4, 1.6],
      [1, 1],
      [3, 1],
      [2, 0.09],
    ]);
  });

  it('weighs scores not all positive shifted up in order: a boost above 1 raises an item scored below 0, one below 1 lowers it, and a score that is no number is the lowest', () => {
    const mixed = [cand(1, 0.5, { brand: 'Acme' }), cand(2, 0, { brand: 'Bolt' }), cand(3, -0.2, { brand: 'Cog' }), cand(4, Number.NaN, { brand: 'Dyn' }), cand(5, -0.5, { brand: 'Eel' })];
    expect(ids(runPipeline(mixed, [], {}, none, null))).toEqual([1, 2, 3, 5, 4]);
    const up = (brand: string, boost: number) => [rule({ id: 1, conditions: [{ field: 'metadata.brand', op: 'eq', value: brand }], boost })];
    // Raised past the items above it: over a range of 1, -0.2 weighs 0.301 and 0.5 weighs 1.001.
    const raised = runPipeline(mixed, up('Cog', 10), {}, none, null);
    expect(ids(raised)).toEqual([3, 1, 2, 5, 4]);
    expect(raised.every((o) => o.score > 0 && o.explain.base_score > 0)).toBe(true);
    expect(ids(runPipeline(mixed, up('Acme', 0.1), {}, none, null))).toEqual([2, 3, 1, 5, 4]);
    // Popularity adds to the relevance so scaled: every score a number, in a consistent order.
    const popular = runPipeline(mixed, [], { popularity_weight: 1 }, { now: NOW, popularity: (id) => (id === 4 ? 1 : 0) }, null);
    expect(ids(popular)[0]).toBe(4);
    expect(popular.every((o) => Number.isFinite(o.score))).toBe(true);
    // All positive: as they came.
    expect(runPipeline(pool, [], {}, none, null).map((o) => o.explain.base_score)).toEqual([1, 0.9, 0.5, 0.4]);
  });

  it('keeps scores numbers and in order however many rules multiply them: boosts multiply by 10^150 at most, 10^-150 at least', () => {
    const many = (boost: number, n: number, over: Partial<Rule> = {}) => Array.from({ length: n }, (_, k) => rule({ id: 100 + k, boost, ...over }));
    const cog = { conditions: [{ field: 'metadata.brand', op: 'eq' as const, value: 'Cog' }] };
    // 105 rules of boost 1,000 on every item (10^315): the order of the scores, each a number.
    const big = runPipeline(pool, many(1000, 105), {}, none, null);
    expect(ids(big)).toEqual([1, 2, 3, 4]);
    expect(big.map((x) => x.score / 1e150)).toEqual([1, 0.9, 0.5, 0.4].map((s) => expect.closeTo(s, 9)));
    expect(big.every((x) => x.explain.score_after_rules === x.score && x.explain.rules.length === 105)).toBe(true);
    // On one item only: it first, the others as they were.
    const one = runPipeline(pool, many(1000, 110, cog), {}, none, null);
    expect(ids(one)).toEqual([3, 1, 2, 4]);
    expect(one.map((x) => x.score)).toEqual([0.5e150, 1, 0.9, 0.4].map((s) => expect.closeTo(s, 9 - Math.log10(s))));
    // 50 of 1e-7 (10^-350) on one item: it last, above nothing, a number above 0; on all, the order of the scores.
    const low = runPipeline(pool, many(1e-7, 50, cog), {}, none, null);
    expect(ids(low)).toEqual([1, 2, 4, 3]);
    expect(low[3]?.score).toBeCloseTo(0.5e-150, 160);
    expect(ids(runPipeline(pool, many(1e-7, 50), {}, none, null))).toEqual([1, 2, 3, 4]);
    // Two items past the bound, demoted alike: ordered by their own scores still.
    const twoLow = runPipeline(pool, many(1e-7, 50, { conditions: [{ field: 'metadata.category', op: 'eq', value: 'a' }] }), {}, none, null);
    expect(ids(twoLow)).toEqual([3, 4, 1, 2]);
  });

  it('max_per_category leaves no two of one category; exclude_seen drops what the user saw', () => {
    const capped = runPipeline(pool, [], { max_per_category: 1 }, none, null);
    expect(ids(capped)).toEqual([1, 3]);
    // Item 3 moved up from 3rd to 2nd: 2 was left out (category a full), and its explanation says so.
    expect(capped.map((x) => x.explain.rerank)).toEqual([[], [{ control: 'max_per_category', moved_from: 3, moved_to: 2 }]]);
    // After diversity's picks too: the rest, from where it stood after them.
    const vec = (x: number) => [x, Math.sqrt(1 - x * x)];
    const diverse = [
      cand(1, 1.0, { category: 'a' }, NOW, vec(1)),
      cand(2, 0.95, { category: 'a' }, NOW, vec(1)),
      cand(3, 0.9, { category: 'b' }, NOW, vec(0)),
      cand(4, 0.2, { category: 'c' }, NOW, vec(0.5)),
    ];
    const out = runPipeline(diverse, [], { max_per_category: 1, diversity: 0.5 }, { now: NOW, depth: 1, diversityPool: 4, similarity }, null);
    expect(ids(out)).toEqual([1, 3, 4]);
    expect(out.map((x) => x.explain.rerank)).toEqual([[], [{ control: 'max_per_category', moved_from: 3, moved_to: 2 }], [{ control: 'max_per_category', moved_from: 4, moved_to: 3 }]]);
    // Deeper than an item diversity left out as its category was full (2, at depth 2): places in the scored order, as diversity's steps.
    const five = [...diverse.slice(0, 3), cand(4, 0.4, { category: 'b' }, NOW, vec(0)), cand(5, 0.3, { category: 'c' }, NOW, vec(0.5))];
    const deep = runPipeline(five, [], { max_per_category: 1, diversity: 0.3 }, { now: NOW, depth: 2, diversityPool: 5, similarity }, null);
    expect(ids(deep)).toEqual([1, 3, 5]);
    expect(deep.map((x) => x.explain.rerank)).toEqual([[], [{ control: 'diversity', moved_from: 3, moved_to: 2 }], [{ control: 'max_per_category', moved_from: 5, moved_to: 3 }]]);
    expect(ids(runPipeline(pool, [], { exclude_seen: true }, { ...none, seen: (id) => id === 2 }, null))).toEqual([1, 3, 4]);
  });

  it('a rule is in force from its starts_at (inclusive) to its ends_at (exclusive), and only when enabled', () => {
    // starts_at <= now < ends_at (docs/api.md): a rule starting this second applies, one ending this second does not.
    expect(inForce(rule({ starts_at: NOW }), NOW)).toBe(true);
    expect(inForce(rule({ starts_at: NOW + 1 }), NOW)).toBe(false);
    expect(inForce(rule({ ends_at: NOW + 1 }), NOW)).toBe(true);
    expect(inForce(rule({ ends_at: NOW }), NOW)).toBe(false);
    expect(inForce(rule({ starts_at: NOW - 10, ends_at: NOW + 10 }), NOW)).toBe(true);
    expect(inForce(rule({ enabled: false }), NOW)).toBe(false);
  });

  it('max_per_category counts a category in NFC, as rule conditions and search filters compare it: "Café" composed and with e and U+0301 is one category', () => {
    const [composed, decomposed] = ['Caf\u00e9', 'Cafe\u0301'];
    const spelled = [cand(1, 1.0, { category: composed }), cand(2, 0.9, { category: decomposed }), cand(3, 0.8, { category: ['x', decomposed] }), cand(4, 0.7, { category: 'Cafe' })];
    // Until 2026-12-07 two categories: the cap let an item of each spelling through.
    expect(ids(runPipeline(spelled, [], { max_per_category: 1 }, none, null))).toEqual([1, 4]);
    // A list naming both spellings counts once in it.
    expect(ids(runPipeline([cand(1, 1.0, { category: [composed, decomposed] }), cand(2, 0.9, { category: composed })], [], { max_per_category: 2 }, none, null))).toEqual([1, 2]);
  });

  it('max_per_category does not limit items without a category', () => {
    const mixed = [cand(1, 1.0, { category: 'a' }), cand(2, 0.9, {}), cand(3, 0.8, { category: 'a' }), cand(4, 0.7, {}), cand(5, 0.6, {})];
    expect(ids(runPipeline(mixed, [], { max_per_category: 1 }, none, null))).toEqual([1, 2, 4, 5]);
  });

  it('max_per_category counts an item in each of its categories (a list, as rule conditions match its elements) and holds it back when any of them is full', () => {
    const listed = [
      cand(1, 1.0, { category: ['a', 'b'] }, undefined, [1, 0, 0, 0]),
      cand(2, 0.9, { category: 'a' }, undefined, [0, 1, 0, 0]),
      cand(3, 0.8, { category: ['b', 'c'] }, undefined, [0, 0, 1, 0]),
      cand(4, 0.7, { category: ['c', 'c', 7] }, undefined, [0, 0, 0, 1]),
      cand(5, 0.6, { category: [] }, undefined, [0.6, 0.8, 0, 0]),
      cand(6, 0.5, { category: 'c' }, undefined, [0, 0.6, 0.8, 0]),
    ];
    expect(ids(runPipeline(listed, [], { max_per_category: 1 }, none, null))).toEqual([1, 4, 5]);
    expect(ids(runPipeline(listed, [], { max_per_category: 2 }, none, null))).toEqual([1, 2, 3, 4, 5]);
    // An item counts once in a category its list names twice.
    expect(ids(runPipeline([cand(1, 1.0, { category: ['c', 'c'] }), cand(2, 0.9, { category: 'c' })], [], { max_per_category: 2 }, none, null))).toEqual([1, 2]);
    // So does diversity, as it comes to each: no category served more than once.
    const diverse = runPipeline(listed, [], { max_per_category: 1, diversity: 0.5 }, { now: NOW, depth: 6, diversityPool: 6, similarity }, null);
    const served = diverse.flatMap((x) => [...new Set([x.doc.metadata.category].flat().filter((c) => typeof c === 'string'))]);
    expect(new Set(served).size).toBe(served.length);
    expect(ids(diverse)).toContain(5);
  });

  it('exclude_seen unset keeps the items the user saw (an unset control changes nothing)', () => {
    expect(ids(runPipeline(pool, [], {}, { ...none, seen: (id) => id === 2 }, null))).toEqual([1, 2, 3, 4]);
    expect(ids(runPipeline(pool, [], { exclude_seen: false }, { ...none, seen: (id) => id === 2 }, null))).toEqual([1, 2, 3, 4]);
  });

  it('freshness halves every 14 days of age, adds at most its weight, and weighs against relevance scaled so the best is 1', () => {
    expect(FRESHNESS_HALF_LIFE_DAYS).toBe(14);
    const aged = runPipeline([cand(1, 1.0, {}, NOW - 14 * 86_400), cand(2, 0.5, {}, NOW - 28 * 86_400)], [], { freshness_weight: 2 }, none, null);
    expect(aged.map((x) => x.explain.rerank)).toEqual([[{ control: 'freshness_weight', added: expect.closeTo(1, 9) }], [{ control: 'freshness_weight', added: expect.closeTo(0.5, 9) }]]);
    // An item created a moment after now (another container's clock) is as fresh as one created now, no fresher.
    const ahead = runPipeline([cand(1, 1.0, {}, NOW + 86_400)], [], { freshness_weight: 1 }, none, null);
    expect(ahead[0]?.explain.rerank).toEqual([{ control: 'freshness_weight', added: 1 }]);
    // Base scores of 10 and 8 count as 1 and 0.8: a weight of 1 lifts the fresh one above the old one
    // (unscaled, 10 against 8 + 1 would keep the old one first).
    const scaled = runPipeline([cand(1, 10, {}, NOW - 100 * 86_400), cand(2, 8, {}, NOW)], [], { freshness_weight: 1 }, none, null);
    expect(ids(scaled)).toEqual([2, 1]);
    expect(scaled[0]?.score).toBeCloseTo(1.8, 9);
  });

  it('explains only the controls set, and ends each explanation with the score served', () => {
    // Popularity alone: no freshness step (an unset control changes nothing, in the explanation too).
    const pop = runPipeline(pool, [], { popularity_weight: 1 }, { ...none, popularity: (id) => (id === 4 ? 1 : 0) }, null);
    expect(pop.map((x) => x.explain.rerank.map((r) => r.control))).toEqual([['popularity_weight'], ['popularity_weight'], ['popularity_weight'], ['popularity_weight']]);
    expect(pop.every((x) => x.explain.final_score === x.score)).toBe(true);
    expect(pop[0]?.explain.final_score).toBeCloseTo(1.4, 9);
  });

  it('scales relevance by the best of all candidates when every one is lifted', () => {
    // Two named items only: 4 and 2 count as 1 and 0.5, so the fresh one (+1) leads the old one (+~0).
    const named = [
      { ...cand(1, 4, {}, NOW - 365 * 86_400), lifted: true },
      { ...cand(2, 2, {}, NOW), lifted: true },
    ];
    const out = runPipeline(named, [], { freshness_weight: 1 }, none, null);
    expect(ids(out)).toEqual([2, 1]);
    expect(out[0]?.score).toBeCloseTo(1.5, 9);
  });

  it('diversity orders the first 100 positions at most; the rest follow in score order', () => {
    const oneHot = (d: number) => Array.from({ length: 101 }, (_, k) => (k === d ? 1 : 0));
    // 100 dissimilar items, then A (more relevant, but like the first item) and B (less relevant, like none).
    const many = Array.from({ length: 100 }, (_, k) => cand(k + 1, 1 - k / 1000, {}, NOW, oneHot(k)));
    const a = cand(201, 0.5, {}, NOW, oneHot(0));
    const b = cand(202, 0.45, {}, NOW, oneHot(100));
    const out = runPipeline([...many, a, b], [], { diversity: 0.5 }, { ...none, similarity, depth: 102 }, null);
    // Diversity at position 101 would choose B; past the 100th position, A keeps its place by score.
    expect(ids(out).slice(100)).toEqual([201, 202]);
  });

  it('freshness and popularity add to relevance scaled to 0-1, and say so', () => {
    const fresh = [cand(1, 1.0, {}, NOW - 100 * 86_400), cand(2, 0.8, {}, NOW)];
    const out = runPipeline(fresh, [], { freshness_weight: 1 }, none, null);
    expect(ids(out)).toEqual([2, 1]);
    expect(out[0]?.explain.rerank).toEqual([{ control: 'freshness_weight', added: 1 }]);
    const pop = runPipeline(pool, [], { popularity_weight: 2 }, { ...none, popularity: (id) => (id === 4 ? 1 : 0) }, null);
    expect(ids(pop)[0]).toBe(4);
  });

  it("a candidate lifted by its ranking (search's names first) is no measure of the others' relevance", () => {
    // 2 is more relevant, 3 more popular: popularity at 0.3 leaves 2 first...
    const two = [cand(2, 1.0), cand(3, 0.8)];
    const popular = { ...none, popularity: (id: number) => (id === 3 ? 0.5 : 0) };
    expect(ids(runPipeline(two, [], { popularity_weight: 0.3 }, popular, null))).toEqual([2, 3]);
    // ...whether or not an item named by the query, lifted far above them, is there.
    const named = { ...cand(1, 4.0), lifted: true };
    expect(ids(runPipeline([named, ...two], [], { popularity_weight: 0.3 }, popular, null))).toEqual([1, 2, 3]);
    // Diversity as well: 2 and 3 keep their order behind it.
    const near = [{ ...cand(1, 4.0, {}, NOW, [1, 0]), lifted: true }, cand(2, 1.0, {}, NOW, [0, 1]), cand(3, 0.95, {}, NOW, [1, 1])];
    expect(ids(runPipeline(near, [], { diversity: 0.3 }, { ...none, similarity }, null))).toEqual([1, 2, 3]);
  });

  it('diversity picks a dissimilar second item (maximal marginal relevance)', () => {
    const near = [cand(1, 1.0, {}, NOW, [1, 0]), cand(2, 0.95, {}, NOW, [1, 0]), cand(3, 0.8, {}, NOW, [0, 1])];
    expect(ids(runPipeline(near, [], {}, { ...none, similarity }, null))).toEqual([1, 2, 3]);
    const out = runPipeline(near, [], { diversity: 0.5 }, { ...none, similarity }, null);
    expect(ids(out)).toEqual([1, 3, 2]);
    expect(out[1]?.explain.rerank).toEqual([{ control: 'diversity', moved_from: 3, moved_to: 2 }]);
  });
});

describe('diversity', () => {
  it('chooses what eager maximal marginal relevance chooses, on random vectors', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 20; round++) {
      const n = 80;
      const pool = Array.from({ length: n }, (_, i) => {
        const v = Array.from({ length: 16 }, () => rnd() - 0.5);
        const norm = Math.hypot(...v);
        return cand(
          i + 1,
          1 - i / n + rnd() * 0.01,
          {},
          NOW,
          v.map((x) => x / norm),
        );
      });
      const lambda = 0.1 + rnd() * 0.8;
      // Eager: every candidate against every chosen item, at every step.
      const sorted = [...pool].sort((a, b) => b.score - a.score || a.id - b.id);
      const max = sorted[0]!.score;
      const chosen: Candidate[] = [];
      const left = sorted.slice(0, 50);
      while (chosen.length < 20) {
        let best = -1;
        let bestV = -Infinity;
        left.forEach((c, k) => {
          const sim = Math.max(0, ...chosen.map((x) => c.doc.vector!.reduce((a, y, d) => a + y * x.doc.vector![d]!, 0)));
          const v = (1 - lambda) * (c.score / max) - lambda * sim;
          if (v > bestV) (bestV = v), (best = k);
        });
        chosen.push(left.splice(best, 1)[0]!);
      }
      const got = runPipeline(pool, [], { diversity: lambda }, { now: NOW, depth: 20, similarity }, null);
      expect(ids(got.slice(0, 20))).toEqual(ids(chosen));
      expect(new Set(ids(got)).size).toBe(n);
    }
  });

  it('with max_per_category, orders the same list whatever the depth (pages continue each other), within the cap', () => {
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 10; round++) {
      const n = 60;
      const pool = Array.from({ length: n }, (_, i) => {
        const v = Array.from({ length: 8 }, () => rnd() - 0.5);
        const norm = Math.hypot(...v);
        return cand(
          i + 1,
          1 - i / n,
          { category: ['shoes', 'hats', 'bags', 'socks', 'caps'][Math.floor(rnd() * 5)] },
          NOW,
          v.map((x) => x / norm),
        );
      });
      const controls = { diversity: 0.2 + rnd() * 0.6, max_per_category: 3 };
      const at = (depth: number) => ids(runPipeline(pool, [], controls, { now: NOW, depth, diversityPool: n, similarity }, null));
      const whole = at(40);
      expect(whole.length).toBe(15); // five categories, three of each
      // A page at offset o of limit l shows positions o to o + l - 1 of the list ordered to depth o + l.
      for (let depth = 1; depth < 40; depth++) {
        const list = at(depth);
        expect(list.slice(0, depth)).toEqual(whole.slice(0, depth));
        // As many after it whatever the depth (has_more), each category within the cap.
        expect(list.length).toBe(whole.length);
      }
    }
  });
});

/** A Running experiment in context 1 (not scoped to a segment) with these variants. */
const runningExperiment = <V>(variants: V[]) => ({
  id: 5,
  name: 'ab',
  context_id: 1,
  segment_id: null as number | null,
  status: 'Running' as const,
  attribution_window_seconds: 86_400,
  started_at: NOW,
  stopped_at: null,
  created: NOW,
  updated_at: NOW,
  variants,
});

describe('the plan of a context', () => {
  // Lists are built newest first: each event made has a lower id than the one before.
  let nextId = 1_000_000;
  const ev = (type: string, daysAgo: number): RecentEvent => ({ id: nextId--, item_id: '1', type, created: NOW - daysAgo * 86_400 });
  it('decides segment membership from the events inside the window', () => {
    const events = [ev('purchase', 1), ev('purchase', 40), ev('click', 2)];
    expect(isMember({ event_type: 'purchase', min_count: 1, within_days: 30 }, events, NOW)).toBe(true);
    expect(isMember({ event_type: 'purchase', min_count: 2, within_days: 30 }, events, NOW)).toBe(false);
    expect(isMember({ event_type: 'purchase', min_count: 2, within_days: 60 }, events, NOW)).toBe(true);
    expect(
      isMember(
        {
          all: [
            { event_type: 'purchase', min_count: 1, within_days: 30 },
            { event_type: 'click', min_count: 1, within_days: 1 },
          ],
        },
        events,
        NOW,
      ),
    ).toBe(false);
    expect(
      isMember(
        {
          any: [
            { event_type: 'view', min_count: 1, within_days: 30 },
            { event_type: 'click', min_count: 1, within_days: 3 },
          ],
        },
        events,
        NOW,
      ),
    ).toBe(true);
  });

  const config = (over: Partial<ControlConfig>): ControlConfig => ({ rules: [], segments: [], experiments: [], rerank: [], contexts: [1, 2], ...over });
  const deps = (cfg: ControlConfig, events: RecentEvent[] = [], exists = false): ControlDeps & { reads: number } => {
    const d = {
      reads: 0,
      config: async () => {
        d.reads++;
        return cfg;
      },
      contextExists: async () => exists,
      userEvents: async () => ({ events, cut: false }),
      erasedUser: async () => undefined,
    };
    return d;
  };

  it('counts an event received exactly within_days ago as inside the window, in the first read and the full one alike', () => {
    const def = { event_type: 'purchase', min_count: 1, within_days: 30 };
    const edge: RecentEvent[] = [{ id: 1, item_id: '1', type: 'purchase', created: NOW - 30 * 86_400 }];
    const past: RecentEvent[] = [{ id: 1, item_id: '1', type: 'purchase', created: NOW - 30 * 86_400 - 1 }];
    // A member decided on the latest events must stay one when decided on all of them (and the other way round).
    expect(isMember(def, edge, NOW)).toBe(true);
    expect(decides(def, edge, NOW, true)).toBe(true);
    expect(isMember(def, past, NOW)).toBe(false);
    expect(decides(def, past, NOW, true)).toBe(false);
  });

  it("applies a segment-scoped rule by that rule's own segment, not by the user's membership of another", async () => {
    const seg = (id: number, event_type: string): ControlConfig['segments'][number] => ({
      id,
      name: `s${id}`,
      description: '',
      definition: { event_type, min_count: 1, within_days: 30 },
      size_estimate: null,
      size_computed_at: null,
      created: NOW,
      updated_at: NOW,
    });
    const cfg = config({ rules: [rule({ id: 1, segment_id: 9 }), rule({ id: 2, segment_id: 10 })], segments: [seg(9, 'purchase'), seg(10, 'add_to_cart')] });
    // A buyer who never added to a cart: the buyers' rule only.
    const plan = await planFor(deps(cfg, [ev('purchase', 1)]), `plan-${Math.random()}`, 1, 'u1', NOW);
    expect(plan.rules.map((r) => r.id)).toEqual([1]);
  });

  it('keeps the rules of its context in force, segment-scoped ones for members only; 404 for a context the tenant lacks', async () => {
    const cfg = config({
      rules: [
        rule({ id: 1, context_id: 1 }),
        rule({ id: 2, context_id: 2 }),
        rule({ id: 3, context_id: 1, enabled: false }),
        rule({ id: 4, context_id: 1, starts_at: NOW + 10 }),
        rule({ id: 5, context_id: 1, ends_at: NOW }),
        rule({ id: 6, context_id: 1, segment_id: 9 }),
      ],
      segments: [
        { id: 9, name: 'buyers', description: '', definition: { event_type: 'purchase', min_count: 1, within_days: 30 }, size_estimate: null, size_computed_at: null, created: NOW, updated_at: NOW },
      ],
      rerank: [{ id: 1, context_id: 1, updated_at: NOW, max_per_category: 2, diversity: null as unknown as undefined }],
    });
    const t = `plan-${Math.random()}`;
    const member = await planFor(deps(cfg, [ev('purchase', 1)]), t, 1, 'u1', NOW);
    expect(member.rules.map((r) => r.id)).toEqual([1, 6]);
    expect(member.controls).toEqual({ max_per_category: 2 });
    const other = await planFor(deps(cfg, [ev('click', 1)]), `${t}x`, 1, 'u2', NOW);
    expect(other.rules.map((r) => r.id)).toEqual([1]);
    const missing = planFor(deps(cfg), `${t}y`, 77, 'u1', NOW);
    await expect(missing).rejects.toBeInstanceOf(NotFound);
    await expect(missing).rejects.toMatchObject({ code: 'context_not_found' });
    // A context from before the control plane (no marker) is found by a direct read.
    expect((await planFor(deps(cfg, [], true), `${t}z`, 77, 'u1', NOW)).rules).toEqual([]);
  });

  it('assigns a running experiment variant stickily, with its rerank override; reads the config once within the cache window', async () => {
    const exp = runningExperiment([
      { name: 'a', endpoint_name: 'main', traffic_percent: 50 },
      { name: 'b', endpoint_name: 'next', traffic_percent: 50, rerank: { diversity: 0.3 } },
    ]);
    const d = deps(config({ experiments: [exp, { ...exp, id: 6, context_id: 2 }] }));
    const t = `exp-${Math.random()}`;
    const seen = new Map<string, string>();
    for (let round = 0; round < 2; round++) {
      for (let u = 0; u < 200; u++) {
        const p = await planFor(d, t, 1, `user-${u}`, NOW);
        const v = p.assignment?.variant as string;
        if (round === 0) seen.set(`user-${u}`, v);
        else expect(v).toBe(seen.get(`user-${u}`));
        expect(p.controls).toEqual(v === 'b' ? { diversity: 0.3 } : {});
        expect(p.assignment?.endpoint).toBe(v === 'b' ? 'next' : 'main');
      }
    }
    const b = [...seen.values()].filter((v) => v === 'b').length;
    expect(b).toBeGreaterThan(70);
    expect(b).toBeLessThan(130);
    expect(d.reads).toBe(1);
    expect((await planFor(d, t, 1, undefined, NOW)).assignment).toBeNull();
  });

  it('serves the Running experiment whose start held before one still marked as starting past STARTING_SECONDS (its check stopped: a crash)', async () => {
    const exp = runningExperiment([
      { name: 'a', endpoint_name: 'main', traffic_percent: 50 },
      { name: 'b', endpoint_name: 'next', traffic_percent: 50 },
    ]);
    const unchecked = { ...exp, id: 4, started_at: NOW - STARTING_SECONDS - 5 };
    // Listed first, as the older experiment is.
    const p = await planFor(deps(config({ experiments: [unchecked, exp], starting: [4] })), `held-${Math.random()}`, 1, 'u1', NOW);
    expect(p.assignment?.experiment.id).toBe(5);
    // Alone, it is served (taken as held: its check will not come).
    const alone = await planFor(deps(config({ experiments: [unchecked], starting: [4] })), `alone-${Math.random()}`, 1, 'u1', NOW);
    expect(alone.assignment?.experiment.id).toBe(4);
  });

  it("serves the context's own rerank controls, each replaced by the Running variant's where it sets one; a request bypassing the experiment keeps the context's", async () => {
    const exp = runningExperiment([
      { name: 'a', endpoint_name: 'main', traffic_percent: 100, rerank: { diversity: 0.1, freshness_weight: 0.7 } },
      { name: 'b', endpoint_name: 'next', traffic_percent: 0 },
    ]);
    const own = { exclude_seen: true, popularity_weight: 0.2, freshness_weight: 0.1, diversity: 0.5, max_per_category: 3 };
    const cfg = config({
      // A Draft experiment of the context (listed first) assigns nobody; another context's controls are not this one's.
      experiments: [{ ...exp, id: 4, status: 'Draft' as const }, exp],
      rerank: [
        { id: 2, context_id: 2, updated_at: NOW, popularity_weight: 9 },
        { id: 1, context_id: 1, updated_at: NOW, ...own },
      ],
    });
    const t = `controls-${Math.random()}`;
    const p = await planFor(deps(cfg), t, 1, 'u1', NOW);
    expect(p.assignment).toMatchObject({ experiment: { id: 5 }, variant: 'a' });
    // Every control of the context comes through; the variant's two replace the context's.
    expect(p.controls).toEqual({ ...own, diversity: 0.1, freshness_weight: 0.7 });
    // An explicit endpoint (experiment: false): no variant, the context's controls as they are.
    const bypass = await planFor(deps(cfg), t, 1, 'u1', NOW, undefined, { experiment: false });
    expect(bypass.assignment).toBeNull();
    expect(bypass.controls).toEqual(own);
  });

  it('tells the variant before reading segments when the experiment is not scoped to one, after when it is', async () => {
    const exp = runningExperiment([
      { name: 'a', endpoint_name: 'main', traffic_percent: 50 },
      { name: 'b', endpoint_name: 'next', traffic_percent: 50 },
    ]);
    const segment = {
      id: 9,
      name: 'buyers',
      description: '',
      definition: { event_type: 'purchase', min_count: 1, within_days: 30 },
      size_estimate: null,
      size_computed_at: null,
      created: NOW,
      updated_at: NOW,
    };
    const order: string[] = [];
    const traced = (c: ControlConfig, events: RecentEvent[]): ControlDeps => ({
      config: async () => c,
      contextExists: async () => false,
      userEvents: async () => (order.push('read'), { events, cut: false }),
      erasedUser: async () => undefined,
    });
    const rules = [rule({ id: 1, context_id: 1, segment_id: 9 })];
    const open = await planFor(traced(config({ rules, segments: [segment], experiments: [exp] }), [ev('purchase', 1)]), `early-${Math.random()}`, 1, 'u', NOW, (a) =>
      order.push(`assigned ${a.variant}`),
    );
    expect(order).toEqual([`assigned ${open.assignment?.variant}`, 'read']);
    order.length = 0;
    const scoped = { ...exp, segment_id: 9 };
    const member = await planFor(traced(config({ rules, segments: [segment], experiments: [scoped] }), [ev('purchase', 1)]), `late-${Math.random()}`, 1, 'u', NOW, (a) =>
      order.push(`assigned ${a.variant}`),
    );
    expect(order).toEqual(['read', `assigned ${member.assignment?.variant}`]);
    order.length = 0;
    const outsider = await planFor(traced(config({ rules, segments: [segment], experiments: [scoped] }), [ev('click', 1)]), `out-${Math.random()}`, 1, 'u', NOW, (a) =>
      order.push(`assigned ${a.variant}`),
    );
    expect(outsider.assignment).toBeNull();
    expect(order).toEqual(['read']);
  });

  it('decides a segment on the latest events when they can, and reads more only when older events could change it', async () => {
    const def = (event_type: string, min_count: number, within_days: number) => ({ event_type, min_count, within_days });
    const hundred = Array.from({ length: SEGMENT_FIRST_READ }, (_, k) => ev(k % 2 ? 'view' : 'purchase', k / 100));
    expect(decides(def('purchase', 3, 30), hundred, NOW, false)).toBe(true);
    // 50 purchases read, 60 wanted: older events may hold more, unless these are all there are or the oldest is before the window.
    expect(decides(def('purchase', 60, 30), hundred, NOW, false)).toBeUndefined();
    expect(decides(def('purchase', 60, 30), hundred, NOW, true)).toBe(false);
    expect(decides(def('purchase', 60, 30), [...hundred, ev('view', 31)], NOW, false)).toBe(false);
    expect(decides({ any: [def('purchase', 60, 30), def('view', 1, 30)] }, hundred, NOW, false)).toBe(true);
    expect(decides({ all: [def('purchase', 60, 30), def('click', 1, 30)] }, hundred, NOW, false)).toBeUndefined();
    expect(decides({ all: [def('purchase', 60, 30), def('click', 1, 30)] }, [...hundred, ev('view', 31)], NOW, false)).toBe(false);

    const segment = (id: number, definition: SegmentDefinition) => ({ id, name: `s${id}`, description: '', definition, size_estimate: null, size_computed_at: null, created: NOW, updated_at: NOW });
    const cfg = (definition: SegmentDefinition) => config({ rules: [rule({ id: 1, context_id: 1, segment_id: 9 })], segments: [segment(9, definition)] });
    const many = [...hundred, ...Array.from({ length: 400 }, () => ev('purchase', 2))];
    const limits: number[] = [];
    const reading = (c: ControlConfig): ControlDeps => ({
      config: async () => c,
      contextExists: async () => false,
      userEvents: async (_t, _u, limit) => (limits.push(limit), { events: many.slice(0, limit), cut: false }),
      erasedUser: async () => undefined,
    });
    // Decided by the first read (4 x min_count, at least 10): handed on, but too few for a caller wanting more of the latest.
    const decided = await planFor(reading(cfg(def('purchase', 3, 30))), `seg-${Math.random()}`, 1, 'u', NOW);
    expect(limits).toEqual([12]);
    expect(decided.rules.map((r) => r.id)).toEqual([1]);
    expect(decided.userEvents).toEqual({ events: many.slice(0, 12), all: false });
    expect(latestFromPlan(decided, 12)).toEqual(many.slice(0, 12));
    expect(latestFromPlan(decided, 13)).toBeUndefined();
    // The events after an id: from the plan when its oldest event is not after it (ids grow), else not known.
    const ids12 = many.slice(0, 12).map((e) => e.id);
    expect(afterFromPlan(decided, ids12[5] as number, 100)?.map((e) => e.id)).toEqual(ids12.slice(0, 5));
    expect(afterFromPlan(decided, ids12[11] as number, 3)?.map((e) => e.id)).toEqual(ids12.slice(0, 3));
    expect(afterFromPlan(decided, (ids12[11] as number) - 1, 100)).toBeUndefined();
    limits.length = 0;
    await planFor(reading(cfg({ any: [def('purchase', 1, 30), def('view', 30, 30)] })), `seg-${Math.random()}`, 1, 'u', NOW);
    expect(limits).toEqual([SEGMENT_FIRST_READ]);
    // A user with fewer events than read: all of them, handed on.
    const few: ControlDeps = {
      config: async () => cfg(def('purchase', 3, 30)),
      contextExists: async () => false,
      userEvents: async () => ({ events: hundred.slice(0, 4), cut: false }),
      erasedUser: async () => undefined,
    };
    const all = await planFor(few, `seg-${Math.random()}`, 1, 'u', NOW);
    expect(all.userEvents).toEqual({ events: hundred.slice(0, 4), all: true });
    expect(latestFromPlan(all, 50)).toHaveLength(4);
    expect(afterFromPlan(all, 0, 100)).toHaveLength(4);
    // Not decided by the first read: the latest SEGMENT_EVENTS are read, make the user a member and are handed on.
    limits.length = 0;
    const more = await planFor(reading(cfg(def('purchase', 200, 30))), `seg-${Math.random()}`, 1, 'u', NOW);
    expect(limits).toEqual([SEGMENT_FIRST_READ, SEGMENT_EVENTS]);
    expect(more.rules.map((r) => r.id)).toEqual([1]);
    expect(more.userEvents?.events).toHaveLength(SEGMENT_EVENTS);
  });

  it("records a request served in the experiment with the user's erasure's end: undefined never erased, the end once ended, Infinity while it runs or when the marker cannot be read", async () => {
    const exp = runningExperiment([{ name: 'a', endpoint_name: 'main', traffic_percent: 100 }]);
    const d = deps(config({ experiments: [exp] }));
    const t = `rec-${Math.random()}`;
    const recorded: (number | undefined)[] = [];
    const store = { recordExposure: async (_t: string, e: { erasedThrough?: number }) => void recorded.push(e.erasedThrough) } as unknown as ExposureStore;
    for (const erased of [
      Promise.resolve(undefined),
      Promise.resolve({ user_id: 'u', requested_at: NOW - 20, completed_at: NOW - 10, models_checked_through: 0 }),
      Promise.resolve({ user_id: 'u', requested_at: NOW - 20, completed_at: null, models_checked_through: 0 }),
      Promise.reject(new Error('marker read throttled')),
    ]) {
      const p = planAndRecord(d, store, t, 1, 'u', NOW, { requestId: `r-${recorded.length}`, authorized: Promise.resolve() }, erased);
      await p.plan;
      p.accept();
      await p.recorded;
    }
    expect(recorded).toEqual([undefined, NOW - 10, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]);
  });

  it('reads the records again at once for a context newer than its cached read', async () => {
    let reads = 0;
    const live: ControlDeps = {
      config: async () => (++reads === 1 ? config({}) : config({ contexts: [1, 2, 3], rules: [rule({ id: 9, context_id: 3 })] })),
      contextExists: async () => false,
      userEvents: async () => ({ events: [], cut: false }),
      erasedUser: async () => undefined,
    };
    const t = `new-${Math.random()}`;
    expect((await planFor(live, t, 1, 'u', NOW)).rules).toEqual([]);
    expect((await planFor(live, t, 3, 'u', NOW)).rules.map((r) => r.id)).toEqual([9]);
    expect((await planFor(live, t, 3, 'u', NOW)).rules.map((r) => r.id)).toEqual([9]);
    expect(reads).toBe(2);
  });

  it('answers 404 for a missing context for at most MISSING_CONTEXT_MS: a context created after such a request then serves, and a failed read is not kept', async () => {
    let ms = 1_700_000_000_000;
    const restore = setClock({ nowMs: () => ms });
    try {
      let contexts = [1];
      let reads = 0;
      let existsReads = 0;
      let failing = false;
      const live: ControlDeps = {
        config: async () => {
          reads++;
          return config({ contexts });
        },
        contextExists: async () => {
          existsReads++;
          if (failing) throw new Error('table unreachable');
          return false;
        },
        userEvents: async () => ({ events: [], cut: false }),
        erasedUser: async () => undefined,
      };
      const t = `missing-${Math.random()}`;
      await expect(planFor(live, t, 5, 'u', NOW)).rejects.toMatchObject({ code: 'context_not_found' });
      const before = [reads, existsReads];
      // Asked again at once: the 404 stands, without a read.
      await expect(planFor(live, t, 5, 'u', NOW)).rejects.toMatchObject({ code: 'context_not_found' });
      expect([reads, existsReads]).toEqual(before);
      // The context is created; within MISSING_CONTEXT_MS it serves (CONTROL_CACHE_MS has not passed).
      contexts = [1, 5];
      ms += MISSING_CONTEXT_MS;
      expect(MISSING_CONTEXT_MS).toBeLessThan(CONTROL_CACHE_MS);
      expect((await planFor(live, t, 5, 'u', NOW)).contextId).toBe(5);
      // A direct read that fails fails its request, and the next reads again.
      failing = true;
      ms += MISSING_CONTEXT_MS;
      await expect(planFor(live, t, 6, 'u', NOW)).rejects.toThrow('table unreachable');
      failing = false;
      await expect(planFor(live, t, 6, 'u', NOW)).rejects.toMatchObject({ code: 'context_not_found' });
    } finally {
      restore();
    }
  });
});

describe('the matches past the pool (orderAfter)', () => {
  it('applies the plan exclude_seen but not popularity: it orders the pool only (docs/api.md)', () => {
    const plan = { contextId: 1, at: nowSeconds(), rules: [], controls: { popularity_weight: 1, exclude_seen: true }, assignment: null };
    const helpers = { now: NOW, popularity: (id: number) => (id === 3 ? 1 : 0), seen: (id: number) => id === 2 };
    const matches = [cand(1, 0.9), cand(2, 0.8), cand(3, 0.7)];
    // In the pool, popularity puts item 3 first; past it the matches keep their relevance order.
    expect(ids([...order(matches, plan, helpers, null)])).toEqual([3, 1]);
    const after = orderAfter([], matches, plan, helpers, null);
    expect(ids([...after])).toEqual([1, 3]);
    expect(after.map((x) => x.explain?.rerank)).toEqual([[], []]);
  });
});
