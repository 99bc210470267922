import { describe, expect, it } from 'vitest';
import { SearchView } from '../../shared/search/catalog.ts';
import { RANKING } from '../../shared/search/constants.ts';
import { HashingEmbedding, itemText, normalize } from '../../shared/search/embedding.ts';
import { idfOf, NO_FILTER, SearchIndex, type SearchDoc } from '../../shared/search/engine.ts';
import { ASK, FAILS, PASSES } from '../../shared/search/types.ts';
import type { Json } from '../../shared/domain/types.ts';
import { ColumnCache, facetColumn, KEPT, numberColumn, type FacetColumn } from '../../shared/search/columns.ts';
import { seededRandom } from '../../shared/random.ts';
import { FACET_VALUES, FacetCounter, SearchFacets } from '../../shared/search/facets.ts';
import { clauseFilter, coreFilter } from '../../shared/search/filters.ts';
import { matches } from '../../shared/control/pipeline.ts';
import type { FilterClause } from '../../shared/schemas/search.ts';
import { DEFAULT_TAGS, highlightText, SNIPPET_CHARS, SNIPPET_SCAN, snippet, snippetScan, stopWordsAsked, withPhrasesHeld } from '../../shared/search/highlight.ts';
import { PreparedDelta, rank } from '../../shared/search/rank.ts';
import { IVF_MIN } from '../../shared/search/ivf.ts';
import { SortedPage } from '../../shared/search/sort.ts';
import { phraseTerms } from '../../shared/search/text.ts';
import { applySynonyms, synonymRules, synonymsIn, type SynonymSet } from '../../shared/search/synonyms.ts';

const emb = new HashingEmbedding(64);
const doc = (id: number, name: string, metadata: SearchDoc['metadata'] = {}): SearchDoc => ({
  id,
  name,
  description: '',
  metadata,
  active: true,
  created: 1,
  updated_at: 1,
  embedding_updated_at: 1,
  vector: emb.embedOne(name),
});

describe('ranking visitor (facets and sort over every match)', () => {
  // Over 500 keyword matches: hybrid scores the strongest with vectors and only counts the tail
  // (which cannot enter the page) unless a visitor asks to see every match.
  const docs = Array.from({ length: 900 }, (_, i) => doc(i + 1, `widget ${'extra '.repeat(i % 7)}${i}`, { colour: ['red', 'blue', 'green'][i % 3] as string, size: i }));
  const index = SearchIndex.build(docs, 64, 1);
  const delta = new PreparedDelta({ docs: [doc(901, 'widget fresh', { colour: 'red', size: 5000 })], masked: new Set() });
  const req = (profile: Float32Array | null) => ({ query: 'widget', mode: 'hybrid' as const, filter: NO_FILTER, queryVector: emb.embedOne('widget'), profile });

  for (const profile of [null, emb.embedOne('widget 3')]) {
    it(`hands every match to the visitor (${profile ? 'with' : 'without'} a taste profile)`, () => {
      const facets = new FacetCounter(['colour', 'size']);
      const ranked = rank(index, delta, req(profile), { limit: 5, visit: facets.over({ index, delta }) });
      expect(ranked.total).toBe(901);
      const f = facets.result();
      expect(f.colour?.values).toEqual([
        { value: 'red', count: 301 },
        { value: 'blue', count: 300 },
        { value: 'green', count: 300 },
      ]);
      expect(f.size).toMatchObject({ count: 901, min: 0, max: 5000 });
      // Every key asked for is a key of the answer, those Object.prototype has too.
      const odd = new FacetCounter(['__proto__', 'constructor', 'colour']);
      rank(index, delta, req(profile), { limit: 5, visit: odd.over({ index, delta }) });
      const none = { count: 0, values: [], values_truncated: false, min: null, max: null };
      expect(JSON.parse(JSON.stringify(odd.result()))).toEqual({ ['__proto__']: none, constructor: none, colour: f.colour });
      // The page is the same with or without a visitor.
      const plain = rank(index, delta, req(profile), { limit: 5 });
      expect(ranked.hits.map((h) => h.doc.id)).toEqual(plain.hits.map((h) => h.doc.id));
      expect(plain.total).toBe(901);
    });
  }

  it('sorts every match by a numeric key in pages that neither repeat nor skip', () => {
    const seen: number[] = [];
    let after: { value: number | null; id: number; builtAt: number } | undefined;
    for (;;) {
      const page = new SortedPage({ field: 'metadata.size', order: 'desc' }, 100, after);
      rank(index, delta, req(null), { limit: 1, visit: page.over({ index, delta }) });
      const slice = page.hits.slice(0, 100);
      seen.push(...slice.map((h) => h.doc.id));
      const last = slice[slice.length - 1];
      if (page.hits.length <= 100 || !last) break;
      after = { value: last.value, id: last.doc.id, builtAt: 1 };
    }
    expect(seen).toEqual([901, ...Array.from({ length: 900 }, (_, i) => 900 - i)]);
  });
});

