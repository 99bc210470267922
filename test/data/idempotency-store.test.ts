import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoIdempotencyStore } from '../../shared/data/idempotency.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * The Idempotency-Key store on the table (shared/data/idempotency.ts), called as the HTTP
 * middleware calls it: who holds a key, for how long, and in which tenant.
 */
let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

const TTL = 86_400;
const NOW = 1_800_000_000;

describe('the Idempotency-Key store', () => {
  it('answers in_progress (409 idempotency_key_in_use) while the first attempt holds the key, until 120 s after its claim; then a retry resumes it', async () => {
    const store = dynamoIdempotencyStore(db.table);
    expect(await store.claim('idem-held', 'k', 'h', 'first', NOW, TTL)).toEqual({ state: 'new' });
    // Without these, a retry while the first attempt still runs would take over (and write twice) or be answered a replay of nothing.
    expect(await store.claim('idem-held', 'k', 'h', 'second', NOW + 1, TTL)).toEqual({ state: 'in_progress' });
    expect(await store.claim('idem-held', 'k', 'h', 'third', NOW + 119, TTL)).toEqual({ state: 'in_progress' });
    // A claim pending 120 s belongs to a request that is gone.
    expect(await store.claim('idem-held', 'k', 'h', 'fourth', NOW + 120, TTL)).toEqual({ state: 'resume', firstId: undefined });
  });

  it('keeps keys per tenant: the same key and body in another tenant is a new request, not a replay of the first tenant’s answer', async () => {
    const store = dynamoIdempotencyStore(db.table);
    expect(await store.claim('idem-tenant-a', 'shared-key', 'h', 'a', NOW, TTL)).toEqual({ state: 'new' });
    await store.complete('idem-tenant-a', 'shared-key', 'a', 201, '{"id":"a-1"}', TTL);
    // Were keys global, tenant b would be answered tenant a's response (and write nothing).
    expect(await store.claim('idem-tenant-b', 'shared-key', 'h', 'b', NOW + 1, TTL)).toEqual({ state: 'new' });
    expect(await store.claim('idem-tenant-a', 'shared-key', 'h', 'a2', NOW + 2, TTL)).toEqual({ state: 'replay', status: 201, body: '{"id":"a-1"}' });
  });

  it('a refused attempt frees its key, unless it reserved ids under it: then a retry resumes under those ids', async () => {
    const store = dynamoIdempotencyStore(db.table);
    expect(await store.claim('idem-release', 'free', 'h', 'a', NOW, TTL)).toEqual({ state: 'new' });
    await store.release('idem-release', 'free', 'a');
    expect(await store.claim('idem-release', 'free', 'other body', 'b', NOW + 1, TTL)).toEqual({ state: 'new' });

    expect(await store.claim('idem-release', 'reserved', 'h', 'a', NOW, TTL)).toEqual({ state: 'new' });
    await store.reserve('idem-release', 'reserved', 'a', 41);
    await store.release('idem-release', 'reserved', 'a');
    // Freed, the retry would write new ids beside those the first attempt may have written.
    expect(await store.claim('idem-release', 'reserved', 'h', 'b', NOW + 1, TTL)).toEqual({ state: 'resume', firstId: 41 });
  });
});
