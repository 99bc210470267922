import { describe, expect, it } from 'vitest';
import { PlatformClient, type FetchLike } from '../../packages/client/src/index.ts';

/**
 * The key and client lists take their cursor as `starting_after` or, by the name they first took it
 * by, `cursor`; both sent and different is 400. Their paginators follow `next_cursor` without
 * sending both.
 */
describe('PlatformClient key and client lists', () => {
  /** A fake Platform API: three pages of one record, each refusing a request that sends both cursors. */
  function api() {
    const queries: Record<string, string>[] = [];
    const fetch: FetchLike = async (r) => {
      const q = Object.fromEntries(new URL(r.url).searchParams);
      queries.push(q);
      if (q.cursor !== undefined && q.starting_after !== undefined && q.cursor !== q.starting_after) {
        return Response.json({ error: 'send starting_after or cursor, not two different cursors' }, { status: 400 });
      }
      const at = Number(q.starting_after ?? q.cursor ?? 0);
      const id = `k${at + 1}`;
      return Response.json({ data: [{ id }], has_more: at + 1 < 3, next_cursor: at + 1 < 3 ? String(at + 1) : null });
    };
    return { client: new PlatformClient({ baseUrl: 'http://platform.test', apiKey: 'svc_abcdefgh_x', fetch, retry: false }), queries };
  }

  for (const start of [{ starting_after: '0' }, { cursor: '0' }, {}] as const) {
    it(`pages from ${JSON.stringify(start)} to the end`, async () => {
      const { client, queries } = api();
      expect((await client.apiKeys.list({ ...start, limit: 1 }).toArray()).map((k) => (k as { id: string }).id)).toEqual(['k1', 'k2', 'k3']);
      expect(queries.filter((q) => q.cursor !== undefined && q.starting_after !== undefined)).toEqual([]);
      const clients = api();
      expect(await clients.client.clients.list({ ...start, limit: 1 }).toArray()).toHaveLength(3);
    });
  }
});