describe('facets and sort read from columns', () => {
  // Metadata of every shape facets and sort meet: strings, numbers, booleans, lists (with
  // repeated and mixed elements), null, objects, a string "true" beside the boolean, keys named
  // like Object.prototype's, and keys absent; split between a build and a delta that replaces
  // and deletes some of the build's documents.
  let seed = 11;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const value = (): SearchDoc['metadata'][string] =>
    pick([
      () => pick(['red', 'blue', 'true', 'green']),
      () => Math.round(rand() * 1000) / 10 - 20,
      () => rand() < 0.5,
      () => null,
      () => ({ nested: 'x' }),
      () => [pick(['red', 'blue']), pick(['red', 'blue']), true, 3, -7.5, { o: 1 }],
      () => [],
    ])();
  const keys = ['a', 'b', 'constructor', 'missing'];
  const metadata = () => Object.fromEntries(keys.slice(0, 3).flatMap((k) => (rand() < 0.8 ? [[k, value()]] : [])));
  const docs = Array.from({ length: 700 }, (_, i) => ({ ...doc(i + 1, `widget ${pick(['one', 'two', 'three'])} ${i % 13}`, metadata()), created: Math.floor(rand() * 50) }));
  const index = SearchIndex.build(docs, 64, 1);
  const changed = Array.from({ length: 60 }, (_, i) => doc(i * 7 + 1, `widget ${pick(['one', 'two', 'fresh'])}`, metadata()));
  const added = Array.from({ length: 40 }, (_, i) => doc(800 + i, `widget fresh ${i}`, metadata()));
  const delta = new PreparedDelta({ docs: [...changed, ...added], masked: new Set([3, 5, 9]) }, index);
  const N = index.docs.length;
  const docOf = (key: number) => (key < N ? (index.docs[key] as SearchDoc) : delta.docAt(key - N));

  /** Facets as counted from the documents themselves (the definition in facets.ts). */
  function reference(matches: SearchDoc[], key: string) {
    let count = 0;
    let min = Infinity;
    let max = -Infinity;
    const strings = new Map<string, number>();
    let trues = 0;
    let falses = 0;
    // Whether `x` is a value (a string, number or boolean; not an object or null).
    const one = (x: unknown): boolean => {
      if (typeof x === 'string') strings.set(x, (strings.get(x) ?? 0) + 1);
      else if (typeof x === 'number') {
        min = Math.min(min, x);
        max = Math.max(max, x);
      } else if (x === true) trues += 1;
      else if (x === false) falses += 1;
      else return false;
      return true;
    };
    for (const d of matches) {
      if (!Object.hasOwn(d.metadata, key)) continue;
      const v = d.metadata[key];
      if (v === null || v === undefined) continue;
      // Counted when it holds a value: an object, [] or a list of objects has none.
      let valued = false;
      for (const x of Array.isArray(v) ? new Set(v) : [v]) valued = one(x) || valued;
      if (valued) count += 1;
    }
    const values: { value: string | boolean; count: number }[] = [...strings].map(([value, n]) => ({ value, count: n }));
    if (trues) values.push({ value: true, count: trues });
    if (falses) values.push({ value: false, count: falses });
    values.sort((x, y) => y.count - x.count || (String(x.value) < String(y.value) ? -1 : String(x.value) > String(y.value) ? 1 : 0));
    return { count, values, values_truncated: false, min: min === Infinity ? null : min, max: max === -Infinity ? null : max };
  }

  for (const query of ['widget', 'fresh', 'one 3', '']) {
    it(`count what the documents hold, build and delta together ("${query}")`, () => {
      const r = { query, mode: 'keyword' as const, filter: NO_FILTER, queryVector: null, profile: null };
      const matched: SearchDoc[] = [];
      rank(index, delta, r, { limit: 3, visit: (key) => matched.push(docOf(key)) });
      expect(matched.length).toBeGreaterThan(0);
      const facets = new FacetCounter(keys);
      const ranked = rank(index, delta, r, { limit: 3, visit: facets.over({ index, delta }) });
      expect(ranked.total).toBe(matched.length);
      const got = facets.result();
      for (const k of keys) expect(got[k]).toEqual(reference(matched, k));
    });
  }

  it('count only the matches with a value, the same from a build and from a delta', () => {
    // An object (a nested key's parent), an empty list and a list of objects and nulls have the
    // key but no value: not counted, whether the item is in the build or only in the delta.
    const shapes: Record<string, Json>[] = [{ dims: { w: 3 } }, { dims: [] }, { dims: [{ w: 1 }, null] }, { dims: 'wide' }, { dims: [4, { w: 1 }] }, { dims: false }, {}];
    const items = shapes.map((m, i) => doc(2000 + i, `shelf ${i}`, m));
    const want = {
      count: 3,
      values: [
        { value: false, count: 1 },
        { value: 'wide', count: 1 },
      ],
      values_truncated: false,
      min: 4,
      max: 4,
    };
    const r = { query: 'shelf', mode: 'keyword' as const, filter: NO_FILTER, queryVector: null, profile: null };
    const count = (idx: SearchIndex, dl: PreparedDelta) => {
      const facets = new FacetCounter(['dims']);
      expect(rank(idx, dl, r, { limit: 3, visit: facets.over({ index: idx, delta: dl }) }).total).toBe(shapes.length);
      return facets.result().dims;
    };
    const built = SearchIndex.build(items, 64, 1);
    expect(count(built, new PreparedDelta({ docs: [], masked: new Set() }, built))).toEqual(want);
    const empty = SearchIndex.build([doc(1, 'other')], 64, 1);
    expect(count(empty, new PreparedDelta({ docs: items, masked: new Set() }, empty))).toEqual(want);
  });

  it('follow the delta when it changes', () => {
    const fresh = new PreparedDelta({ docs: [doc(901, 'gadget', { a: 'violet' })], masked: new Set() }, index);
    const count = () => {
      const facets = new FacetCounter(['a']);
      rank(index, fresh, { query: 'gadget', mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null }, { limit: 3, visit: facets.over({ index, delta: fresh }) });
      return facets.result().a?.values;
    };
    expect(count()).toEqual([{ value: 'violet', count: 1 }]);
    fresh.apply([doc(901, 'gadget', { a: 'indigo' }), doc(902, 'gadget two', { a: 'indigo' })], []);
    expect(count()).toEqual([{ value: 'indigo', count: 2 }]);
  });

  it('are made again from the last ones as the delta changes, the same as made afresh', () => {
    // One delta through many changes (replaced, deleted and new documents, a build bound anew),
    // facets and sort asked for after some and not others, against a delta made from the final
    // documents at once.
    const live = new PreparedDelta({ docs: added.slice(0, 10), masked: new Set() }, index);
    const current = new Map(added.slice(0, 10).map((d) => [d.id, d]));
    const ask = (dl: PreparedDelta, facetKeys: string[]) => {
      const facets = new FacetCounter(facetKeys);
      const r = { query: 'widget', mode: 'keyword' as const, filter: NO_FILTER, queryVector: null, profile: null };
      rank(index, dl, r, { limit: 3, visit: facets.over({ index, delta: dl }) });
      const page = new SortedPage({ field: 'metadata.b', order: 'asc' }, 30, undefined);
      rank(index, dl, r, { limit: 1, visit: page.over({ index, delta: dl }) });
      return { facets: facets.result(), sorted: page.hits.map((h) => [h.doc.id, h.value]) };
    };
    for (let step = 0; step < 40; step++) {
      const ids = [...current.keys()];
      const changes = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => {
        const id = rand() < 0.6 && ids.length ? pick(ids) : 1000 + Math.floor(rand() * 300);
        return doc(id, `widget ${pick(['one', 'two'])}`, metadata());
      });
      // Once, more replacements than the delta holds, and new documents: its slots are renumbered,
      // more of them than before.
      if (step === 30)
        changes.push(
          ...Array.from({ length: 1100 }, (_, k) => doc(ids[k % ids.length] as number, 'widget', metadata())),
          ...Array.from({ length: 200 }, (_, k) => doc(2000 + k, 'widget', metadata())),
        );
      const gone = rand() < 0.4 && ids.length ? [pick(ids)] : [];
      live.apply(changes, gone);
      for (const d of changes) current.set(d.id, d);
      for (const id of gone) current.delete(id);
      if (step === 20) live.bind(SearchIndex.build(docs.slice(0, 600), 64, 2));
      live.bind(index);
      if (rand() < 0.3) continue;
      const asked = keys.filter(() => rand() < 0.7);
      const afresh = new PreparedDelta({ docs: [...current.values()], masked: new Set() }, index);
      expect(ask(live, asked)).toEqual(ask(afresh, asked));
    }
  });

  it('of a delta read, after a change, the metadata of its new documents only', () => {
    let reads = 0;
    const counted = (d: SearchDoc): SearchDoc => ({ ...d, metadata: new Proxy(d.metadata, { get: (m, k) => (reads++, Reflect.get(m, k)) }) });
    const dl = new PreparedDelta({ docs: Array.from({ length: 30 }, (_, i) => counted(doc(2000 + i, 'widget', metadata()))), masked: new Set() }, index);
    const ask = () => {
      new FacetCounter(['a', 'b']).over({ index, delta: dl });
      new SortedPage({ field: 'metadata.b', order: 'asc' }, 5, undefined).over({ index, delta: dl });
    };
    ask();
    expect(reads).toBeGreaterThanOrEqual(30 * 3);
    // (Applying the changes reads them and compares the replaced one.)
    dl.apply([counted(doc(2003, 'widget', metadata())), counted(doc(2100, 'widget', metadata()))], [2005]);
    dl.bind(SearchIndex.build(docs.slice(0, 10), 64, 2));
    reads = 0;
    ask();
    expect(reads).toBeLessThanOrEqual(2 * 3);
    // Bound to another build, its slots are the same: nothing is read again.
    reads = 0;
    dl.bind(index);
    ask();
    expect(reads).toBe(0);
  });

  it('read only the documents past the column they start from', () => {
    // The documents that go (every seventh from the fourth) have values the rest do not.
    const before = Array.from({ length: 50 }, (_, i) => doc(i + 1, 'widget', i % 7 === 3 ? { a: [9999, 'gone'], b: -9999 } : metadata()));
    const after = Array.from({ length: 20 }, (_, i) => doc(100 + i, 'widget', metadata()));
    const live = Uint8Array.from({ length: 70 }, (_, i) => (i < 50 && i % 7 === 3 ? 0 : 1));
    // The first 50 are the same documents, 7 of them gone since; their metadata must not be read.
    const unread = (d: SearchDoc): SearchDoc => ({
      ...d,
      metadata: new Proxy({}, { get: () => expect.fail('read'), has: () => expect.fail('read'), getOwnPropertyDescriptor: () => expect.fail('read') }),
    });
    const docAt = (i: number) => (live[i] ? (i < 50 ? unread(before[i] as SearchDoc) : after[i - 50]) : undefined);
    const all = (i: number) => (live[i] ? (i < 50 ? before[i] : after[i - 50]) : undefined);
    const shape = (c: FacetColumn) => Array.from(c.present, (p, i) => (p ? [c.min[i], c.max[i], Array.from(c.codes.subarray(c.start[i], c.start[i + 1]), (x) => c.values[x])] : null));
    const from = { column: facetColumn(50, (i) => before[i], 'a'), live };
    expect(shape(facetColumn(70, docAt, 'a', from))).toEqual(shape(facetColumn(70, all, 'a')));
    const fromNumbers = { column: numberColumn(50, (i) => before[i], 'metadata.b'), live };
    expect(numberColumn(70, docAt, 'metadata.b', fromNumbers)).toEqual(numberColumn(70, all, 'metadata.b'));
    // A delta's caches: each starts from the columns of the one before, made there or carried
    // through it ('b' is not asked for in the second); the second's arrays are new (longer than
    // the first's buffers), the third's the second's, lengthened in their buffers.
    const first = new ColumnCache(50, (i) => before[i]);
    first.facet('a');
    first.facet('b');
    first.number('metadata.b');
    const second = new ColumnCache(60, docAt, { cache: first, live });
    expect(shape(second.facet('a'))).toEqual(shape(facetColumn(60, all, 'a')));
    expect(second.number('metadata.b')).toEqual(numberColumn(60, all, 'metadata.b'));
    const third = new ColumnCache(70, docAt, { cache: second, live });
    for (const k of ['a', 'b']) expect(shape(third.facet(k))).toEqual(shape(facetColumn(70, all, k)));
    expect(third.number('metadata.b')).toEqual(numberColumn(70, all, 'metadata.b'));
    // Filter verdicts from the carried columns: a gone document keeps its codes in the arrays
    // (only `present` is cleared), so the rows of a value ('gone') must not list it.
    const filters: FilterClause[] = [
      { field: 'metadata.a', op: 'eq', value: 'gone' },
      { field: 'metadata.a', op: 'in', value: ['gone', 'red', true] },
      { field: 'metadata.a', op: 'neq', value: 'gone' },
      { field: 'metadata.a', op: 'neq', value: 'blue' },
    ];
    for (const clause of filters) {
      const f = clauseFilter([clause]);
      const verdicts = f.over?.(third);
      if (!verdicts) throw new Error('no column reading');
      for (let i = 0; i < 70; i++) {
        const d = all(i);
        if (d) {
          if (verdicts[i] !== ASK) expect([clause, i, verdicts[i] === PASSES]).toEqual([clause, i, f(d)]);
        } else expect([clause, i, verdicts[i]]).toEqual([clause, i, clause.op === 'neq' ? PASSES : FAILS]);
      }
    }
    // Documents without a number have no range, made afresh or from a base.
    const two = [doc(1, 'w', { a: 'x' }), doc(2, 'w', { a: 5 }), doc(3, 'w', { a: true })];
    const made = facetColumn(2, (i) => two[i], 'a');
    expect([made.min[0], made.max[0], made.min[1], made.max[1]]).toEqual([Number.NaN, Number.NaN, 5, 5]);
    const grown = facetColumn(3, (i) => two[i], 'a', { column: made, live: [1, 1, 1] });
    expect([grown.min[2], grown.max[2], grown.present[2]]).toEqual([Number.NaN, Number.NaN, 1]);
  });

  it("sort every match by a field as its values order them, numbers only, then by id in the sort's order", () => {
    const r = { query: 'widget', mode: 'keyword' as const, filter: NO_FILTER, queryVector: null, profile: null };
    const matched: SearchDoc[] = [];
    rank(index, delta, r, { limit: 3, visit: (key) => matched.push(docOf(key)) });
    for (const [field, num] of [
      ['metadata.a', (d: SearchDoc) => (typeof d.metadata.a === 'number' ? d.metadata.a : null)],
      ['created', (d: SearchDoc) => d.created],
    ] as const)
      for (const order of ['asc', 'desc'] as const) {
        const want = [...matched].sort((x, y) => {
          const [a, b] = [num(x), num(y)];
          if (a !== b) return a === null ? 1 : b === null ? -1 : order === 'asc' ? a - b : b - a;
          return order === 'asc' ? x.id - y.id : y.id - x.id;
        });
        const page = new SortedPage({ field, order }, 50, undefined);
        rank(index, delta, r, { limit: 1, visit: page.over({ index, delta }) });
        expect(page.hits.map((h) => [h.doc.id, h.value])).toEqual(want.slice(0, 51).map((d) => [d.id, num(d)]));
      }
  });
});

