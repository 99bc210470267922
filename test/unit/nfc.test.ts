import { afterEach, describe, expect, it, vi } from 'vitest';
import { holdsAnyNfc, holdsNfc, nfc } from '../../shared/domain/nfc.ts';
import type { SearchDoc } from '../../shared/search/types.ts';
import { clauseFilter, coreFilter } from '../../shared/search/filters.ts';

const doc = (id: number, metadata: SearchDoc['metadata']): SearchDoc => ({ id, name: `item ${id}`, metadata }) as SearchDoc;

afterEach(() => vi.restoreAllMocks());

describe('nfc', () => {
  it('is one value for a composed and a decomposed spelling; holdsNfc / holdsAnyNfc read lists as search does', () => {
    const [composed, decomposed] = ['Caf\u00e9', 'Cafe\u0301'];
    expect(nfc(decomposed)).toBe(composed);
    expect(nfc('plain ascii')).toBe('plain ascii');
    expect([holdsNfc(decomposed, composed), holdsNfc(['x', decomposed], composed), holdsNfc('Cafe', composed), holdsNfc(3, 3), holdsNfc('3', 3)]).toEqual([true, true, false, true, false]);
    expect([holdsAnyNfc(decomposed, new Set([composed])), holdsAnyNfc(['y', decomposed], new Set(['x', composed])), holdsAnyNfc('Cafe', new Set([composed]))]).toEqual([true, true, false]);
  });

  it("normalises a document's string once, not once per document per query and per value wanted (review of dc02ae06: the filters' hot path)", () => {
    // A catalog in Japanese: no string of it is taken as it is (below U+0300), so each comparison
    // normalised it: every document, every query, every value of an `in`.
    const kinds = Array.from({ length: 8 }, (_, k) => `東京の家電カテゴリー${k}`);
    const docs = Array.from({ length: 400 }, (_, i) => doc(i + 1, { category: kinds[i % 8] as string, tags: [kinds[(i + 1) % 8] as string, kinds[(i + 2) % 8] as string] }));
    const filters = [
      clauseFilter([{ field: 'metadata.category', op: 'eq', value: kinds[3] as string }]),
      clauseFilter([{ field: 'metadata.tags', op: 'in', value: ['a', 'b', kinds[5] as string, 'c'] }]),
      clauseFilter([{ field: 'metadata.category', op: 'neq', value: kinds[3] as string }]),
      coreFilter({ category: [kinds[1] as string, kinds[2] as string] }),
      coreFilter({ metadata: { category: kinds[6] as string } }),
    ];
    const verdicts = () => filters.map((f) => docs.filter((d) => f(d)).length);
    expect(verdicts()).toEqual([50, 100, 350, 100, 50]);
    const normalised = vi.spyOn(String.prototype, 'normalize');
    // The same queries again, and again: each of the 8 strings was normalised at most once before.
    for (let q = 0; q < 3; q++) expect(verdicts()).toEqual([50, 100, 350, 100, 50]);
    expect(normalised.mock.calls.length).toBeLessThanOrEqual(8);
  });
});
