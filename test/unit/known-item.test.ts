import { describe, expect, it } from 'vitest';
import { knownItemQueries, mrrAndFirst, naturalMovie, type KnownItemDoc } from '../../bench/known-item.ts';
import { editDistance } from '../../shared/search/text.ts';

describe('known-item queries (bench/known-item.ts)', () => {
  it('writes a title as people know it: no year, no alternative title, the article in front', () => {
    expect(naturalMovie('Lion in Winter, The (1968)')).toBe('The Lion in Winter');
    expect(naturalMovie('City of Lost Children, The (Cité des enfants perdus, La) (1995)')).toBe('The City of Lost Children');
    expect(naturalMovie('Homme et une femme, Un (1966)')).toBe('Un Homme et une femme');
    expect(naturalMovie("Ours, L' (1988)")).toBe("L'Ours");
    expect(naturalMovie('Heat (1995)')).toBe('Heat');
  });

  const docs: KnownItemDoc[] = ['Trail Running Shoes', 'Rain Jacket Deluxe', 'Sleeping Bag', 'Camping Stove Burner', 'Rain Jacket Deluxe', "L'Oréal Shampoo"].map((title, i) => ({
    id: i + 1,
    title,
    text: '',
  }));
  const queries = knownItemQueries(docs, (d) => d.title, false, 7, 3);

  it('makes each kind from the item it names, the same for a seed, with same-named items relevant too', () => {
    expect(knownItemQueries(docs, (d) => d.title, false, 7, 3)).toEqual(queries);
    expect(new Set(queries.map((q) => q.kind))).toEqual(
      new Set(['exact name', 'name lower case', 'first word(s)', 'one typo', 'half-typed last word', 'words reordered', 'lower case, no punctuation']),
    );
    for (const q of queries) {
      const source = docs.find((d) => d.id === q.source) as KnownItemDoc;
      expect(q.relevant).toEqual(docs.filter((d) => d.title === source.title).map((d) => d.id));
      if (q.kind === 'exact name') expect(q.text).toBe(source.title);
      if (q.kind === 'one typo') expect(editDistance(q.text.toLowerCase(), source.title.toLowerCase(), 2)).toBe(1);
      if (q.kind === 'half-typed last word') expect(source.title.startsWith(q.text)).toBe(true);
      if (q.kind === 'words reordered') expect(q.text.split(' ').sort()).toEqual(source.title.split(' ').sort());
      if (q.kind === 'lower case, no punctuation') expect(q.text).toMatch(/^[a-z ]+$/);
    }
  });

  it('scores MRR@10 and success@1 from the ranks (0: not in the top 10)', () => {
    expect(mrrAndFirst([1, 2, 0, 4])).toEqual({ mrr10: (1 + 0.5 + 0.25) / 4, success1: 0.25 });
    expect(mrrAndFirst([])).toEqual({ mrr10: 0, success1: 0 });
  });
});