describe('filter clauses', () => {
  const d = doc(1, 'widget', { brand: 'Acme', price: 120, tags: ['sale', 'new'], constructor: 'own', n: null });
  const bare = doc(2, 'widget', { brand: 'Bolt' });
  const holds = (clause: FilterClause, x = d) => clauseFilter([clause])(x);
  it("read a document's own metadata only, also for keys Object.prototype has", () => {
    expect(holds({ field: 'metadata.constructor', op: 'exists', value: true })).toBe(true);
    expect(holds({ field: 'metadata.constructor', op: 'eq', value: 'own' })).toBe(true);
    expect(holds({ field: 'metadata.constructor', op: 'exists', value: true }, bare)).toBe(false);
    expect(holds({ field: 'metadata.toString', op: 'exists', value: false }, bare)).toBe(true);
    expect(holds({ field: 'metadata.__proto__', op: 'exists', value: true }, bare)).toBe(false);
    expect(holds({ field: 'metadata.hasOwnProperty', op: 'neq', value: 'x' }, bare)).toBe(true);
  });
  it('hold as each operator says', () => {
    expect(holds({ field: 'metadata.price', op: 'lt', value: 121 })).toBe(true);
    expect(holds({ field: 'metadata.price', op: 'gt', value: 120 })).toBe(false);
    expect(holds({ field: 'metadata.tags', op: 'eq', value: 'new' })).toBe(true);
    expect(holds({ field: 'metadata.tags', op: 'neq', value: 'new' })).toBe(false);
    expect(holds({ field: 'metadata.brand', op: 'in', value: ['Bolt', 'Acme'] })).toBe(true);
    // A key whose value is null is absent, as facets count it and rule conditions test it.
    expect(holds({ field: 'metadata.n', op: 'exists', value: true })).toBe(false);
    expect(holds({ field: 'metadata.n', op: 'exists', value: false })).toBe(true);
    expect(holds({ field: 'metadata.n', op: 'neq', value: 'x' })).toBe(true);
    expect(matches(d, { field: 'metadata.n', op: 'exists', value: true })).toBe(false);
    expect(holds({ field: 'metadata.missing', op: 'exists', value: false })).toBe(true);
    expect(holds({ field: 'created', op: 'gte', value: 1 })).toBe(true);
    // A list's numbers each, as a numeric facet's min and max take them (sizes [42, 43]: min 42, max 43).
    const sized = doc(3, 'shoe', { size: [42, 43, '44'] });
    expect(['gte', 'gt', 'lte', 'lt'].map((op) => holds({ field: 'metadata.size', op: op as FilterClause['op'], value: 43 }, sized))).toEqual([true, false, true, true]);
    expect(holds({ field: 'metadata.size', op: 'gt', value: 43 }, sized)).toBe(false);
    expect(coreFilter({ price: { gte: 10, lte: 20 } })(doc(4, 'x', { price: [5, 15] }))).toBe(true);
    expect(coreFilter({ price: { gte: 10, lte: 20 } })(doc(4, 'x', { price: [5, 25] }))).toBe(false);
    expect(
      clauseFilter([
        { field: 'metadata.price', op: 'gt', value: 100 },
        { field: 'metadata.brand', op: 'eq', value: 'Bolt' },
      ])(d),
    ).toBe(false);
  });
});

