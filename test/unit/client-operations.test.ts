import { describe, expect, it } from 'vitest';
import { CoreClient, PlatformClient, type FetchLike } from '../../packages/client/src/index.ts';

/** Operations of docs/openapi.json that had no typed method: `PATCH /v1/items/{id}` and `GET /api/items/search`. */
describe('client methods for every Core and Platform operation', () => {
  it('core.items.patch sends PATCH /v1/items/{id} with the fields, retried after a 503 as update is', async () => {
    const sent: { method: string; path: string; body: string }[] = [];
    let failed = false;
    const fetch: FetchLike = async (r) => {
      const path = new URL(r.url).pathname;
      if (path === '/oauth2/token') return Response.json({ access_token: 't', token_type: 'Bearer', expires_in: 3600 });
      sent.push({ method: r.method, path, body: await r.text() });
      if (!failed) {
        failed = true;
        return Response.json({ error: { type: 'api_error', code: 'timeout', message: 'x', request_id: '00000000-0000-0000-0000-000000000000' } }, { status: 503 });
      }
      return Response.json({ object: 'item', id: '7', name: 'b', active: false });
    };
    const core = new CoreClient({ baseUrl: 'http://core.test', clientId: 'c', clientSecret: 's', fetch, retry: { baseDelayMs: 1 } });
    const item = await core.items.patch('7', { active: false });
    expect(item).toMatchObject({ id: '7', active: false });
    expect(sent).toEqual([
      { method: 'PATCH', path: '/v1/items/7', body: '{"active":false}' },
      { method: 'PATCH', path: '/v1/items/7', body: '{"active":false}' },
    ]);
  });

  it('platform.itemSearch.getPage / getAll: GET /api/items/search, following cursor to the end', async () => {
    const queries: Record<string, string>[] = [];
    const fetch: FetchLike = async (r) => {
      const u = new URL(r.url);
      expect(`${r.method} ${u.pathname}`).toBe('GET /api/items/search');
      const q = Object.fromEntries(u.searchParams);
      queries.push(q);
      const at = Number(q.cursor ?? 0);
      return Response.json({ data: [{ id: String(at + 1), score: 1 }], has_more: at < 2, next_cursor: at < 2 ? String(at + 1) : null, total: 3 });
    };
    const p = new PlatformClient({ baseUrl: 'http://platform.test', apiKey: 'svc_abcdefgh_x', fetch, retry: false });
    expect((await p.itemSearch.getPage({ query: 'shoe', limit: 1 })).total).toBe(3);
    const ids = (await p.itemSearch.getAll({ query: 'shoe', limit: 1 }).toArray()).map((h) => h.id);
    expect(ids).toEqual(['1', '2', '3']);
    expect(queries.slice(1)).toEqual([
      { query: 'shoe', limit: '1' },
      { query: 'shoe', limit: '1', cursor: '1' },
      { query: 'shoe', limit: '1', cursor: '2' },
    ]);
  });
});
