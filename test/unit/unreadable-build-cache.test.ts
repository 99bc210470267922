import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import { setClock } from '../../shared/clock.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { SEARCH_SETTINGS } from '../../shared/search/settings.ts';
import { currentIndex, type SearchDeps, UNREADABLE_BUILDS_KEPT } from '../../shared/search/views.ts';

describe('index builds this code cannot read, remembered per tenant', () => {
  let now = 1_700_000_000_000;
  let restore = () => {};
  beforeEach(() => {
    restore = setClock({ nowMs: () => now });
  });
  afterEach(() => restore());

  it('past the bound, the least recently checked tenant is let go, not every one: a busy tenant does not download its build again', async () => {
    const downloads: string[] = [];
    // Every tenant's pointer names a build that is not an index artifact (as one of a newer format, or damaged).
    const blobs = {
      get: async (key: string) => {
        const pointer = /^search\/(.+)\/current\.json$/.exec(key);
        if (pointer) return new TextEncoder().encode(JSON.stringify({ key: `search/${pointer[1]}/index-5.bin`, builtAt: 5 }));
        downloads.push(key);
        return new TextEncoder().encode('not an index');
      },
    } as unknown as BlobStore;
    // The pointer check reads only the blob store (no delta is read by currentIndex).
    const deps = { blobs, embedder: new HashingEmbedding(8) } as unknown as SearchDeps;
    const downloaded = (tenant: string) => downloads.filter((k) => k === `search/${tenant}/index-5.bin`).length;
    await currentIndex(deps, 'ub-busy');
    // As many other tenants as the cache holds, the busy tenant's pointer checked again after each.
    for (let k = 0; k < UNREADABLE_BUILDS_KEPT; k++) {
      await currentIndex(deps, `ub-one-off-${k}`);
      now += SEARCH_SETTINGS.pointerCheckMs + 1;
      expect((await currentIndex(deps, 'ub-busy')).builtAt).not.toBe(5);
    }
    // Until 2026-12-07 the cache was emptied whole when full: the busy tenant's build was downloaded again.
    expect(downloaded('ub-busy')).toBe(1);
    // The bound holds: the latest other tenant's build is remembered, the first one's downloaded again.
    now += SEARCH_SETTINGS.pointerCheckMs + 1;
    await currentIndex(deps, `ub-one-off-${UNREADABLE_BUILDS_KEPT - 1}`);
    await currentIndex(deps, 'ub-one-off-0');
    expect([downloaded(`ub-one-off-${UNREADABLE_BUILDS_KEPT - 1}`), downloaded('ub-one-off-0')]).toEqual([1, 2]);
  });
});