describe('filters read from columns', () => {
  // Values of every kind a key can hold: absent, null, strings, booleans, numbers, lists mixing
  // them (numbers on both sides of a bound), objects; a key Object.prototype also has.
  const values: (Json | undefined)[] = [undefined, null, 'a', 'b', 'A', true, false, 0, 5, 10, 15, 20, 25, [5, 25], [5, 15, 25], [10], ['a', 5], ['b', true], [], [null], { x: 1 }, '5', 'true'];
  const docs = values.flatMap((v, i) =>
    values.map((w, j) => {
      const metadata: SearchDoc['metadata'] = {};
      if (v !== undefined) metadata.k = v;
      if (w !== undefined) Object.assign(metadata, { constructor: w });
      return doc(i * values.length + j + 1, `widget ${i} ${j}`, metadata);
    }),
  );
  // A delta's columns are read in one pass, a build's (lasting) from their values' rows and buckets.
  const columns = new ColumnCache(docs.length, (i) => docs[i]);
  const lasting = new ColumnCache(docs.length, (i) => docs[i], undefined, true);
  const scalars = ['a', 'b', 'c', true, false, 0, 5, 10, 12, 15, 25, 30] as const;
  const clauses: FilterClause[] = ['metadata.k', 'metadata.constructor'].flatMap((field) => [
    ...scalars.flatMap((value) => (['eq', 'neq'] as const).map((op) => ({ field, op, value }))),
    ...scalars.filter((v) => typeof v === 'number').flatMap((value) => (['gt', 'gte', 'lt', 'lte'] as const).map((op) => ({ field, op, value }))),
    { field, op: 'in', value: ['b', 12] },
    { field, op: 'in', value: [true, 'a', 25] },
    // Many numbers (looked up among them sorted): the ends of a list's range, within it, beside it.
    { field, op: 'in', value: [30, 25, -3, 12, 0, 7.5, 20, 1e9] },
    { field, op: 'in', value: [11, 13, 17, 4, 26] },
    { field, op: 'in', value: [25, -0, 100] },
    { field, op: 'in', value: [] },
    { field, op: 'exists', value: true },
    { field, op: 'exists', value: false },
  ]);
  const verdictsAgree = (f: ReturnType<typeof clauseFilter>) => {
    let asked = 0;
    for (const cache of [lasting, columns]) {
      const verdicts = f.over?.(cache);
      if (!verdicts) throw new Error('no column reading');
      expect(verdicts.length).toBe(docs.length);
      asked = 0;
      docs.forEach((d, i) => {
        const v = verdicts[i];
        if (v === ASK) asked++;
        else expect([cache.lasting, i, v === PASSES]).toEqual([cache.lasting, i, f(d)]);
      });
    }
    return asked;
  };
  it('are not read for a filter of the item’s own fields only (no column would tell)', () => {
    expect(clauseFilter([{ field: 'active', op: 'eq', value: true }]).over).toBeUndefined();
    expect(
      clauseFilter([
        { field: 'name', op: 'eq', value: 'widget' },
        { field: 'created', op: 'gte', value: 1 },
      ]).over,
    ).toBeUndefined();
    expect(
      clauseFilter([
        { field: 'active', op: 'eq', value: true },
        { field: 'metadata.k', op: 'eq', value: 'a' },
      ]).over,
    ).toBeDefined();
  });
  it('agree with the documents on every operator, and leave to them only numbers between a list’s least and greatest', () => {
    let asked = 0;
    for (const clause of clauses) asked += verdictsAgree(clauseFilter([clause]));
    // Only eq / neq / in of a number strictly inside a list's range ([5, 25], [5, 15, 25]) are asked.
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThan((clauses.length * docs.length) / 20);
    for (let j = 0; j + 1 < clauses.length; j += 3) verdictsAgree(clauseFilter([clauses[j] as FilterClause, clauses[j + 1] as FilterClause]));
    // A clause of strings and booleans only (read from its values' rows) after one that failed or
    // left to the documents some of them: it keeps their verdicts.
    const before = clauses.filter((c) => c.field === 'metadata.k' && (c.op === 'eq' || c.op === 'gt' || c.op === 'exists') && c.value !== 'a');
    const rowsRead = clauses.filter((c) => c.field === 'metadata.constructor' && ['eq', 'in', 'neq'].includes(c.op) && [c.value].flat().every((v) => typeof v !== 'number'));
    expect(before.length * rowsRead.length).toBeGreaterThan(100);
    for (const first of before) for (const second of rowsRead) verdictsAgree(clauseFilter([first, second]));
  });
  it('agree for the shorthand filters, a price range within a list’s numbers included', () => {
    const shorthand = values.flatMap((v, i) =>
      values.map((w, j) => {
        const metadata: SearchDoc['metadata'] = {};
        if (v !== undefined) Object.assign(metadata, { category: v, availability: v, price: v });
        if (w !== undefined) metadata.brand = w;
        return doc(i * values.length + j + 1, 'widget', metadata);
      }),
    );
    const cols = new ColumnCache(shorthand.length, (i) => shorthand[i]);
    const built = new ColumnCache(shorthand.length, (i) => shorthand[i], undefined, true);
    for (const f of [
      coreFilter({ category: 'a' }),
      coreFilter({ brand: ['b', 'a'] }),
      coreFilter({ availability: 'A' }),
      coreFilter({ price: { gte: 10, lte: 20 } }),
      coreFilter({ price: { gte: 12 } }),
      coreFilter({ price: { lte: 5 } }),
      coreFilter({ metadata: { k: 5 } }),
      coreFilter({ metadata: { brand: true } }),
      coreFilter({ category: 'a', price: { gte: 0, lte: 30 } }),
    ]) {
      for (const cache of [cols, built]) {
        const verdicts = f.over?.(cache);
        if (!verdicts) throw new Error('no column reading');
        shorthand.forEach((d, i) => {
          const v = verdicts[i];
          if (v !== ASK) expect([cache.lasting, i, v === PASSES]).toEqual([cache.lasting, i, f(d)]);
        });
      }
    }
    // [5, 25] holds no number within 10..20, [5, 15, 25] does: neither end tells, the document does.
    expect(coreFilter({ price: { gte: 10, lte: 20 } }).over?.(cols)[shorthand.findIndex((d) => JSON.stringify(d.metadata.price) === '[5,25]')]).toBe(ASK);
  });
  it('compare strings in NFC, as facets count them: a value composed or decomposed is one value (build and delta alike)', () => {
    const [composed, decomposed] = ['Caf\u00e9', 'Cafe\u0301'];
    const held: Json[] = [composed, decomposed, [composed, decomposed], 'Cafe', ['x', decomposed], composed];
    const docs = held.map((origin, i) => doc(i + 1, 'widget', { origin, brand: origin }));
    const caches = [new ColumnCache(docs.length, (i) => docs[i]), new ColumnCache(docs.length, (i) => docs[i], undefined, true)];
    // One value of the facet, each document once (a list holding both spellings counts once).
    for (const cache of caches) {
      const facets = new FacetCounter(['origin']);
      const visit = facets.over({ index: { docs, columns: () => cache }, delta: { columns: () => new ColumnCache(0, () => undefined) } });
      for (let i = 0; i < docs.length; i++) visit(i);
      expect(facets.result().origin?.values, String(cache.lasting)).toEqual([
        { value: composed, count: 5 },
        { value: 'Cafe', count: 1 },
        { value: 'x', count: 1 },
      ]);
    }
    const cafe = [1, 2, 3, 5, 6];
    for (const value of [composed, decomposed]) {
      for (const [f, want] of [
        [clauseFilter([{ field: 'metadata.origin', op: 'eq', value }]), cafe],
        [clauseFilter([{ field: 'metadata.origin', op: 'in', value: ['nothing', value] }]), cafe],
        [clauseFilter([{ field: 'metadata.origin', op: 'neq', value }]), [4]],
        [coreFilter({ brand: value }), cafe],
        [coreFilter({ metadata: { origin: value } }), cafe],
      ] as const) {
        // The documents' own verdict, and each column's (a delta's one pass, a build's values' rows).
        expect(docs.filter((d) => f(d)).map((d) => d.id)).toEqual(want);
        for (const cache of caches) {
          const verdicts = f.over?.(cache);
          if (!verdicts) throw new Error('no column reading');
          expect(
            docs.filter((_, i) => verdicts[i] === PASSES).map((d) => d.id),
            String(cache.lasting),
          ).toEqual(want);
        }
      }
    }
  });

  it('of a build read numbers from buckets: every bound, at a bucket edge or not, agrees with the documents', () => {
    // Few distinct values (ties at every edge), negatives and fractions; a single-number key, a
    // key with lists (least and greatest differ), a key spanning more than a double can subtract,
    // and a key of one value.
    const rand = seededRandom(5);
    const pickOf = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)] as T;
    const steps = [-7.5, -1, 0, 0.25, 1, 2, 3, 10, 64, 65, 99.5, 100, 1000];
    const many = Array.from({ length: 2000 }, (_, i) =>
      doc(i + 1, 'widget', {
        ...(rand() < 0.9 ? { one: pickOf(steps) } : {}),
        ...(rand() < 0.9 ? { list: rand() < 0.5 ? pickOf(steps) : [pickOf(steps), pickOf(steps), 'x'] } : {}),
        ...(rand() < 0.5 ? { wide: pickOf([-1e308, 0, 1e308]) } : {}),
        same: 4,
      }),
    );
    const built = new ColumnCache(many.length, (i) => many[i], undefined, true);
    const bounds = [-1e308, -100, ...steps, ...steps.map((x) => x + 0.125), 5000, 1e308];
    let passed = 0;
    const wrong: unknown[] = [];
    const agree = (f: ReturnType<typeof clauseFilter>, set: SearchDoc[], cache: ColumnCache, what: unknown[]) => {
      const verdicts = f.over?.(cache);
      if (!verdicts) throw new Error('no column reading');
      set.forEach((d, i) => {
        const v = verdicts[i];
        if (v !== ASK && (v === PASSES) !== f(d)) wrong.push([...what, i, v]);
        if (v === PASSES) passed++;
      });
    };
    for (const key of ['one', 'list', 'wide', 'same']) {
      // The shorthand's range reads `price`: the same numbers under that key.
      const priced = many.map((d) => doc(d.id, 'widget', d.metadata[key] === undefined ? {} : { price: d.metadata[key] as Json }));
      const pricedCache = new ColumnCache(priced.length, (i) => priced[i], undefined, true);
      for (const value of bounds) {
        for (const op of ['gt', 'gte', 'lt', 'lte'] as const) agree(clauseFilter([{ field: `metadata.${key}`, op, value }]), many, built, [key, op, value]);
        for (const price of [{ gte: value }, { lte: value }, { gte: value, lte: value + 50 }, { gte: value, lte: value }]) agree(coreFilter({ price }), priced, pricedCache, [key, price]);
      }
    }
    expect(wrong).toEqual([]);
    expect(passed).toBeGreaterThan(50_000);
  });

  it('of a build read numbers from buckets also when a span is too small to divide (subnormal numbers)', () => {
    // 200 documents of 0 and 5e-324 (the least double above 0): four buckets of a span of one
    // subnormal step, whose width (span / 4) rounds to 0.
    const tiny = Array.from({ length: 200 }, (_, i) => doc(i + 1, 'widget', { k: i % 2 ? 5e-324 : 0, price: i % 2 ? 5e-324 : 0 }));
    const built = new ColumnCache(tiny.length, (i) => tiny[i], undefined, true);
    const wrong: unknown[] = [];
    for (const value of [-1, -0, 0, 5e-324, 1e-323, 1]) {
      const filters = [
        ...(['gt', 'gte', 'lt', 'lte'] as const).map((op) => clauseFilter([{ field: 'metadata.k', op, value }])),
        ...[{ gte: value }, { lte: value }, { gte: value, lte: value }].map((price) => coreFilter({ price })),
      ];
      for (const f of filters) {
        const verdicts = f.over?.(built);
        if (!verdicts) throw new Error('no column reading');
        tiny.forEach((d, i) => {
          const v = verdicts[i];
          if (v !== ASK && (v === PASSES) !== f(d)) wrong.push([value, i, v]);
        });
      }
    }
    expect(wrong).toEqual([]);
  });

  it('rank as the documents do, past the tests after which ranking reads the columns', () => {
    // Every widget matches: the filter is tested on all of them, far past a 64th of the set.
    const index = SearchIndex.build(docs.slice(0, 300), 64, 1);
    const delta = new PreparedDelta({ docs: docs.slice(300), masked: new Set() }, index);
    for (const clause of clauses.slice(0, 40)) {
      const columnar = clauseFilter([clause]);
      const byDocument = (d: SearchDoc) => columnar(d);
      const req = (filter: typeof NO_FILTER) => ({ query: 'widget', mode: 'keyword' as const, filter, queryVector: null, profile: null });
      const a = rank(index, delta, req(columnar), { limit: 100 });
      const b = rank(index, delta, req(byDocument), { limit: 100 });
      expect([clause, a.total, a.hits.map((h) => h.doc.id)]).toEqual([clause, b.total, b.hits.map((h) => h.doc.id)]);
    }
  });
  it('make no column again when a request asks for more keys than a cache keeps (filter and facets)', () => {
    // Forty keys, each read through a counting proxy; k0 is 'x' in one document in fifty, so a
    // document's test mostly ends at its first key.
    let reads = 0;
    const keys = Array.from({ length: 40 }, (_, j) => `k${j}`);
    const many = Array.from({ length: 2000 }, (_, i) => {
      const raw = Object.fromEntries(keys.map((k) => [k, k === 'k0' && i % 50 !== 0 ? 'y' : 'x']));
      const counted = new Proxy(raw, {
        get: (t, p) => {
          reads++;
          return Reflect.get(t, p);
        },
      });
      return doc(i + 1, `widget ${i}`, counted);
    });
    const index = SearchIndex.build(many, 64, 1);
    const delta = new PreparedDelta({ docs: [], masked: new Set() }, index);
    const readsOf = (filter: typeof NO_FILTER, facetKeys: string[]) => {
      reads = 0;
      const facets = new FacetCounter(facetKeys);
      const ranked = rank(index, delta, { query: 'widget', mode: 'keyword', filter, queryVector: null, profile: null }, { limit: 10, visit: facets.over({ index, delta }) });
      return { reads, total: ranked.total };
    };
    // Twenty clauses and twenty facets (the most a request takes), and a shorthand metadata of forty keys.
    const clauses = clauseFilter(keys.slice(0, 20).map((k) => ({ field: `metadata.${k}`, op: 'eq' as const, value: 'x' })));
    const shorthand = coreFilter({ metadata: Object.fromEntries(keys.map((k) => [k, 'x'])) });
    for (const [filter, facetKeys] of [
      [clauses, keys.slice(20)],
      [shorthand, []],
    ] as const) {
      readsOf(filter, [...facetKeys]);
      const repeated = readsOf(filter, [...facetKeys]);
      const byDocument = readsOf((d) => filter(d), [...facetKeys]);
      // A repeated request reads no more than testing each document does (not every key's column
      // over the whole set made again: 40 × 2,000 reads).
      expect([repeated.total, repeated.reads <= byDocument.reads]).toEqual([40, true]);
    }
  });
  it('keep a column asked for again within a request (least recently asked for dropped first)', () => {
    let reads = 0;
    const few = Array.from({ length: 100 }, (_, i) => doc(i + 1, 'widget', { brand: 'b' }));
    const cache = new ColumnCache(few.length, (i) => {
      reads++;
      return few[i];
    });
    // brand made first, then 31 other keys: the cache holds 32, brand the oldest made.
    const brand = cache.facet('brand');
    for (let j = 0; j < 31; j++) cache.facet(`other${j}`);
    // A request's facets read brand, and another key; its filter reads brand again.
    reads = 0;
    expect(cache.facet('brand')).toBe(brand);
    cache.facet('fresh');
    expect(cache.facet('brand')).toBe(brand);
    expect(reads).toBe(few.length);
  });
  it("carry the KEPT columns asked for latest to a delta's next cache, made there or carried through it (the least recently asked for let go)", () => {
    let reads = 0;
    const docs = Array.from({ length: 20 }, (_, i) => doc(i + 1, 'widget', { brand: 'b' }));
    const docAt = (i: number) => {
      reads++;
      return docs[i];
    };
    const live = new Uint8Array(20).fill(1);
    const first = new ColumnCache(10, docAt);
    for (let j = 0; j < KEPT; j++) first.facet(`a${j}`);
    // The second makes 10 other columns: the third carries those and the latest KEPT - 10 of the first's.
    const second = new ColumnCache(15, docAt, { cache: first, live });
    for (let j = 0; j < 10; j++) second.facet(`b${j}`);
    const third = new ColumnCache(20, docAt, { cache: second, live });
    const readsOf = (key: string) => {
      reads = 0;
      third.facet(key);
      return reads;
    };
    // A carried column reads only the slots after it; one let go, every slot.
    expect([readsOf('b0'), readsOf('b9'), readsOf(`a${KEPT - 1}`), readsOf('a10'), readsOf('a9'), readsOf('a0')]).toEqual([5, 5, 10, 10, 20, 20]);
  });
});

