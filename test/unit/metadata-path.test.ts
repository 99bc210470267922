import { describe, expect, it } from 'vitest';
import { matches } from '../../shared/control/pipeline.ts';
import { metadataReader } from '../../shared/domain/metadata-path.ts';
import type { JsonObject } from '../../shared/domain/types.ts';
import type { FilterClause } from '../../shared/schemas/search.ts';
import { ColumnCache } from '../../shared/search/columns.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { NO_FILTER, SearchIndex, type SearchDoc } from '../../shared/search/engine.ts';
import { FacetCounter } from '../../shared/search/facets.ts';
import { clauseFilter, coreFilter } from '../../shared/search/filters.ts';
import { PreparedDelta, rank } from '../../shared/search/rank.ts';
import { SortedPage } from '../../shared/search/sort.ts';
import { ASK, PASSES, type DocFilter } from '../../shared/search/types.ts';

/*
 * A metadata key with dots names a path into nested objects when the item has no top-level key
 * spelled so (issue 19, "Filters on any metadata key"): one resolver (shared/domain/metadata-path.ts)
 * read by search filters (clauses and the shorthand), facets, sort, the Platform item search
 * (the same clauses) and rule conditions, from a build's columns and a delta's alike.
 */

describe('the metadata key resolver', () => {
  const read = (key: string, m: JsonObject) => metadataReader(key)(m);
  it('reads a top-level key as it is spelled, first', () => {
    expect(read('brand', { brand: 'Acme' })).toBe('Acme');
    expect(read('a.b', { 'a.b': 3, a: { b: 99 } })).toBe(3);
    // The top-level key wins whatever it holds: null is its value (absent to filters and facets).
    expect(read('a.b', { 'a.b': null, a: { b: 99 } })).toBeNull();
    expect(read('sp ace', { 'sp ace': 'x' })).toBe('x');
  });
  it('else follows the dots into nested objects', () => {
    expect(read('dims.w', { dims: { w: 3 } })).toBe(3);
    expect(read('spec.size.eu', { spec: { size: { eu: 42 } } })).toBe(42);
    expect(read('dims', { dims: { w: 3 } })).toEqual({ w: 3 });
    expect(read('dims.tags', { dims: { tags: ['a', 'b'] } })).toEqual(['a', 'b']);
    expect(read('dims.w', { dims: 'flat' })).toBeUndefined();
    expect(read('dims.w', { dims: null })).toBeUndefined();
    expect(read('dims.w', { dims: { h: 1 } })).toBeUndefined();
    expect(read('dims.w', {})).toBeUndefined();
    // Only the top level is tried whole.
    expect(read('a.b.c', { a: { 'b.c': 1 } })).toBeUndefined();
  });
  it('reads own keys only, at every level', () => {
    expect(read('constructor', {})).toBeUndefined();
    expect(read('toString', { a: 1 })).toBeUndefined();
    expect(read('dims.constructor', { dims: { w: 1 } })).toBeUndefined();
    expect(read('dims.__proto__', { dims: { w: 1 } })).toBeUndefined();
    expect(read('dims.constructor', { dims: { constructor: 'own' } })).toBe('own');
    expect(read('a.length', { a: 'abc' })).toBeUndefined();
  });
  it('goes through a list element by element, as Algolia reads authors.name', () => {
    const m: JsonObject = { authors: [{ name: 'Ann', age: 30 }, { name: 'Bo' }, 'loose', null, { name: null }, { name: ['Cy', 'Di'] }, [{ name: 'Ed' }]] };
    expect(read('authors.name', m)).toEqual(['Ann', 'Bo', 'Cy', 'Di', 'Ed']);
    expect(read('authors.age', m)).toEqual([30]);
    // No element has it: absent, not an empty list.
    expect(read('authors.nick', m)).toBeUndefined();
    expect(read('tags.name', { tags: ['a', 'b'] })).toBeUndefined();
    expect(read('a.b.c', { a: [{ b: [{ c: 1 }, { c: 2 }] }, { b: { c: 3 } }] })).toEqual([1, 2, 3]);
  });
});

