import { describe, expect, it } from 'vitest';
import type { EmbeddingProvider } from '../../shared/search/embedding.ts';
import { emptyIndex } from '../../shared/search/index-store.ts';
import { QUERY_VECTORS_KEPT, queryVector } from '../../shared/search/profiles.ts';
import type { SearchDeps } from '../../shared/search/views.ts';

describe("a remote embedding provider's query vectors, cached", () => {
  it('past the bound, the least recently searched query is let go, not every one: a frequent query is embedded once', async () => {
    const asked: string[] = [];
    const embedder: EmbeddingProvider = {
      name: 'remote-stand-in',
      dimensions: 4,
      embed: async (texts) => {
        asked.push(...texts);
        return texts.map(() => Float32Array.of(1, 0, 0, 0));
      },
    };
    // Only the embedder is used for a remote provider's query vector.
    const deps = { embedder } as SearchDeps;
    const index = emptyIndex(4);
    const embedded = (q: string) => asked.filter((t) => t === q).length;
    await queryVector(deps, index, 'frequent');
    // As many other queries as the cache holds, the frequent one searched after each.
    for (let k = 0; k < QUERY_VECTORS_KEPT; k++) {
      await queryVector(deps, index, `rare ${k}`);
      expect(await queryVector(deps, index, 'frequent')).toEqual(Float32Array.of(1, 0, 0, 0));
    }
    // Until 2026-12-07 the cache was emptied whole when full: the frequent query was embedded again.
    expect(embedded('frequent')).toBe(1);
    // The bound holds: the latest other query is held, the first was let go (embedded again).
    await queryVector(deps, index, `rare ${QUERY_VECTORS_KEPT - 1}`);
    await queryVector(deps, index, 'rare 0');
    expect([embedded(`rare ${QUERY_VECTORS_KEPT - 1}`), embedded('rare 0')]).toEqual([1, 2]);
  });

  it('searches of one query while its embedding is under way share that call to the provider', async () => {
    let calls = 0;
    const embedder: EmbeddingProvider = {
      name: 'remote-stand-in',
      dimensions: 4,
      embed: async (texts) => {
        calls++;
        await new Promise((r) => setTimeout(r, 10));
        return texts.map(() => Float32Array.of(0, 1, 0, 0));
      },
    };
    const deps = { embedder } as SearchDeps;
    const index = emptyIndex(4);
    const vectors = await Promise.all(Array.from({ length: 5 }, () => queryVector(deps, index, 'at once')));
    expect(vectors.every((v) => v?.[1] === 1)).toBe(true);
    // Until 2026-12-08 each search called the provider.
    expect(calls).toBe(1);
  });
});