describe("the catalog's nearest items (recommendations' content candidates)", () => {
  const kinds = ['red kettle', 'blue teapot', 'green tea', 'black coffee', 'oat biscuits'];
  const docs = Array.from({ length: 600 }, (_, i) => doc(i + 1, `${kinds[i % 5]} ${i % 37} batch ${i}`));
  const q = normalize(Float32Array.from(emb.embedOne('green tea 12')));
  const nearest = (view: SearchView) => {
    const out: [number, number][] = [];
    view.nearest(q, 50, (id, s) => out.push([id, s]));
    return out;
  };
  const view = (built: SearchDoc[], changed: SearchDoc[], masked: number[] = []) => {
    const index = SearchIndex.build(built, 64, 1);
    return new SearchView(index, new PreparedDelta({ docs: changed, masked: new Set(masked) }, index));
  };

  it('are the same k, with the same scores, whether the items are in the build or changed since', () => {
    const afterBuild = nearest(view(docs, []));
    expect(afterBuild).toHaveLength(50);
    expect(afterBuild.map(([, s]) => s)).toEqual([...afterBuild.map(([, s]) => s)].sort((a, b) => b - a));
    // Right after an import: every item is a change since the (empty) build.
    expect(nearest(view([], docs))).toEqual(afterBuild);
    // Half built, and a built item changed since (its built copy superseded, another deleted).
    const stale = { ...(docs[11] as SearchDoc), name: 'green tea 12', vector: emb.embedOne('green tea 12') };
    const gone = doc(999, 'green tea 12 batch');
    const half = nearest(view([...docs.slice(0, 300).map((d) => (d.id === 12 ? stale : d)), gone], [docs[11] as SearchDoc, ...docs.slice(300)], [999]));
    expect(half).toEqual(afterBuild);
  });
});

