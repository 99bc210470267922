import { describe, expect, it } from 'vitest';
import { PlatformClient, type FetchLike } from '../../packages/client/src/index.ts';

/**
 * The Platform item search (`POST /api/items/search`) is a read that changes nothing (docs/api.md:
 * a console viewer may call it), so the client repeats it after a 5xx or a network error, as it
 * does Core search; a Platform create without an Idempotency-Key (API keys, clients) is still sent once.
 */
describe('PlatformClient item search retries', () => {
  const hit = { data: [{ id: '1', name: 'a', score: 1 }], has_more: false, next_cursor: null, total: 1 };

  /** A fake Platform API whose first answer to each path is `first` (a status, or a dropped connection). */
  function api(first: number | 'drop') {
    const calls: string[] = [];
    const fetch: FetchLike = async (r) => {
      const path = `${r.method} ${new URL(r.url).pathname}`;
      const n = calls.filter((c) => c === path).length;
      calls.push(path);
      if (n === 0) {
        if (first === 'drop') throw new TypeError('fetch failed');
        return Response.json({ error: 'unavailable' }, { status: first });
      }
      return path === 'POST /api/contexts' ? Response.json({ id: 1, name: 'x' }, { status: 201 }) : Response.json(hit);
    };
    return { client: new PlatformClient({ baseUrl: 'http://platform.test', apiKey: 'svc_abcdefgh_x', fetch, retry: { baseDelayMs: 1 } }), calls };
  }

  for (const first of [503, 502, 'drop'] as const) {
    it(`a search answered ${first} is sent again and answers its results`, async () => {
      const { client, calls } = api(first);
      expect((await client.itemSearch.page({ query: 'shoe' })).total).toBe(1);
      expect(calls).toEqual(['POST /api/items/search', 'POST /api/items/search']);
      const all = api(first);
      expect(await all.client.itemSearch.all({ query: 'shoe' }).toArray()).toHaveLength(1);
      expect(all.calls).toHaveLength(2);
    });
  }

  it('a Platform create without an Idempotency-Key (an API key) answered 503 is not repeated; one with a key (a context) is, under the same key', async () => {
    const { client, calls } = api(503);
    await expect(client.apiKeys.create({ name: 'x', scopes: ['items'] })).rejects.toMatchObject({ status: 503 });
    expect(calls).toEqual(['POST /api/api-keys']);
    const keyed = api(503);
    expect(await keyed.client.contexts.create({ name: 'x' }, { idempotencyKey: 'ctx-x' })).toMatchObject({ id: 1 });
    expect(keyed.calls).toEqual(['POST /api/contexts', 'POST /api/contexts']);
  });
});
