import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTable, type TableRef } from '../../shared/data/client.ts';
import { Idempotency, IdempotencyChunk } from '../../shared/data/entities.ts';
import { storesFor } from '../../shared/data/index.ts';
import { getRow, queryPage } from '../../shared/data/ops.ts';
import { onboardTenant } from '../../shared/domain/credentials.ts';
import { expectCoreError, request, startTestStack, TenantClient, type TestStack } from '../helpers/stack.ts';

let t: TestStack;
let table: TableRef;
beforeAll(async () => {
  t = await startTestStack();
  const endpoint = JSON.parse(readFileSync(`${t.dataDir}/stack.json`, 'utf8')).dynamodb_endpoint as string;
  table = makeTable('recsearch-local', endpoint, 'us-east-1');
});
afterAll(() => t.stop());

const ev = (over: Record<string, unknown> = {}) => ({ type: 'click', user_id: 'u1', item_id: '1', ...over });

async function countAll(): Promise<number> {
  let n = 0;
  let cursor: string | null = null;
  do {
    const r = await t.demo.core('GET', `/v1/events?limit=100${cursor ? `&starting_after=${cursor}` : ''}`);
    n += r.body.data.length;
    cursor = r.body.next_cursor;
  } while (cursor);
  return n;
}

describe('POST /v1/events', () => {
  it('stores a batch and answers 201 with the stored events in request order', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await t.demo.core('POST', '/v1/events', [
      ev({ type: 'purchase', user_id: 'buyer', item_id: 12, purchase: { amount: 1999, currency: 'EUR' }, context_id: '3', occurred_at: 1_700_000_000 }),
      ev({ user_id: 'clicker', click: {}, session_id: 's-1', request_id: '0b0e9c8e-1f7a-4a57-9d0e-6f7c1c3b9a11', placement: 'home' }),
      ev({ user_id: 'bare' }),
      // null as an event read back may show it: not given, the ingest time.
      ev({ user_id: 'unset', occurred_at: null }),
    ]);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ object: 'list', url: '/v1/events', has_more: false, next_cursor: null });
    const [p, c, b, n] = r.body.data;
    expect(p).toMatchObject({
      object: 'event',
      type: 'purchase',
      user_id: 'buyer',
      item_id: '12',
      purchase: { amount: 1999, currency: 'EUR' },
      context_id: '3',
      occurred_at: 1_700_000_000,
      session_id: null,
      request_id: null,
      placement: null,
      metadata: { context_id: '3', purchase: { amount: 1999, currency: 'EUR' } },
    });
    expect(p.id).toMatch(/^[1-9][0-9]*$/);
    expect(p.created).toBeGreaterThanOrEqual(before);
    expect(c).toMatchObject({ click: {}, session_id: 's-1', request_id: '0b0e9c8e-1f7a-4a57-9d0e-6f7c1c3b9a11', placement: 'home', metadata: { context_id: null, click: {} } });
    // occurred_at defaults to the ingest time.
    expect(b.occurred_at).toBe(b.created);
    expect(n.occurred_at).toBe(n.created);
    expect(b.metadata).toEqual({ context_id: null });
    expect(Number(c.id)).toBe(Number(p.id) + 1);
    expect((await t.demo.core('GET', `/v1/events/${p.id}`)).body).toEqual(p);
  });

  it('keeps additional properties and stores events for items that do not exist', async () => {
    const r = await t.demo.core('POST', '/v1/events', [ev({ item_id: 'no-such-item', experiment: 'blue', score: 3 })]);
    expect(r.status).toBe(201);
    expect(r.body.data[0]).toMatchObject({ item_id: 'no-such-item', experiment: 'blue', score: 3 });
    // Metadata sent is kept inside the event's metadata, beside what the spec puts there.
    const m = await t.demo.core('POST', '/v1/events', [
      { type: 'purchase', user_id: 'meta', item_id: '1', purchase: { amount: 5 }, context_id: 3, metadata: { campaign: 'spring', context_id: 'mine' }, event_id: 77 },
    ]);
    expect(m.status).toBe(201);
    expect(m.body.data[0].metadata).toEqual({ campaign: 'spring', context_id: '3', purchase: { amount: 5 } });
    expect(m.body.data[0].event_id).toBe(77);
    expect((await t.demo.core('GET', `/v1/events/${m.body.data[0].id}`)).body.metadata).toEqual(m.body.data[0].metadata);
    // The type-named key of metadata is the event's payload: absent without one, whatever was sent there.
    const n = await t.demo.core('POST', '/v1/events', [{ type: 'click', user_id: 'meta', item_id: '1', metadata: { click: 5, note: 'kept' } }]);
    expect(n.status).toBe(201);
    expect(n.body.data[0].metadata).toEqual({ note: 'kept', context_id: null });
    expect((await t.demo.core('GET', `/v1/events/${n.body.data[0].id}`)).body.metadata).toEqual({ note: 'kept', context_id: null });
    expectCoreError(await t.demo.core('POST', '/v1/events', [ev({ id: '9' })]), 400, 'invalid_request_error', 'validation_error');
  });

  it('accepts 500 events and rejects 0, 501 and a non-array body', async () => {
    const many = Array.from({ length: 500 }, (_, i) => ev({ user_id: `bulk-${i % 7}` }));
    const ok = await t.demo.core('POST', '/v1/events', many);
    expect(ok.status).toBe(201);
    expect(ok.body.data).toHaveLength(500);
    expectCoreError(await t.demo.core('POST', '/v1/events', []), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/events', [...many, ev()]), 400, 'invalid_request_error', 'validation_error');
    expectCoreError(await t.demo.core('POST', '/v1/events', ev()), 400, 'invalid_request_error', 'validation_error');
  });

  it('rejects the whole batch when one element is invalid, with indexed fieldErrors, storing nothing', async () => {
    const before = await countAll();
    const r = await t.demo.core('POST', '/v1/events', [ev(), ev(), ev(), ev({ user_id: '' }), ev({ type: 'Bad Type' }), { user_id: 'x' }]);
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    const fe = r.body.error.details.fieldErrors;
    expect(fe['3.user_id']).toBeDefined();
    expect(fe['4.type']).toBeDefined();
    expect(fe['5.type']).toBeDefined();
    expect(fe['5.item_id']).toBeDefined();
    expect(await countAll()).toBe(before);
  });

  it.each([
    ['occurred_at in milliseconds', { occurred_at: 1_700_000_000_000 }, 'occurred_at'],
    ['occurred_at as text', { occurred_at: 'yesterday' }, 'occurred_at'],
    ['a non-numeric context_id', { context_id: 'ctx' }, 'context_id'],
    ['a user_id of ".." (no URL path names it: it could not be erased)', { user_id: '..' }, 'user_id'],
    ['a user_id of "."', { user_id: '.' }, 'user_id'],
    ['a request_id that is not a uuid', { request_id: 'abc' }, 'request_id'],
    ['a type-named payload that is not an object', { click: 5 }, 'click'],
    ['a reserved type name', { type: 'metadata' }, 'type'],
    ['a malformed item_id', { item_id: 'has space' }, 'item_id'],
    // Stored as UTF-8, a lone surrogate becomes U+FFFD: "a\ud800" and "a\udfff" would be one user.
    ['a user_id holding half a surrogate pair', { user_id: 'a\ud800' }, 'user_id'],
    ['a payload key holding half a surrogate pair', { extra: { 'k\udfff': 1 } }, 'extra.k\udfff'],
  ])('rejects %s', async (_label, over, field) => {
    const r = await t.demo.core('POST', '/v1/events', [ev(over)]);
    expectCoreError(r, 400, 'invalid_request_error', 'validation_error');
    expect(r.body.error.details.fieldErrors[`0.${field}`]).toBeDefined();
  });

  it("stores a context_id past the largest id as sent (a positive integer's digits, as the spec's range x >= 1 has it)", async () => {
    const r = await t.demo.core('POST', '/v1/events', [ev({ context_id: '99999999999999999999' })]);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.data[0]).toMatchObject({ context_id: '99999999999999999999', metadata: { context_id: '99999999999999999999' } });
    expect((await t.demo.core('GET', `/v1/events/${r.body.data[0].id}`)).body.context_id).toBe('99999999999999999999');
  });

  it('rejects a missing body and invalid JSON', async () => {
    const auth = { authorization: `Bearer ${await t.demo.accessToken()}` };
    expectCoreError(await request(t.base, 'POST', '/v1/events', { headers: auth }), 400, 'invalid_request_error', 'parameter_missing');
    expectCoreError(await request(t.base, 'POST', '/v1/events', { rawBody: '[{', headers: auth }), 400, 'invalid_request_error', 'invalid_json');
  });

  it('honours Idempotency-Key: a retry stores nothing new, another body is 409', async () => {
    const key = `ev-${Date.now()}`;
    const before = await countAll();
    const first = await t.demo.core('POST', '/v1/events', [ev({ user_id: 'idem' })], { headers: { 'idempotency-key': key } });
    const again = await t.demo.core('POST', '/v1/events', [ev({ user_id: 'idem' })], { headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await countAll()).toBe(before + 1);
    expectCoreError(await t.demo.core('POST', '/v1/events', [ev({ user_id: 'other' })], { headers: { 'idempotency-key': key } }), 409, 'conflict_error');
  });

  it('honours Idempotency-Key for a batch whose response is larger than a DynamoDB item', async () => {
    const key = `ev-big-${Date.now()}`;
    const before = await countAll();
    // 500 events with ~1.5 KB of distinct text each: a response of over 750 KB.
    const batch = Array.from({ length: 500 }, (_, k) => ev({ user_id: `big-${k}`, note: `${k}-${'x'.repeat(40)}-`.repeat(36) }));
    const first = await t.demo.core('POST', '/v1/events', batch, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(JSON.stringify(first.body).length).toBeGreaterThan(750_000);
    const again = await t.demo.core('POST', '/v1/events', batch, { headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe('application/json');
    expect(again.body).toEqual(first.body);
    expect(await countAll()).toBe(before + 500);
  });
});

describe('Idempotency-Key and erasure', () => {
  // A tenant of its own: the erased events' ids are gaps that hold the tenant's event list for 30 s.
  let c: TenantClient;
  beforeAll(async () => {
    c = new TenantClient(t.base, await onboardTenant(storesFor(table).credentials, 'idem-erasure', { base_url: t.base, console_url: t.base, auth_url: t.base }));
  });
  /** What the table keeps under a key: its record and its answer's parts. */
  const storedUnder = async (key: string) => {
    const tenant = c.creds.tenant;
    const record = await getRow(table, Idempotency.key({ tenant, key }), { consistent: true });
    const chunks = IdempotencyChunk.indexes.primary;
    const parts = await queryPage(table, { ...chunks.query({ tenant, key }, { beginsWith: chunks.skPrefix() }), ConsistentRead: true });
    return { record, parts: parts.items };
  };

  it("an erasure forgets the answers stored under the keys of requests that sent the user's events: a replay is 409 idempotency_key_erased, and the table keeps nothing of them", async () => {
    const stamp = Date.now();
    const [single, batch, bystander] = ['single', 'batch', 'bystander'].map((k) => `erase-${k}-${stamp}`) as [string, string, string];
    const erased = `erased-${stamp}`;
    const post = (body: unknown, key: string) => c.core('POST', '/v1/events', body, { headers: { 'idempotency-key': key } });
    const one = [ev({ user_id: erased, item_id: 'secret-item', type: 'purchase' })];
    // Several users in one batch, its answer stored in parts (random text: over 300 KB gzipped).
    const many = Array.from({ length: 500 }, (_, k) => ev(k === 250 ? { user_id: erased, item_id: 'secret-item-2' } : { user_id: `kept-${stamp}-${k}`, note: randomBytes(750).toString('base64') }));
    const other = [ev({ user_id: `bystander-${stamp}` })];
    const first = { single: await post(one, single), batch: await post(many, batch), bystander: await post(other, bystander) };
    for (const r of Object.values(first)) expect(r.status).toBe(201);
    // Before the erasure the answers replay, the batch's from its parts.
    expect((await post(one, single)).body).toEqual(first.single.body);
    expect((await storedUnder(batch)).parts.length).toBeGreaterThan(0);

    expect(await c.platform('DELETE', `/api/users/${erased}`)).toMatchObject({ status: 200, body: { user_id: erased, deleted_events: 2 } });

    for (const [key, body] of [
      [single, one],
      [batch, many],
    ] as const) {
      const replay = await post(body, key);
      expectCoreError(replay, 409, 'conflict_error', 'idempotency_key_erased');
      expect(replay.headers.get('idempotent-replayed')).toBeNull();
      expect(JSON.stringify(replay.body)).not.toContain(erased);
      expect(JSON.stringify(replay.body)).not.toContain('secret-item');
      // Another body under the key: the same answer (the record keeps no fingerprint to compare).
      expectCoreError(await post(other, key), 409, 'conflict_error', 'idempotency_key_erased');
      // The key's record keeps neither the answer nor the request's fingerprint; no part is left.
      const { record, parts } = await storedUnder(key);
      expect(record).toMatchObject({ state: 'erased' });
      for (const gone of ['body', 'body_gz', 'chunks', 'hash', 'owner', 'status', 'first_id']) expect(record).not.toHaveProperty(gone);
      expect(parts).toEqual([]);
    }
    // The batch's other users' events stay.
    expect((await c.core('GET', `/v1/events/${first.batch.body.data[0].id}`)).body).toEqual(first.batch.body.data[0]);
    // Another user's request replays as before.
    const again = await post(other, bystander);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.bystander.body);
    // Sent again under a new key, the event is stored (as any event the user sends after the erasure).
    const resent = await post(one, `${single}-new`);
    expect(resent.status).toBe(201);
    expect(resent.body.data[0]).toMatchObject({ user_id: erased, item_id: 'secret-item' });
    // The next id after the bystander's: the refused replays wrote nothing (took no ids).
    expect(Number(resent.body.data[0].id)).toBe(Number(first.bystander.body.data[0].id) + 1);
  });
});

describe('GET /v1/events', () => {
  const users = ['ana', 'bo', 'cy'];
  const types = ['view', 'cart', 'buy'];
  let mine: { id: string; user_id: string; type: string }[] = [];
  beforeAll(async () => {
    const r = await t.demo.core(
      'POST',
      '/v1/events',
      Array.from({ length: 57 }, (_, i) => ev({ user_id: `list-${users[i % 3]}`, type: `list_${types[i % 3 === 0 ? 0 : i % 2 ? 1 : 2]}` })),
    );
    mine = r.body.data;
  });

  async function pageAll(query: string, limit: number): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await t.demo.core('GET', `/v1/events?limit=${limit}${query}${cursor ? `&starting_after=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(limit);
      ids.push(...r.body.data.map((e: { id: string }) => e.id));
      cursor = r.body.next_cursor;
      if (r.body.has_more) expect(cursor).toBe(r.body.data[r.body.data.length - 1].id);
    } while (cursor);
    return ids;
  }

  it('lists every event once, ascending by id, across pages', async () => {
    const ids = await pageAll('', 9);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map(Number)).toEqual([...ids.map(Number)].sort((a, b) => a - b));
    for (const e of mine) expect(ids).toContain(e.id);
  });

  it('filters by user_id, by type, and by both', async () => {
    const byUser = await pageAll('&user_id=list-bo', 5);
    expect(byUser).toEqual(mine.filter((e) => e.user_id === 'list-bo').map((e) => e.id));
    const byType = await pageAll('&type=list_cart', 4);
    expect(byType).toEqual(mine.filter((e) => e.type === 'list_cart').map((e) => e.id));
    const both = await pageAll('&user_id=list-ana&type=list_view', 3);
    expect(both).toEqual(mine.filter((e) => e.user_id === 'list-ana' && e.type === 'list_view').map((e) => e.id));
    expect(both.length).toBeGreaterThan(0);
  });

  it('defaults limit to 20 and validates parameters', async () => {
    const r = await t.demo.core('GET', '/v1/events');
    expect(r.body.data).toHaveLength(20);
    expect(r.body.url).toBe('/v1/events');
    for (const bad of ['limit=0', 'limit=101', 'starting_after=0', 'starting_after=01', 'starting_after=abc', 'type=Not-A-Type', 'foo=1']) {
      expectCoreError(await t.demo.core('GET', `/v1/events?${bad}`), 400, 'invalid_request_error', 'validation_error');
    }
    // A limit's leading zero is read as the number (docs/api.md, Query parameters); an id's is refused.
    expect((await t.demo.core('GET', '/v1/events?limit=007')).body.data).toHaveLength(7);
  });
});

describe('GET /v1/events/{event_id}', () => {
  it('404 item_not_found for an absent event, 400 for a malformed id', async () => {
    expectCoreError(await t.demo.core('GET', '/v1/events/99999999'), 404, 'not_found_error', 'item_not_found');
    for (const bad of ['0', 'abc', '007']) expectCoreError(await t.demo.core('GET', `/v1/events/${bad}`), 400, 'invalid_request_error', 'validation_error');
    // The spec's range is x >= 1: an id past any the service can give is well formed, and absent; as a cursor, nothing follows it.
    const huge = await t.demo.core('GET', '/v1/events/9007199254740992');
    expectCoreError(huge, 404, 'not_found_error', 'item_not_found');
    expect(huge.body.error.message).toBe('No event with id 9007199254740992.');
    expect((await t.demo.core('GET', '/v1/events?starting_after=99999999999999999999')).body).toMatchObject({ data: [], has_more: false });
  });
});