describe('snippets', () => {
  it('takes the window with the most matched words, those in its middle, cut with an ellipsis on each cut side', () => {
    const text = `${Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ')} shoe shoe ${Array.from({ length: 30 }, (_, i) => `v${i}`).join(' ')}.`;
    const s = snippet(text, new Set(['shoe']), DEFAULT_TAGS, 10);
    // As many words before the matches as after them (was: the window ending at the matches, no context after).
    expect(s).toBe('…w26 w27 w28 w29 <em>shoe</em> <em>shoe</em> v0 v1 v2 v3…');
    // Near the start or the end, the window stops at the text's edge.
    expect(snippet('shoe a b c d e f g', new Set(['shoe']), DEFAULT_TAGS, 3)).toBe('<em>shoe</em> a b…');
    expect(snippet('a b c d e f g shoe', new Set(['shoe']), DEFAULT_TAGS, 3)).toBe('…f g <em>shoe</em>');
    // Matches spread over the window keep it where it is.
    expect(snippet('a b shoe c shoe d e', new Set(['shoe']), DEFAULT_TAGS, 3)).toBe('…<em>shoe</em> c <em>shoe</em>…');
    // Nothing matched: the opening.
    expect(snippet(text, new Set(['boot']), DEFAULT_TAGS, 3)).toBe('w0 w1 w2…');
    expect(snippet('short & sweet', new Set(['sweet']), DEFAULT_TAGS)).toBe('short &amp; <em>sweet</em>');
  });

  it("marks a name's opening words for a query of stop words only, which ranking finds by them, and only there", () => {
    // "The Who" matches no index term (stop words are not indexed): ranking finds the names that
    // begin with its words (rank.ts, stopWordNames), whose highlight marked nothing until 2026-12-07.
    const name = (text: string, query: string) => highlightText(text, new Set(), DEFAULT_TAGS, stopWordsAsked(query));
    expect(name('The Who: Live at Leeds', 'the who')).toBe('<em>The</em> <em>Who</em>: Live at Leeds');
    expect(name('The Who: Live at Leeds', 'THE  who!')).toBe('<em>The</em> <em>Who</em>: Live at Leeds');
    expect(name("It's Kind of a Funny Story", "it's")).toBe('<em>It</em>&#39;s Kind of a Funny Story');
    expect(name('Up (2009)', 'up')).toBe('<em>Up</em> (2009)');
    // A name that does not begin with them, word for word: nothing.
    expect(name('Who is the Who', 'the who')).toBe('Who is the Who');
    expect(name('The Whole Story', 'the who')).toBe('The Whole Story');
    expect(name('The', 'the who')).toBe('The');
    // A query with a word search does not ignore is marked by its terms alone.
    expect(stopWordsAsked('the who tour')).toBeUndefined();
    expect(stopWordsAsked('')).toBeUndefined();
    expect(stopWordsAsked('!!!')).toBeUndefined();
    expect(stopWordsAsked('The Who')).toEqual(['the', 'who']);
  });

  it('escapes all of & < > " \' outside the tags, after the last match too, and keeps the earliest window of equals whole', () => {
    // A dropped escape would let a description's quote or angle bracket into the page's HTML.
    expect(highlightText(`Kid's "tee" <b>&`, new Set(['tee']), DEFAULT_TAGS)).toBe('Kid&#39;s &quot;<em>tee</em>&quot; &lt;b&gt;&amp;');
    // Two windows of one match each: the earliest, without the match after its end.
    expect(snippet('shoe a b c d shoe', new Set(['shoe']), DEFAULT_TAGS, 3)).toBe('<em>shoe</em> a b…');
    // A window at the text's end keeps what follows its last word (no ellipsis: nothing was cut).
    expect(snippet('a b c d e f g shoe.', new Set(['shoe']), DEFAULT_TAGS, 3)).toBe('…f g <em>shoe</em>.');
  });

  it('chooses from the first 5,000 characters of a long text, cut after a space', () => {
    const words = (n: number, w = 'word') => Array.from({ length: n }, () => w).join(' ');
    // "word " is 5 characters: the shoe at character 4,000 is found, the boot at 15,000 is not looked for.
    const text = `${words(800)} shoe ${words(2200)} boot ${words(1000)}`;
    expect(text.length).toBeGreaterThan(4 * SNIPPET_SCAN);
    expect(snippet(text, new Set(['shoe']), DEFAULT_TAGS, 3)).toBe('…word <em>shoe</em> word…');
    expect(snippet(text, new Set(['boot']), DEFAULT_TAGS, 3)).toBe('word word word…');
    // Fewer words than a window in the part read: that part, within SNIPPET_CHARS around the match.
    const one = `${'x'.repeat(SNIPPET_SCAN - 10)} shoe ${'y'.repeat(SNIPPET_SCAN)}`;
    const oneShown = snippet(one, new Set(['shoe']), DEFAULT_TAGS);
    expect(oneShown).toMatch(/^…x+ <em>shoe<\/em> ?…$/);
    expect(oneShown.replace(/<\/?em>/g, '').length).toBeLessThanOrEqual(SNIPPET_CHARS + 2);
    // Words joined by commas: the cut falls after a comma, not inside "shoelace" (a review's find:
    // its first half was marked as "shoe"), nor between a letter and its accent.
    const commas = `${'w,'.repeat(2498)}shoelace,${'w,'.repeat(5000)}`;
    expect(snippet(commas, new Set(['shoe']), DEFAULT_TAGS, 3)).not.toContain('<em>');
    // Nor inside a word of letters beyond the basic plane, or of circled letters (a second review's find).
    for (const word of ['𝐬𝐡𝐨𝐞𝐥𝐚𝐜𝐞', 'ⓢⓗⓞⓔⓛⓐⓒⓔ']) {
      const at = SNIPPET_SCAN - word.length / 2;
      const t = `${'w,'.repeat(Math.floor(at / 2))}${at % 2 ? ',' : ''}${word},${'w,'.repeat(5000)}`;
      expect(highlightText(t.slice(0, 12000), new Set(['shoe']), DEFAULT_TAGS), word).not.toContain('<em>');
      expect(snippet(t, new Set(['shoe']), DEFAULT_TAGS, 3), word).not.toContain('<em>');
    }
    const accent = `${'w,'.repeat(2498)}cafe\u0301,${'w,'.repeat(5000)}`;
    expect(snippet(accent, new Set(['cafe']), DEFAULT_TAGS, 3)).not.toContain('<em>cafe</em>…');
    // A word that ends at the 5,000th character is within them: found and marked (until 2026-12-07
    // the cut fell before it, as if it went on past the limit), of letters beyond the basic plane too.
    for (const [word, term] of [
      ['shoe', 'shoe'],
      ['𝐬𝐡𝐨𝐞', 'shoe'],
    ] as const) {
      const t = `${'w '.repeat((SNIPPET_SCAN - word.length) / 2)}${word} ${'y '.repeat(SNIPPET_SCAN)}`;
      expect(snippet(t, new Set([term]), DEFAULT_TAGS, 3), word).toBe(`…w w <em>${word}</em>…`);
      // One more letter and it reaches past them: left out.
      expect(snippet(t.replace(` ${word} `, ` ${word}s `), new Set([term]), DEFAULT_TAGS, 3), word).not.toContain('<em>');
    }
  });

  it('shows at most SNIPPET_CHARS characters of the description, around its matches, at words where it can', () => {
    const shoe = new Set(['shoe']);
    const plain = (s: string) => s.replace(/<\/?em>/g, '');
    // One token of 8,000 letters (until 2026-12-07 shown 5,000 characters long): its first 300, cut.
    expect(snippet('x'.repeat(8000), shoe, DEFAULT_TAGS)).toBe(`${'x'.repeat(SNIPPET_CHARS)}…`);
    // Long runs of symbols between the words: the match, with what fits around it.
    const runs = `intro ${'='.repeat(2000)} red shoe here ${'★'.repeat(2000)} outro`;
    const s = snippet(runs, shoe, DEFAULT_TAGS);
    expect(s).toContain('red <em>shoe</em> here');
    expect(plain(s).length).toBeLessThanOrEqual(SNIPPET_CHARS + 2);
    expect(s.startsWith('…') && s.endsWith('…')).toBe(true);
    // A match between words too long to show whole: centred in as much of them as fits.
    const between = snippet(`${'a'.repeat(1000)} shoe ${'b'.repeat(1000)}`, shoe, DEFAULT_TAGS);
    expect(between).toBe(`…${'a'.repeat(147)} <em>shoe</em> ${'b'.repeat(147)}…`);
    // Twenty long words: cut at a word's edge, the match kept and marked.
    const long = Array.from({ length: 30 }, (_, i) => (i === 15 ? 'shoe' : `w${i}${'o'.repeat(40)}`)).join(' ');
    const l = snippet(long, shoe, DEFAULT_TAGS);
    expect(l).toContain('<em>shoe</em>');
    expect(plain(l).length).toBeLessThanOrEqual(SNIPPET_CHARS + 2);
    expect(plain(l)).toMatch(/^…w\d+o+ .* w\d+o+…$/);
    // Cut inside a word at a whole character as shown: never a letter without its accent (e and
    // U+0301, decomposed: until 2026-12-07 the 300th unit was the e, shown bare) nor half a pair.
    const characters = (t: string) => [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(t)].map((g) => g.segment);
    for (const text of [`x${'e\u0301'.repeat(3000)}`, `${'e\u0301'.repeat(3000)}`, `x${'\u{1D400}'.repeat(3000)}`]) {
      const cut = snippet(text, shoe, DEFAULT_TAGS);
      expect(cut.endsWith('…')).toBe(true);
      const shown = cut.slice(0, -1);
      expect(shown.length).toBeLessThanOrEqual(SNIPPET_CHARS);
      expect(shown.length).toBeGreaterThan(SNIPPET_CHARS - 3);
      expect(text.startsWith(shown)).toBe(true);
      expect(characters(shown).at(-1)).toBe(characters(text).at(-1));
    }
    // Twenty words of usual length are shown as before.
    const usual = Array.from({ length: 40 }, (_, i) => (i === 20 ? 'shoe' : 'word')).join(' ');
    expect(snippet(usual, shoe, DEFAULT_TAGS)).toBe(`…${'word '.repeat(9)}<em>shoe</em>${' word'.repeat(10)}…`);
  });

  it('begins and ends at characters as shown, never inside an emoji sequence', () => {
    // A joiner (U+200D), a variation selector and a flag's tags are words of their own to the
    // window, so its first or last word could fall inside a ZWJ sequence, a skin-toned emoji or a
    // tag flag (until 2026-12-07 the snippet began or ended with a joiner or a flag's tags).
    const boundaries = (t: string) => new Set([...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(t)].map((g) => g.index).concat(t.length));
    const whole = (text: string, s: string) => {
      const plain = s
        .replace(/<\/?em>/g, '')
        .replace(/^…/, '')
        .replace(/…$/, '');
      const at = text.indexOf(plain);
      expect(at, s).toBeGreaterThanOrEqual(0);
      const cuts = boundaries(text);
      expect(cuts.has(at) && cuts.has(at + plain.length), s).toBe(true);
      return plain;
    };
    const family = '👨\u200d👩\u200d👧';
    const coder = '👩🏽\u200d💻';
    const flag = '🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}';
    const ws = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
    for (const [emoji, joiners] of [
      [family, 2],
      [coder, 1],
      [flag, 1],
    ] as const) {
      // The window's first word a joiner (or the tags) of the sequence: it begins with the whole emoji.
      const opening = `a ${emoji} ${ws(19 - joiners)} shoe`;
      expect(whole(opening, snippet(opening, new Set(['shoe']), DEFAULT_TAGS)).startsWith(emoji), emoji).toBe(true);
      // Its last word one: it ends with the whole emoji.
      const closing = `shoe ${ws(19 - joiners)}${emoji} z`;
      expect(whole(closing, snippet(closing, new Set(['shoe']), DEFAULT_TAGS)).endsWith(emoji), emoji).toBe(true);
      // Cut to SNIPPET_CHARS: the start snapped to the joiner after it keeps the whole emoji.
      const long = `${'a'.repeat(1000)} ${'='.repeat(50)}${emoji}${'='.repeat(130)} shoe ${'b'.repeat(1000)}`;
      const cut = snippet(long, new Set(['shoe']), DEFAULT_TAGS);
      expect(whole(long, cut).startsWith(emoji), emoji).toBe(true);
      expect(cut).toContain('<em>shoe</em>');
    }
    // The part read (SNIPPET_SCAN) cut between a joiner and the emoji it joins: the window
    // reaching that cut ends with the whole emoji.
    const scanned = `${'w '.repeat(2490)}shoe${'='.repeat(13)}${family} tail words`;
    expect(scanned.indexOf('\u200d')).toBe(SNIPPET_SCAN - 1);
    expect(whole(scanned, snippet(scanned, new Set(['shoe']), DEFAULT_TAGS)).endsWith(`<em>shoe</em>${'='.repeat(13)}${family}`.replace(/<\/?em>/g, ''))).toBe(true);
    // Words as before.
    expect(snippet(`${ws(30)} 👋🏽 shoe`, new Set(['shoe']), DEFAULT_TAGS, 3)).toBe('…w28 w29 👋🏽 <em>shoe</em>');
  });

  it('chooses from fewer characters on a page of more than 20 hits: 100,000 over the page', () => {
    expect([1, 10, 20, 21, 25, 50, 100].map(snippetScan)).toEqual([5000, 5000, 5000, 4761, 4000, 2000, 1000]);
    // The shoe at character 2,000.
    const text = `${'word '.repeat(400)}shoe ${'word '.repeat(400)}`;
    expect(snippet(text, new Set(['shoe']), DEFAULT_TAGS, 3, snippetScan(40))).toBe('…word <em>shoe</em> word…');
    expect(snippet(text, new Set(['shoe']), DEFAULT_TAGS, 3, snippetScan(100))).toBe('word word word…');
  });
});

