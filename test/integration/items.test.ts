import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCoreError, request, startTestStack, type TestStack } from '../helpers/stack.ts';
import { nextSecond } from '../helpers/clock.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(() => t.stop());

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** The embedding worker may finish between two reads: compare items without that field. */
const content = ({ embedding_updated_at: _e, ...rest }: Record<string, unknown>) => rest;

describe('POST /v1/items', () => {
  it('creates one item and returns the item resource', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await t.demo.core('POST', '/v1/items', { name: 'Red shoe', description: 'A red running shoe', metadata: { category: 'shoes', price: 90 } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ object: 'item', name: 'Red shoe', description: 'A red running shoe', metadata: { category: 'shoes', price: 90 }, active: true });
    expect(r.body.id).toMatch(ID_RE);
    expect(Number(r.body.id)).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(r.body.created)).toBe(true);
    expect(r.body.created).toBeGreaterThanOrEqual(before);
    expect(r.body.updated_at).toBe(r.body.created);
    expect(r.body).not.toHaveProperty('created_at');
  });

  it('creates an array and answers a list envelope holding every created item', async () => {
    const r = await t.demo.core('POST', '/v1/items', [{ name: 'a' }, { name: 'b', metadata: { category: 'x' } }, { name: 'c' }]);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ object: 'list', has_more: false, url: '/v1/items' });
    expect(r.body.data.map((i: { name: string }) => i.name)).toEqual(['a', 'b', 'c']);
    const ids = r.body.data.map((i: { id: string }) => Number(i.id));
    expect(ids[1]).toBe(ids[0] + 1);
    expect(ids[2]).toBe(ids[0] + 2);
  });

  it('accepts 100 items and rejects 0 or 101', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => ({ name: `bulk ${i}` }));
    expect((await t.demo.core('POST', '/v1/items', hundred)).status).toBe(201);
    expectCoreError(await t.demo.core('POST', '/v1/items', []), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/items', [...hundred, { name: 'one too many' }]), 400, 'invalid_request_error', 'validation_error');
  });

  it.each(['id', 'item_id', 'itemId'])('rejects a caller-supplied %s', async (field) => {
    const r = await t.demo.core('POST', '/v1/items', { name: 'x', [field]: '42' });
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    expect(r.body.error.details.fieldErrors[field]).toBeDefined();
    const arr = await t.demo.core('POST', '/v1/items', [{ name: 'ok' }, { name: 'x', [field]: 7 }]);
    expectCoreError(arr, 400, 'invalid_request_error', 'validation_error');
    expect(arr.body.error.details.fieldErrors[`1.${field}`]).toBeDefined();
  });

  it('rejects a missing body, invalid JSON, a missing or empty name, and unknown fields', async () => {
    const token = await t.demo.accessToken();
    const auth = { authorization: `Bearer ${token}` };
    expectCoreError(await request(t.base, 'POST', '/v1/items', { headers: auth }), 400, 'invalid_request_error', 'parameter_missing');
    expectCoreError(await request(t.base, 'POST', '/v1/items', { rawBody: '{"name": ', headers: auth }), 400, 'invalid_request_error', 'invalid_json');
    // JSON's whitespace is no body; other blanks are no JSON.
    expectCoreError(await request(t.base, 'POST', '/v1/items', { rawBody: ' \t\r\n', headers: auth }), 400, 'invalid_request_error', 'parameter_missing');
    for (const rawBody of ['\f', '\u00a0', '\u2028']) expectCoreError(await request(t.base, 'POST', '/v1/items', { rawBody, headers: auth }), 400, 'invalid_request_error', 'invalid_json');
    const missing = await t.demo.core('POST', '/v1/items', { description: 'no name' });
    expectCoreError(missing, 400, 'invalid_request_error', 'validation_error');
    expect(missing.body.error.details.fieldErrors.name).toBeDefined();
    expectCoreError(await t.demo.core('POST', '/v1/items', { name: '' }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/items', { name: 7 }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/items', { name: 'x', metadata: 'not an object' }), 400, 'invalid_request_error', 'validation_error');
    const unknown = await t.demo.core('POST', '/v1/items', { name: 'x', colour: 'red' });
    expectCoreError(unknown, 400, 'invalid_request_error', 'validation_error');
    expect(unknown.body.error.details.fieldErrors.colour).toBeDefined();
    // Valid JSON that DynamoDB cannot store is a 400, not a failed write (500).
    expectCoreError(await t.demo.core('POST', '/v1/items', { name: 'x', metadata: { big: 1e16 } }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('PATCH', '/v1/items/1', { metadata: { tiny: 1e-200 } }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/events', [{ type: 'view', user_id: 'u', item_id: '1', n: 1e16 }]), 400, 'invalid_request_error', 'validation_error');
  });

  it('rejects a body over the size limit with 413 in the envelope', async () => {
    const r = await t.demo.core('POST', '/v1/items', { name: 'x', description: 'y'.repeat(1_100_000) });
    expect(r.status).toBe(413);
    expect(r.body.error.type).toBe('invalid_request_error');
    expect(r.body.error.code).toBe('body_too_large');
  });
});

describe('GET /v1/items/{item_id}', () => {
  it('returns the item, 404 item_not_found when absent, 400 when malformed', async () => {
    const c = await t.demo.core('POST', '/v1/items', { name: 'fetch me' });
    const g = await t.demo.core('GET', `/v1/items/${c.body.id}`);
    expect(g.status).toBe(200);
    expect(content(g.body)).toEqual(content(c.body));
    expectCoreError(await t.demo.core('GET', '/v1/items/999999'), 404, 'not_found_error', 'item_not_found');
    for (const bad of ['abc', '0', '-1', '01', '1.5', '%ZZ', '1%']) {
      expectCoreError(await t.demo.core('GET', `/v1/items/${bad}`), 400, 'invalid_request_error', 'validation_error');
    }
    // The spec's range is x >= 1: an id past any the service can give is well formed, and absent.
    for (const huge of ['9007199254740992', '99999999999999999999']) {
      for (const method of ['GET', 'DELETE'] as const) {
        const r = await t.demo.core(method, `/v1/items/${huge}`);
        expectCoreError(r, 404, 'not_found_error', 'item_not_found');
        expect(r.body.error.message).toBe(`No item with id ${huge}.`);
      }
      expectCoreError(await t.demo.core('PATCH', `/v1/items/${huge}`, { name: 'x' }), 404, 'not_found_error', 'item_not_found');
    }
    // Not valid percent-encoding, on a method the path does not take: still the envelope.
    expectCoreError(await t.demo.core('PUT', '/v1/items/%ZZ'), 405, 'invalid_request_error', 'method_not_allowed');
  });
});

describe('metadata is an arbitrary JSON object (the spec), its category included', () => {
  it('keeps a category of any type and length; a string category, however long, is filterable', async () => {
    const long = `long-${'é'.repeat(1200)}`; // 2,405 bytes: more than a key of the index holds
    const made = await t.demo.core('POST', '/v1/items', [
      { name: 'numbered', metadata: { category: 5 } },
      { name: 'nested', metadata: { category: { main: 'shoes', sub: ['trail'] } } },
      { name: 'long', metadata: { category: long } },
    ]);
    expect(made.status).toBe(201);
    expect(made.body.data.map((i: { metadata: unknown }) => i.metadata)).toEqual([{ category: 5 }, { category: { main: 'shoes', sub: ['trail'] } }, { category: long }]);
    const listed = await t.demo.core('GET', `/v1/items?category=${encodeURIComponent(long)}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((i: { id: string }) => i.id)).toEqual([made.body.data[2].id]);
    // Only a string is a category to filter on: "5" is not the number 5.
    expect((await t.demo.core('GET', '/v1/items?category=5')).body.data).toEqual([]);
    // An update that makes it short moves it in the index too.
    await t.demo.core('PATCH', `/v1/items/${made.body.data[2].id}`, { metadata: { category: 'short-now' } });
    expect((await t.demo.core('GET', `/v1/items?category=${encodeURIComponent(long)}`)).body.data).toEqual([]);
    expect((await t.demo.core('GET', '/v1/items?category=short-now')).body.data.map((i: { id: string }) => i.id)).toEqual([made.body.data[2].id]);
  });
});

describe('POST and PATCH /v1/items/{item_id}', () => {
  it.each(['POST', 'PATCH'])('%s replaces the given fields and bumps updated_at', async (method) => {
    const c = await t.demo.core('POST', '/v1/items', { name: 'old', description: 'd', metadata: { category: 'old-cat' } });
    await nextSecond();
    const u = await t.demo.core(method, `/v1/items/${c.body.id}`, { name: 'new', metadata: { category: 'new-cat', brand: 'b' } });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ id: c.body.id, object: 'item', name: 'new', description: 'd', metadata: { category: 'new-cat', brand: 'b' }, active: true, created: c.body.created });
    expect(u.body.updated_at).toBeGreaterThan(c.body.updated_at);
    expect(content((await t.demo.core('GET', `/v1/items/${c.body.id}`)).body)).toEqual(content(u.body));
    // The category filter follows the replacement metadata.
    const oldCat = await t.demo.core('GET', '/v1/items?category=old-cat');
    expect(oldCat.body.data.map((i: { id: string }) => i.id)).not.toContain(c.body.id);
    const newCat = await t.demo.core('GET', '/v1/items?category=new-cat');
    expect(newCat.body.data.map((i: { id: string }) => i.id)).toContain(c.body.id);
  });

  it('toggles active both ways', async () => {
    const c = await t.demo.core('POST', '/v1/items', { name: 'toggle' });
    expect((await t.demo.core('PATCH', `/v1/items/${c.body.id}`, { active: false })).body.active).toBe(false);
    expect((await t.demo.core('POST', `/v1/items/${c.body.id}`, { active: true })).body.active).toBe(true);
  });

  it('rejects an empty body, an invalid field, a malformed id; 404 for an absent item', async () => {
    const c = await t.demo.core('POST', '/v1/items', { name: 'x' });
    expectCoreError(await t.demo.core('PATCH', `/v1/items/${c.body.id}`, {}), 400, 'invalid_request_error', 'validation_error');
    const token = await t.demo.accessToken();
    expectCoreError(await request(t.base, 'PATCH', `/v1/items/${c.body.id}`, { headers: { authorization: `Bearer ${token}` } }), 400, 'invalid_request_error', 'parameter_missing');
    expectCoreError(await t.demo.core('PATCH', `/v1/items/${c.body.id}`, { active: 'yes' }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('PATCH', `/v1/items/${c.body.id}`, { name: '' }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('PATCH', `/v1/items/${c.body.id}`, { id: '5' }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('PATCH', '/v1/items/abc', { name: 'y' }), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/items/987654', { name: 'y' }), 404, 'not_found_error', 'item_not_found');
  });

  it("says what to send, in docs/api.md's words: metadata that is no object, a name of another type on an update", async () => {
    const c = await t.demo.core('POST', '/v1/items', { name: 'x' });
    const errorsOf = (r: Awaited<ReturnType<typeof t.demo.core>>) => {
      expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
      return r.body.error.details.fieldErrors;
    };
    // zod's locale said "Invalid input: expected record, received array".
    expect(errorsOf(await t.demo.core('POST', '/v1/items', { name: 'x', metadata: [1] }))).toEqual({ metadata: ['Must be an object.'] });
    expect(errorsOf(await t.demo.core('PATCH', `/v1/items/${c.body.id}`, { metadata: null }))).toEqual({ metadata: ['Must be an object.'] });
    expect(errorsOf(await t.demo.core('POST', '/v1/items', [null]))).toEqual({ 0: ['Must be an object.'] });
    expect(errorsOf(await t.demo.core('POST', '/v1/search', { query: '', filters: { metadata: [1] } }))).toEqual({ 'filters.metadata': ['Must be an object.'] });
    // An update's name is optional: one of another type is not "required".
    expect(errorsOf(await t.demo.core('PATCH', `/v1/items/${c.body.id}`, { name: null }))).toEqual({ name: ['name must be a string'] });
    expect(errorsOf(await t.demo.core('POST', '/v1/items', { name: 7 }))).toEqual({ name: ['name must be a string'] });
    expect(errorsOf(await t.demo.core('POST', '/v1/items', { description: 'no name' }))).toEqual({ name: ['name is required'] });
  });
});

describe('DELETE /v1/items/{item_id}', () => {
  it('deletes and reports the deletion object; then the item is gone', async () => {
    const c = await t.demo.core('POST', '/v1/items', { name: 'doomed' });
    const d = await t.demo.core('DELETE', `/v1/items/${c.body.id}`);
    expect(d.status).toBe(200);
    expect(d.body).toEqual({ message: expect.any(String), itemId: Number(c.body.id), deletedCount: 1, processing_time_ms: expect.any(Number) });
    expect(Number.isInteger(d.body.processing_time_ms)).toBe(true);
    expectCoreError(await t.demo.core('GET', `/v1/items/${c.body.id}`), 404, 'not_found_error', 'item_not_found');
    expectCoreError(await t.demo.core('DELETE', `/v1/items/${c.body.id}`), 404, 'not_found_error', 'item_not_found');
    expectCoreError(await t.demo.core('DELETE', '/v1/items/x'), 400, 'invalid_request_error', 'validation_error');
  });
});

describe('GET /v1/items', () => {
  let ids: string[] = [];
  let tag = '';
  beforeAll(async () => {
    tag = `page-${Date.now()}`;
    const r = await t.demo.core(
      'POST',
      '/v1/items',
      Array.from({ length: 45 }, (_, i) => ({ name: `p${i}`, metadata: { category: i % 3 === 0 ? tag : `${tag}-other` } })),
    );
    ids = r.body.data.map((i: { id: string }) => i.id);
  });

  it('pages through every item once, in id order, with next_cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await t.demo.core('GET', `/v1/items?limit=7${cursor ? `&starting_after=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ object: 'list', url: '/v1/items' });
      expect(r.body.data.length).toBeLessThanOrEqual(7);
      seen.push(...r.body.data.map((i: { id: string }) => i.id));
      if (r.body.has_more) expect(r.body.next_cursor).toBe(r.body.data[r.body.data.length - 1].id);
      else expect(r.body.next_cursor).toBeNull();
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.map(Number)).toEqual([...seen.map(Number)].sort((a, b) => a - b));
    for (const id of ids) expect(seen).toContain(id);
    expect(pages).toBeGreaterThan(6);
  });

  it('defaults limit to 20 and enforces 1 to 100', async () => {
    const r = await t.demo.core('GET', '/v1/items');
    expect(r.body.data).toHaveLength(20);
    expect(r.body.has_more).toBe(true);
    expect((await t.demo.core('GET', '/v1/items?limit=100')).body.data).toHaveLength(100);
    for (const bad of ['0', '101', 'abc', '-1', '2.5']) {
      expectCoreError(await t.demo.core('GET', `/v1/items?limit=${bad}`), 400, 'invalid_request_error', 'validation_error');
    }
  });

  it("names the query parameter in its message, as a body field's does (docs/api.md: `limit must be between 1 and 100`)", async () => {
    const errorsOf = async (path: string) => {
      const r = await t.demo.core('GET', path);
      expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
      return r.body.error.details.fieldErrors;
    };
    // Until 2026-12-06 a query parameter's said "must be between 1 and 100", "must be an integer".
    expect(await errorsOf('/v1/items?limit=0')).toEqual({ limit: ['limit must be between 1 and 100'] });
    expect(await errorsOf('/v1/items?limit=abc')).toEqual({ limit: ['limit must be an integer'] });
    expect(await errorsOf('/v1/events?limit=101')).toEqual({ limit: ['limit must be between 1 and 100'] });
    expect(await errorsOf('/v1/recommendations?user_id=u&limit=2.5')).toEqual({ limit: ['limit must be an integer'] });
    expect(await errorsOf('/v1/items?created_after=0')).toEqual({ created_after: ['created_after must be an integer of at least 1'] });
    expect(await errorsOf('/v1/items?created_before=x')).toEqual({ created_before: ['created_before must be an integer'] });
  });

  it('filters on metadata.category, with pagination', async () => {
    const expected = ids.filter((_, i) => i % 3 === 0);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await t.demo.core('GET', `/v1/items?category=${tag}&limit=4${cursor ? `&starting_after=${cursor}` : ''}`);
      seen.push(...r.body.data.map((i: { id: string }) => i.id));
      for (const i of r.body.data) expect(i.metadata.category).toBe(tag);
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(expected);
  });

  it('filters on created_after and created_before (inclusive) and validates them', async () => {
    const one = await t.demo.core('GET', `/v1/items/${ids[0]}`);
    const created = one.body.created as number;
    const atOrAfter = await t.demo.core('GET', `/v1/items?created_after=${created}&limit=100`);
    expect(atOrAfter.body.data.every((i: { created: number }) => i.created >= created)).toBe(true);
    expect(atOrAfter.body.data.map((i: { id: string }) => i.id)).toContain(ids[0]);
    const future = await t.demo.core('GET', `/v1/items?created_after=${created + 100_000}`);
    expect(future.body).toMatchObject({ data: [], has_more: false, next_cursor: null });
    const before = await t.demo.core('GET', `/v1/items?created_before=${created}&limit=100`);
    expect(before.body.data.every((i: { created: number }) => i.created <= created)).toBe(true);
    expect(before.body.data.length).toBeGreaterThan(0);
    const none = await t.demo.core('GET', `/v1/items?created_before=1`);
    expect(none.body.data).toEqual([]);
    for (const bad of ['created_after=0', 'created_before=0', 'created_after=x', 'created_before=-5']) {
      expectCoreError(await t.demo.core('GET', `/v1/items?${bad}`), 400, 'invalid_request_error', 'validation_error');
    }
  });

  it('takes any integer >= 1 as created_after and created_before, past 2^53 - 1 too (the spec sets no maximum)', async () => {
    for (const big of ['9007199254740992', '1'.padEnd(40, '0')]) {
      const after = await t.demo.core('GET', `/v1/items?created_after=${big}`);
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ data: [], has_more: false, next_cursor: null });
      const before = await t.demo.core('GET', `/v1/items?created_before=${big}&limit=1`);
      expect(before.status).toBe(200);
      expect(before.body).toMatchObject({ has_more: true });
      expect(before.body.data).toHaveLength(1);
    }
    expectCoreError(await t.demo.core('GET', `/v1/items?created_after=-${'9'.repeat(30)}`), 400, 'invalid_request_error', 'validation_error');
  });

  it('rejects a malformed cursor and unknown parameters', async () => {
    expectCoreError(await t.demo.core('GET', '/v1/items?starting_after=!!'), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('GET', '/v1/items?starting_after=abc'), 400, 'invalid_request_error', 'validation_error');
    // A cursor past every id the service can give: nothing after it.
    expect((await t.demo.core('GET', `/v1/items?starting_after=${'9'.repeat(128)}`)).body).toMatchObject({ data: [], has_more: false, next_cursor: null });
    expectCoreError(await t.demo.core('GET', `/v1/items?starting_after=${'9'.repeat(129)}`), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('GET', '/v1/items?colour=red'), 400, 'invalid_request_error', 'validation_error');
  });
});

describe('Idempotency-Key on POST /v1/items', () => {
  it('replays the first response for a retry and writes nothing; a different body is 409', async () => {
    const key = `idem-${Date.now()}`;
    const first = await t.demo.core('POST', '/v1/items', { name: 'once' }, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const again = await t.demo.core('POST', '/v1/items', { name: 'once' }, { headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // Nothing new was written: the next item id follows the first directly.
    const next = await t.demo.core('POST', '/v1/items', { name: 'after' });
    expect(Number(next.body.id)).toBe(Number(first.body.id) + 1);
    const conflict = await t.demo.core('POST', '/v1/items', { name: 'different' }, { headers: { 'idempotency-key': key } });
    expectCoreError(conflict, 409, 'conflict_error', 'idempotency_key_reused');
  });

  it('does not keep a key whose request failed validation', async () => {
    const key = `idem-bad-${Date.now()}`;
    expectCoreError(await t.demo.core('POST', '/v1/items', { nom: 'typo' }, { headers: { 'idempotency-key': key } }), 400, 'invalid_request_error');
    const retry = await t.demo.core('POST', '/v1/items', { nom: 'typo' }, { headers: { 'idempotency-key': key } });
    expectCoreError(retry, 400, 'invalid_request_error', 'validation_error');
  });

  it('validates a replay as any request: an unknown query parameter is 400, not the first answer', async () => {
    const key = `idem-query-${Date.now()}`;
    expect((await t.demo.core('POST', '/v1/items', { name: 'k' }, { headers: { 'idempotency-key': key } })).status).toBe(201);
    const withQuery = await t.demo.core('POST', '/v1/items?x=1', { name: 'k' }, { headers: { 'idempotency-key': key } });
    expectCoreError(withQuery, 400, 'invalid_request_error', 'validation_error');
    expect(withQuery.body.error.details.fieldErrors.x).toBeDefined();
    expect(withQuery.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses an Idempotency-Key header sent twice (it arrives as the values joined by a comma), and a key holding a comma: a retry sending it once would not match it', async () => {
    const key = `idem-twice-${Date.now()}`;
    const token = await t.demo.accessToken();
    const body = JSON.stringify({ name: 'sent twice' });
    // Raw headers: the key twice, as a client (or a proxy) repeating it would send it.
    const twice = () =>
      new Promise<{ status: number; body: { error: { type: string; code: string; details: { fieldErrors: Record<string, string[]> } } } }>((resolve, reject) => {
        const headers = ['host', new URL(t.base).host, 'authorization', `Bearer ${token}`, 'content-type', 'application/json', 'idempotency-key', key, 'idempotency-key', key];
        const req = httpRequest(`${t.base}/v1/items`, { method: 'POST', headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const r = await twice();
    // Until 2026-12-07 it was taken as the key `k,k`: 201, and the retry below sending `k` once stored the item again.
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error' });
    expect(r.body.error.details.fieldErrors['Idempotency-Key']?.[0]).toMatch(/^Sent more than once, or holding a comma/);
    // Nothing was stored or claimed: the key sent once creates, and its retry replays that.
    const once = await t.demo.core('POST', '/v1/items', { name: 'sent twice' }, { headers: { 'idempotency-key': key } });
    expect(once.status).toBe(201);
    const retry = await t.demo.core('POST', '/v1/items', { name: 'sent twice' }, { headers: { 'idempotency-key': key } });
    expect([retry.status, retry.body, retry.headers.get('idempotent-replayed')]).toEqual([201, once.body, 'true']);
    // A key holding a comma, sent once, cannot be told from a repeated header: refused alike.
    expectCoreError(await t.demo.core('POST', '/v1/items', { name: 'x' }, { headers: { 'idempotency-key': `${key},${key}` } }), 400, 'invalid_request_error', 'validation_error');
  });

  it('rejects an over-long key', async () => {
    expectCoreError(await t.demo.core('POST', '/v1/items', { name: 'x' }, { headers: { 'idempotency-key': 'k'.repeat(256) } }), 400, 'invalid_request_error', 'validation_error');
  });
});

describe('CORS', () => {
  it.each(['/v1/items', '/v1/items/1', '/v1/events', '/v1/events/1'])('OPTIONS %s answers preflight without a token', async (path) => {
    const r = await request(t.base, 'OPTIONS', path, { headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' } });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-methods')).toMatch(/GET/);
    expect(r.headers.get('access-control-allow-headers')).toMatch(/Authorization/i);
  });

  it('puts the allow-origin header on normal and error responses', async () => {
    expect((await t.demo.core('GET', '/v1/items')).headers.get('access-control-allow-origin')).toBe('*');
    expect((await request(t.base, 'GET', '/v1/items')).headers.get('access-control-allow-origin')).toBe('*');
  });
});
