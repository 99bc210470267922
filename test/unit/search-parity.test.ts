import { describe, expect, it } from 'vitest';
import { SearchView } from '../../shared/search/catalog.ts';
import { HashingEmbedding, normalize } from '../../shared/search/embedding.ts';
import { NO_FILTER, SearchIndex, type SearchDoc } from '../../shared/search/engine.ts';
import { FacetCounter } from '../../shared/search/facets.ts';
import { DEFAULT_TAGS, snippet } from '../../shared/search/highlight.ts';
import { PreparedDelta, rank } from '../../shared/search/rank.ts';
import { SortedPage } from '../../shared/search/sort.ts';
import { applySynonyms, synonymRules, type SynonymSet } from '../../shared/search/synonyms.ts';

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
      const ranked = rank(index, delta, req(profile), { limit: 5, visit: facets.visit });
      expect(ranked.total).toBe(901);
      const f = facets.result();
      expect(f.colour?.values).toEqual([
        { value: 'red', count: 301 },
        { value: 'blue', count: 300 },
        { value: 'green', count: 300 },
      ]);
      expect(f.size).toMatchObject({ count: 901, min: 0, max: 5000 });
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
      rank(index, delta, req(null), { limit: 1, visit: page.visit });
      const slice = page.hits.slice(0, 100);
      seen.push(...slice.map((h) => h.doc.id));
      const last = slice[slice.length - 1];
      if (page.hits.length <= 100 || !last) break;
      after = { value: last.value, id: last.doc.id, builtAt: 1 };
    }
    expect(seen).toEqual([901, ...Array.from({ length: 900 }, (_, i) => 900 - i)]);
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
  it('takes the window with the most matched words, cut with an ellipsis on each cut side', () => {
    const text = `${Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ')} shoe shoe ${Array.from({ length: 30 }, (_, i) => `v${i}`).join(' ')}.`;
    const s = snippet(text, new Set(['shoe']), DEFAULT_TAGS, 10);
    expect(s).toBe('…w22 w23 w24 w25 w26 w27 w28 w29 <em>shoe</em> <em>shoe</em>…');
    // Nothing matched: the opening.
    expect(snippet(text, new Set(['boot']), DEFAULT_TAGS, 3)).toBe('w0 w1 w2…');
    expect(snippet('short & sweet', new Set(['sweet']), DEFAULT_TAGS)).toBe('short &amp; <em>sweet</em>');
  });
});

describe('synonyms at query time', () => {
  const sets: SynonymSet[] = [
    { id: 1, type: 'two_way', input: null, synonyms: ['sneaker', 'running shoe', 'trainer'], created: 1, updated_at: 1 },
    { id: 2, type: 'one_way', input: 'cell phone', synonyms: ['smartphone', 'unknownword'], created: 1, updated_at: 1 },
  ];
  const known = (t: string) => ['run', 'shoe', 'trainer', 'sneaker', 'smartphon'].includes(t);

  it('puts the words of matching sets before the query, only those the vocabulary has', async () => {
    const rules = await synonymRules('t-syn', async () => sets);
    expect(applySynonyms('red sneakers', rules, known)).toBe('running shoe trainer red sneakers');
    // A phrase matches as a run of stems, in either form.
    expect(applySynonyms('Running Shoes', rules, known)).toBe('sneaker trainer Running Shoes');
    expect(applySynonyms('cheap cell phones', rules, known)).toBe('smartphone cheap cell phones');
    // One-way: not back; and nothing applies to other words.
    expect(applySynonyms('smartphone', rules, known)).toBe('smartphone');
    expect(applySynonyms('phone cell', rules, known)).toBe('phone cell');
    expect(applySynonyms('', rules, known)).toBe('');
  });
});