describe('synonyms at query time', () => {
  const sets: SynonymSet[] = [
    { id: 1, type: 'two_way', input: null, synonyms: ['sneaker', 'running shoe', 'trainer'], created: 1, updated_at: 1 },
    { id: 2, type: 'one_way', input: 'cell phone', synonyms: ['smartphone', 'unknownword'], created: 1, updated_at: 1 },
  ];
  const known = (t: string) => ['run', 'shoe', 'trainer', 'sneaker', 'smartphon'].includes(t);

  it('puts the words of matching sets before the query, and their phrases beside it, only those the vocabulary has', async () => {
    const rules = await synonymRules('t-syn', async () => sets);
    const none = (query: string) => ({ query, phrases: [], alternatives: [] });
    // Each one-word synonym named with the query's term that brought it (none for a trigger of two terms).
    expect(applySynonyms('red sneakers', rules, known)).toEqual({ query: 'trainer red sneakers', phrases: ['running shoe'], alternatives: [{ word: 'sneaker', terms: ['trainer'] }] });
    // A phrase matches as a run of stems, in either form.
    expect(applySynonyms('Running Shoes', rules, known)).toEqual({ ...none('sneaker trainer Running Shoes'), alternatives: [{ terms: ['sneaker', 'trainer'] }] });
    expect(applySynonyms('cheap cell phones', rules, known)).toEqual({ ...none('smartphone cheap cell phones'), alternatives: [{ terms: ['smartphon'] }] });
    // One-way: not back; and nothing applies to other words.
    expect(applySynonyms('smartphone', rules, known)).toEqual(none('smartphone'));
    expect(applySynonyms('phone cell', rules, known)).toEqual(none('phone cell'));
    expect(applySynonyms('', rules, known)).toEqual(none(''));
    // A phrase's stop words take no part: "house of cards" needs house and card.
    const card = await synonymRules('t-syn-stop', async () => [{ id: 3, type: 'one_way', input: 'hoc', synonyms: ['house of cards'], created: 1, updated_at: 1 }]);
    expect(applySynonyms('hoc', card, (t) => ['hous', 'card'].includes(t))).toEqual({ query: 'hoc', phrases: ['house of cards'], alternatives: [] });
  });

  it('bring nothing the query holds already, each phrase once, and at most 32 words and phrases', async () => {
    const rules = await synonymRules('t-syn-once', async () => sets);
    // Both words of a two-way set in the query: neither is added again, and "running shoe", which both bring, once.
    expect(applySynonyms('sneaker trainer', rules, known)).toEqual({ query: 'sneaker trainer', phrases: ['running shoe'], alternatives: [] });
    // Three sets of 20 synonyms for "hat" bring 57 words: 32 are added (docs/api.md: "at most 32").
    const many = await synonymRules('t-syn-cap', async () =>
      [0, 1, 2].map((k) => ({ id: k + 1, type: 'two_way' as const, input: null, synonyms: ['hat', ...Array.from({ length: 19 }, (_, i) => `cap${k}x${i}`)], created: 1, updated_at: 1 })),
    );
    const out = applySynonyms('hat', many, () => true);
    expect(out.phrases).toEqual([]);
    expect(out.query.split(' ')).toHaveLength(33);
    expect(out.query.endsWith(' hat')).toBe(true);
  });

  it('bring the same words before and after a build: a word only a changed item held is no more known', async () => {
    const rules = await synonymRules('t-syn-live', async () => [
      { id: 1, type: 'two_way', input: null, synonyms: ['sofa', 'couch'], created: 1, updated_at: 1 },
      { id: 2, type: 'two_way', input: null, synonyms: ['tv', 'television screen'], created: 1, updated_at: 1 },
    ]);
    const before = [doc(1, 'Couch cover'), doc(2, 'Coach bag'), doc(3, 'Television screen cleaner'), doc(4, 'Sofa bed'), doc(6, 'TV stand')];
    const after = [doc(1, 'Sofa cover'), doc(2, 'Coach bag'), doc(3, 'Monitor cleaner'), doc(4, 'Sofa bed'), doc(6, 'TV stand')];
    const fresh = new PreparedDelta({ docs: [after[0] as SearchDoc, after[2] as SearchDoc], masked: new Set() }, SearchIndex.build(before, 64, 1));
    const built = new PreparedDelta(undefined, SearchIndex.build(after, 64, 1));
    for (const q of ['sofa', 'tv']) expect(synonymsIn(fresh, q, rules), q).toEqual(synonymsIn(built, q, rules));
    expect(synonymsIn(fresh, 'sofa', rules)).toEqual({ query: 'sofa', phrases: [], alternatives: [] });
    // (Known while an item holds it: the couch of the build, before the change.)
    expect(synonymsIn(new PreparedDelta(undefined, SearchIndex.build(before, 64, 1)), 'sofa', rules).query).toBe('couch sofa');
  });

  it("score a word's one-word synonyms as that word, not as words of their own, alike in the delta and in a build", async () => {
    const rules = await synonymRules('t-syn-one', async () => [
      { id: 1, type: 'two_way', input: null, synonyms: ['sofa', 'couch', 'settee', 'divan'], created: 1, updated_at: 1 },
      { id: 2, type: 'two_way', input: null, synonyms: ['sneaker', 'running shoe', 'trainer'], created: 1, updated_at: 1 },
    ]);
    const items = [
      doc(1, 'Leather sofa bed'),
      doc(2, 'Leather couch settee divan bed'),
      doc(3, 'Couch settee'),
      doc(4, 'Settee couch'),
      doc(5, 'Sneaker blue'),
      doc(6, 'Sneaker trainer'),
      ...['Garden chair', 'Table lamp', 'Wool rug', 'Desk', 'Running shoe red'].map((name, i) => doc(7 + i, name)),
    ];
    const run = (built: boolean, asked: string) => {
      const index = SearchIndex.build(built ? items : [], 64, 1);
      const delta = new PreparedDelta(built ? { docs: [], masked: new Set() } : { docs: items, masked: new Set() }, index);
      const q = synonymsIn(delta, asked, rules);
      const r = rank(index, delta, { query: q.query, asked, phrases: q.phrases, alternatives: q.alternatives, mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null }, { limit: 20 });
      return new Map(r.hits.map((h) => [h.doc.id, h.score]));
    };
    for (const built of [true, false]) {
      const sofa = run(built, 'sofa');
      // The item holding the word asked for first; three of its synonyms count as one word, at most the word's IDF.
      expect([...sofa.keys()].slice(0, 1), `built ${built}`).toEqual([1]);
      expect(sofa.get(2)).toBeLessThan(sofa.get(1) as number);
      // Synonyms that follow one another in a set are no pair of the query's words: no proximity for "couch settee".
      expect(sofa.get(3)).toBe(sofa.get(4));
      // Synonyms a trigger of two terms brings count once too: "sneaker trainer" scores as "sneaker blue".
      const shoes = run(built, 'running shoe');
      expect(shoes.get(6)).toBe(shoes.get(5));
      expect(shoes.get(6)).toBeGreaterThan(0);
    }
    // The same scores in the delta as in a build.
    for (const asked of ['sofa', 'running shoe', 'couch']) expect([...run(false, asked)]).toEqual([...run(true, asked)]);
  });

  it("weigh a synonym phrase's terms at most as the word asked for: a Japanese word's rarer character pairs do not outrank it", async () => {
    const rules = await synonymRules('t-syn-phrase-cap', async () => [{ id: 1, type: 'two_way', input: null, synonyms: ['ソファ', 'couch'], created: 1, updated_at: 1 }]);
    const items = [
      doc(1, 'Leather couch'),
      doc(2, 'Sofa deluxe, a couch'),
      doc(3, 'ソファベッド'),
      ...['Garden chair', 'Table lamp', 'Wool rug', 'Desk', 'Oak shelf'].map((name, i) => doc(4 + i, name)),
    ];
    const run = (built: boolean, asked: string) => {
      const index = SearchIndex.build(built ? items : [], 64, 1);
      const delta = new PreparedDelta(built ? { docs: [], masked: new Set() } : { docs: items, masked: new Set() }, index);
      const q = synonymsIn(delta, asked, rules);
      const r = rank(index, delta, { query: q.query, asked, phrases: q.phrases, alternatives: q.alternatives, mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null }, { limit: 20 });
      return r.hits.map((h) => h.doc.id);
    };
    for (const built of [true, false]) {
      // The items holding couch first, the sofa bed found by its synonym after them.
      expect(run(built, 'couch'), `built ${built}`).toEqual([1, 2, 3]);
      // Asked for in Japanese, the word's own item first.
      expect(run(built, 'ソファ')[0], `built ${built}`).toBe(3);
    }
  });

  it('score phrases cheapest first while their postings fit in the budget of a long query, the cheapest always', () => {
    const items = [doc(1, 'alpha beta'), doc(2, 'alpha beta'), ...Array.from({ length: 5 }, (_, i) => doc(3 + i, 'gamma delta'))];
    const index = SearchIndex.build(items, 64, 1);
    const matched = (phrases: string[]) =>
      rank(index, new PreparedDelta(undefined, index), { query: 'omega', phrases, mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null }, { limit: 10 }).total;
    expect(matched(['gamma delta', 'alpha beta'])).toBe(7);
    const before = RANKING.maxPostings;
    RANKING.maxPostings = 4;
    try {
      expect(matched(['gamma delta', 'alpha beta'])).toBe(2);
      expect(matched(['gamma delta'])).toBe(5);
    } finally {
      RANKING.maxPostings = before;
    }
  });

  it('score a phrase as one word, only where all its words are, alike in the delta and in a build', () => {
    // {tv, television set}: "set" alone (cookware) or "television" alone (a stand) is not the phrase.
    const items = [doc(1, 'Sony TV 55 inch'), doc(2, 'Old television set'), doc(3, 'Television stand'), doc(4, 'Cookware set of 5 pots'), doc(5, 'Set of television set cables')];
    const run = (built: boolean, phrases: string[]) => {
      const index = SearchIndex.build(built ? items : [], 64, 1);
      const delta = new PreparedDelta(built ? { docs: [], masked: new Set() } : { docs: items, masked: new Set() }, index);
      const r = rank(index, delta, { query: 'tv', phrases, mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null }, { limit: 10 });
      return r.hits.map((h) => [h.doc.id, h.score]);
    };
    const found = run(true, ['television set']);
    expect(found.map(([id]) => id).sort()).toEqual([1, 2, 5]);
    // Highlighting marks a phrase's words in the items that hold it whole only.
    const marks = (d: SearchDoc) => highlightText(d.name, withPhrasesHeld(new Set(['tv']), d, [phraseTerms('television set')]), DEFAULT_TAGS);
    expect(items.map(marks)).toEqual([
      'Sony <em>TV</em> 55 inch',
      'Old <em>television</em> <em>set</em>',
      'Television stand',
      'Cookware set of 5 pots',
      '<em>Set</em> of <em>television</em> <em>set</em> cables',
    ]);
    // Held in what highlighting shows: the name and the description's part a snippet is chosen from.
    const far = { ...doc(6, 'Set top box'), description: `${'cable '.repeat(400)}television` };
    const held = (scanned: number) => [...withPhrasesHeld(new Set(['tv']), far, [phraseTerms('television set')], scanned)];
    expect(held(SNIPPET_SCAN)).toEqual(['tv', 'televis', 'set']);
    expect(held(snippetScan(100))).toEqual(['tv']);
    // Not in the metadata, which highlighting does not show: ranking finds the phrase there (any
    // field), but "set" alone is all the name holds of it.
    const branded = doc(7, 'Cookware set', { brand: 'Television' });
    expect(marks(branded)).toBe('Cookware set');
    expect(run(false, ['television set'])).toEqual(found);
    // As one word: the mean of its words' scores, not their sum.
    const [tv, set] = [run(true, []), run(true, ['television set'])];
    expect(tv.map(([id]) => id)).toEqual([1]);
    const stats = new PreparedDelta(undefined, SearchIndex.build(items, 64, 1)).stats();
    const phraseIdf = (idfOf(stats.n, stats.df('televis')) + idfOf(stats.n, stats.df('set'))) / 2;
    const tvIdf = idfOf(stats.n, stats.df('tv'));
    const [ratioTv, ratioPhrase] = [(tv[0]?.[1] as number) / tvIdf, (set.find(([id]) => id === 2)?.[1] as number) / phraseIdf];
    expect(ratioPhrase).toBeGreaterThan(0.5 * ratioTv);
    expect(ratioPhrase).toBeLessThan(1.5 * ratioTv);
  });
});

