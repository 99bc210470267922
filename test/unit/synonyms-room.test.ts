import { describe, expect, it } from 'vitest';
import { NO_FILTER, SearchIndex, type SearchDoc } from '../../shared/search/engine.ts';
import { PreparedDelta, rank } from '../../shared/search/rank.ts';
import { synonymRules, synonymsIn } from '../../shared/search/synonyms.ts';

const doc = (id: number, name: string): SearchDoc => ({ id, name, description: '', metadata: {}, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: new Float32Array(64) });

describe('synonyms brought to a long query', () => {
  it("take only the room the query's own words leave in the terms scored: an item matching only the query's last word is found", async () => {
    const syn = Array.from({ length: 19 }, (_, i) => `capword${String.fromCharCode(97 + i)}`);
    const rules = await synonymRules('t-scratch-crowd', async () => [{ id: 1, type: 'two_way', input: null, synonyms: ['hat', ...syn], created: 1, updated_at: 1 }]);
    const items = [doc(1, 'Zebra print scarf'), ...syn.map((w, i) => doc(2 + i, `${w} thing`))];
    const index = SearchIndex.build(items, 64, 1);
    const delta = new PreparedDelta(undefined, index);
    // A long query (50 distinct words, the last the one the catalog holds); 1,000 characters are allowed.
    const filler = Array.from({ length: 48 }, (_, i) => `filler${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
    const asked = `hat ${filler.join(' ')} zebra`;
    const search = (query: string, phrases: string[]) =>
      rank(index, delta, { query, asked, phrases, mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null } as never, { limit: 50 }).hits.map((h) => h.doc.id);
    const without = search(asked, []);
    const q = synonymsIn(delta, asked, rules);
    const withSyn = search(q.query, q.phrases);
    expect(without).toContain(1);
    expect(withSyn).toContain(1);
  });
});