const emb = new HashingEmbedding(64);
const doc = (id: number, metadata: JsonObject): SearchDoc => ({
  id,
  name: `widget ${id}`,
  description: '',
  metadata,
  active: true,
  created: 1,
  updated_at: 1,
  embedding_updated_at: 1,
  vector: emb.embedOne(`widget ${id}`),
});

describe('search over nested metadata keys', () => {
  const docs = [
    doc(1, {
      dims: { w: 3, unit: 'cm' },
      authors: [
        { name: 'Ann', age: 30 },
        { name: 'Bo', age: 50 },
      ],
    }),
    doc(2, { dims: { w: 7, unit: 'in' }, authors: [{ name: 'Ann' }] }),
    // The top-level key so spelled wins over the path.
    doc(3, { 'dims.w': 5, dims: { w: 100 } }),
    doc(4, { dims: 'flat', authors: ['Ann'] }),
    doc(5, {}),
    doc(6, { dims: { w: null }, authors: [{ name: null }, { age: 10 }] }),
    doc(7, { dims: [{ w: 1 }, { w: 9 }] }),
  ];
  // The same documents in a build, and in a delta over a build of others (right after an import).
  const built = { index: SearchIndex.build(docs, 64, 1) };
  const other = SearchIndex.build([{ ...doc(100, { dims: { w: 1000 } }), name: 'gadget' }], 64, 1);
  const views = [
    { what: 'build', index: built.index, delta: new PreparedDelta({ docs: [], masked: new Set() }, built.index) },
    { what: 'delta', index: other, delta: new PreparedDelta({ docs, masked: new Set() }, other) },
  ];
  const request = (filter: DocFilter) => ({ query: 'widget', mode: 'keyword' as const, filter, queryVector: null, profile: null });
  const found = (filter: DocFilter) =>
    views.map(({ index, delta }) => {
      const ids: number[] = [];
      const N = index.docs.length;
      rank(index, delta, request(filter), { limit: 100, visit: (key) => ids.push(key < N ? (index.docs[key] as SearchDoc).id : delta.docAt(key - N).id) });
      return ids.sort((a, b) => a - b);
    });

  const cases: [FilterClause, number[]][] = [
    [{ field: 'metadata.dims.w', op: 'eq', value: 3 }, [1]],
    [{ field: 'metadata.dims.w', op: 'gte', value: 5 }, [2, 3, 7]],
    [{ field: 'metadata.dims.w', op: 'gt', value: 50 }, []],
    [{ field: 'metadata.dims.w', op: 'lt', value: 2 }, [7]],
    [{ field: 'metadata.dims.w', op: 'in', value: [9, 5] }, [3, 7]],
    [{ field: 'metadata.dims.w', op: 'neq', value: 3 }, [2, 3, 4, 5, 6, 7]],
    [{ field: 'metadata.dims.w', op: 'exists', value: true }, [1, 2, 3, 7]],
    [{ field: 'metadata.dims.unit', op: 'in', value: ['cm'] }, [1]],
    [{ field: 'metadata.authors.name', op: 'eq', value: 'Ann' }, [1, 2]],
    [{ field: 'metadata.authors.name', op: 'exists', value: false }, [3, 4, 5, 6, 7]],
    [{ field: 'metadata.authors.age', op: 'gte', value: 40 }, [1]],
    [{ field: 'metadata.authors.age', op: 'lte', value: 30 }, [1, 6]],
  ];
  it.each(cases)('filter %j finds %j, from the documents and from the columns of a build and of a delta', (clause, want) => {
    const f = clauseFilter([clause]);
    expect(docs.filter((d) => f(d)).map((d) => d.id)).toEqual(want);
    expect(found(f)).toEqual([want, want]);
    for (const lasting of [true, false]) {
      const verdicts = f.over?.(new ColumnCache(docs.length, (i) => docs[i], undefined, lasting));
      if (!verdicts) throw new Error('no column reading');
      docs.forEach((d, i) => {
        if (verdicts[i] !== ASK) expect([lasting, d.id, verdicts[i] === PASSES]).toEqual([lasting, d.id, f(d)]);
      });
    }
  });

  it('filter by the shorthand metadata object alike', () => {
    expect(found(coreFilter({ metadata: { 'dims.unit': 'in' } }))).toEqual([[2], [2]]);
    expect(found(coreFilter({ metadata: { 'authors.name': 'Bo', 'dims.w': 3 } }))).toEqual([[1], [1]]);
    expect(found(coreFilter({ metadata: { 'dims.w': 100 } }))).toEqual([[], []]);
  });

  it('count facets: a nested string key its values, a nested numeric key its range', () => {
    for (const { index, delta } of views) {
      const facets = new FacetCounter(['dims.w', 'authors.name', 'dims.unit', 'authors.age']);
      rank(index, delta, request(NO_FILTER), { limit: 3, visit: facets.over({ index, delta }) });
      expect(facets.result()).toEqual({
        'dims.w': { count: 4, values: [], values_truncated: false, min: 1, max: 9 },
        'authors.name': {
          count: 2,
          values: [
            { value: 'Ann', count: 2 },
            { value: 'Bo', count: 1 },
          ],
          values_truncated: false,
          min: null,
          max: null,
        },
        'dims.unit': {
          count: 2,
          values: [
            { value: 'cm', count: 1 },
            { value: 'in', count: 1 },
          ],
          values_truncated: false,
          min: null,
          max: null,
        },
        'authors.age': { count: 2, values: [], values_truncated: false, min: 10, max: 50 },
      });
    }
  });

  it('sort by a nested numeric key (a list, or no number, last by id)', () => {
    for (const order of ['asc', 'desc'] as const) {
      const want = order === 'asc' ? [1, 3, 2, 4, 5, 6, 7] : [2, 3, 1, 7, 6, 5, 4];
      for (const { index, delta } of views) {
        const page = new SortedPage({ field: 'metadata.dims.w', order }, 10, undefined);
        rank(index, delta, request(NO_FILTER), { limit: 1, visit: page.over({ index, delta }) });
        expect(page.hits.map((h) => h.doc.id)).toEqual(want);
      }
    }
  });

  it('test rule conditions as search filters do', () => {
    const at = (id: number) => docs[id - 1] as SearchDoc;
    expect(matches(at(1), { field: 'metadata.dims.w', op: 'eq', value: 3 })).toBe(true);
    // The top-level key "dims.w" first, as in search (until then rules read only the path: 100).
    expect(matches(at(3), { field: 'metadata.dims.w', op: 'eq', value: 5 })).toBe(true);
    expect(matches(at(3), { field: 'metadata.dims.w', op: 'gte', value: 50 })).toBe(false);
    // Through a list of objects, any element.
    expect(matches(at(2), { field: 'metadata.authors.name', op: 'eq', value: 'Ann' })).toBe(true);
    expect(matches(at(1), { field: 'metadata.authors.name', op: 'in', value: ['Bo', 'Zed'] })).toBe(true);
    expect(matches(at(4), { field: 'metadata.authors.name', op: 'exists', value: false })).toBe(true);
    expect(matches(at(6), { field: 'metadata.authors.name', op: 'exists', value: true })).toBe(false);
    // A bound holds for a list when any number of it does, as a search filter's (until 2026-12-07 never).
    expect(matches(at(7), { field: 'metadata.dims.w', op: 'gte', value: 5 })).toBe(true);
    expect(matches(at(7), { field: 'metadata.dims.w', op: 'lte', value: 5 })).toBe(true);
    expect(matches(at(7), { field: 'metadata.dims.w', op: 'gte', value: 10 })).toBe(false);
    expect(matches(at(7), { field: 'metadata.dims.w', op: 'lte', value: 0 })).toBe(false);
  });
});