describe('a filtered hybrid search', () => {
  // A small shop whose descriptions share words: a query's vector feedback moves it toward its
  // keyword matches, whose neighbours are then close to it; filtering those matches away must not
  // lose what the unfiltered search found (a facet's count leads to its items).
  const e = new HashingEmbedding(512);
  const kinds = ['Trail running shoe', 'Rain jacket', 'Wool cap', 'Classic sock'];
  const cats = ['shoes', 'jackets', 'hats', 'socks'];
  const docs: SearchDoc[] = Array.from({ length: 40 }, (_, i) => {
    const name = `${kinds[i % 4]} ${i}`;
    const description = i % 10 === 0 ? '' : `Item number ${i} <b>bold</b> & "quoted" for running and walking`;
    const item = { name, description, metadata: { category: cats[i % 4] as string } };
    return { id: i + 1, ...item, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: e.embedOne(itemText(item)) };
  });
  const index = SearchIndex.build(docs, 512, 1);
  const delta = new PreparedDelta({ docs: [], masked: new Set() }, index);

  it('finds every match of the unfiltered search that passes the filter, for each facet value', () => {
    for (const query of ['jacket', 'wool', 'sock walking', 'rain']) {
      const stats = delta.stats();
      const req = (filter: typeof NO_FILTER) => ({ query, mode: 'hybrid' as const, filter, queryVector: e.embedOne(query, (t: string) => idfOf(stats.n, stats.df(t))), profile: null });
      const facets = new FacetCounter(['category']);
      rank(index, delta, req(NO_FILTER), { limit: 1, visit: facets.over({ index, delta }) });
      for (const { value, count } of facets.result().category?.values ?? []) {
        const filtered = rank(index, delta, req(clauseFilter([{ field: 'metadata.category', op: 'eq', value }])), { limit: 100 });
        expect(filtered.total, `${query}: ${String(value)}`).toBeGreaterThanOrEqual(count);
      }
    }
  });
});

describe('browsing (an empty query)', () => {
  // A build holding its items in no order of id (a build reads them in its store's order), a
  // delta with newer items, a replaced one and a deleted one, and inactive items on both sides.
  const random = seededRandom(41);
  const built = Array.from({ length: 300 }, (_, i) => ({ ...doc(i + 1, `item ${i + 1}`), active: (i + 1) % 7 !== 0 }));
  for (let i = built.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [built[i], built[j]] = [built[j] as SearchDoc, built[i] as SearchDoc];
  }
  const index = SearchIndex.build(built, 64, 1);
  const fresh = [...Array.from({ length: 40 }, (_, i) => ({ ...doc(301 + i, `new ${301 + i}`), active: (301 + i) % 5 !== 0 })), doc(150, 'item 150 renamed')];
  const delta = new PreparedDelta({ docs: fresh, masked: new Set([151]) });
  delta.bind(index);
  const expected = [...built.filter((d) => d.id !== 150 && d.id !== 151), ...fresh]
    .filter((d) => d.active)
    .map((d) => d.id)
    .sort((a, b) => b - a);

  it('lists every active item newest first, in pages that neither repeat nor skip, each counting every match', () => {
    for (const limit of [1, 7, 20, 500]) {
      const seen: number[] = [];
      let after: { score: number; id: number } | undefined;
      for (;;) {
        const r = rank(index, delta, { query: '', mode: 'hybrid', filter: NO_FILTER, queryVector: null, profile: null }, { limit, after });
        expect(r.total).toBe(expected.length);
        const page = r.hits.slice(0, limit);
        seen.push(...page.map((h) => h.doc.id));
        const last = r.hits[limit - 1];
        if (r.hits.length <= limit || !last) break;
        after = { score: last.score, id: last.doc.id };
      }
      expect(seen).toEqual(expected);
    }
  });

  it("orders by a user's taste when known, the same whatever order the build holds", () => {
    const profile = normalize(Float32Array.from({ length: 64 }, () => random() - 0.5));
    const inOrder = SearchIndex.build(
      [...built].sort((a, b) => a.id - b.id),
      64,
      1,
    );
    const again = new PreparedDelta({ docs: fresh, masked: new Set([151]) });
    again.bind(inOrder);
    const browse = (ix: SearchIndex, d: PreparedDelta) => rank(ix, d, { query: '', mode: 'hybrid', filter: NO_FILTER, queryVector: null, profile }, { limit: 25 });
    const a = browse(index, delta);
    const b = browse(inOrder, again);
    expect(a.hits.map((h) => [h.doc.id, h.score])).toEqual(b.hits.map((h) => [h.doc.id, h.score]));
    expect(a.total).toBe(expected.length);
    // Best taste first (ties to the lower id), as a sort of every match would have them.
    const scores = a.hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
  });
});

describe('a catalog of 20,000 items or more, all changed since the build (right after an import)', () => {
  // Both sides have an IVF for their nearest neighbours (a build's, and the delta's own, trained
  // alike on the same vectors), so every mode ranks alike, the semantic lists and `total` too.
  const words = ['trail', 'running', 'shoe', 'rain', 'jacket', 'camp', 'stove', 'steel', 'kettle', 'green', 'tea', 'wool', 'sock', 'light', 'tent'];
  const random = seededRandom(77);
  // Every 37th item passes a filter: too few for the probed lists, so both sides score the rows it may pass.
  const docs = Array.from({ length: IVF_MIN + 200 }, (_, i) =>
    doc(i + 1, `${Array.from({ length: 3 + (i % 4) }, () => words[Math.floor(random() * words.length)]).join(' ')} ${i}`, { rare: i % 37 === 0 ? 'y' : 'n' }),
  );
  const built = SearchIndex.build(docs, 64, 1);
  const empty = SearchIndex.build([], 64, 1);
  const fresh = new PreparedDelta({ docs, masked: new Set() });
  fresh.bind(empty);
  const none = new PreparedDelta({ docs: [], masked: new Set() });
  none.bind(built);

  it('are ranked the same in every mode before and after the build, filtered or not: the same hits, scores and total', () => {
    expect(built.parts.ivf).not.toBeNull();
    for (const query of ['trail shoe', 'green tea kettle', 'wool', 'camp stove for rain', 'zorbo'])
      for (const [name, filter] of [
        ['unfiltered', NO_FILTER],
        ['rare', coreFilter({ metadata: { rare: 'y' } })],
      ] as const)
        for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
          const req = { query, mode, filter, queryVector: emb.embedOne(query), profile: null };
          const seen = (r: ReturnType<typeof rank>) => ({ total: r.total, hits: r.hits.map((h) => [h.doc.id, h.score]) });
          const after = seen(rank(built, none, req, { limit: 20 }));
          // Every list has hits but the keyword one of a word no item has (and, filtered, hybrid's).
          expect(after.hits.length > 0, `${mode} "${query}" ${name}`).toBe(query !== 'zorbo' || mode === 'semantic' || (mode === 'hybrid' && name === 'unfiltered'));
          expect(seen(rank(empty, fresh, req, { limit: 20 })), `${mode} "${query}" ${name}`).toEqual(after);
        }
  });
});

describe('facet values', () => {
  /** Every item of `docs` visited, as a ranking that matches them all does. */
  const countAll = (docs: SearchDoc[], keys: string[]) => {
    const index = SearchIndex.build(docs, 64, 1);
    const facets = new FacetCounter(keys);
    const visit = facets.over({ index, delta: new PreparedDelta(undefined, index) });
    for (let k = 0; k < docs.length; k++) visit(k);
    return facets.result();
  };

  it('lists at most 100 values, most frequent first, equals by value, values_truncated only past 100', () => {
    const tagged = (n: number) => Array.from({ length: n }, (_, i) => doc(i + 1, `item ${i}`, { tag: `t${String(n - i).padStart(3, '0')}` }));
    expect(FACET_VALUES).toBe(100);
    const exactly = countAll(tagged(100), ['tag']).tag;
    expect(exactly?.values).toHaveLength(100);
    expect(exactly?.values_truncated).toBe(false);
    // Equal counts: by value, whatever order the items came in (they came t100 first).
    expect(exactly?.values.slice(0, 2)).toEqual([
      { value: 't001', count: 1 },
      { value: 't002', count: 1 },
    ]);
    const over = countAll(tagged(101), ['tag']).tag;
    expect(over?.values).toHaveLength(100);
    expect(over?.values_truncated).toBe(true);
  });

  it("answers a disjunctive facet with the counts of its own ranking, not those of the query's filters", () => {
    const docs = [doc(1, 'a', { brand: 'acme' }), doc(2, 'b', { brand: 'bolt' }), doc(3, 'c', { brand: 'bolt' })];
    const index = SearchIndex.build(docs, 64, 1);
    const view = { index, delta: new PreparedDelta(undefined, index) };
    const facets = new SearchFacets(['brand'], [{ key: 'brand', filter: NO_FILTER }]);
    // The query (filtered on brand acme) matched item 1 only; the facet's own ranking (without that filter) all three.
    const visit = facets.over(view);
    visit(0);
    facets.countApart(view, (_filter, v) => [0, 1, 2].forEach((k) => v(k)));
    expect(facets.result().brand?.values).toEqual([
      { value: 'bolt', count: 2 },
      { value: 'acme', count: 1 },
    ]);
  });
});
