import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../../shared/data/client.ts';
import { allocateIds } from '../../shared/data/counters.ts';
import { dynamoIdempotencyStore } from '../../shared/data/idempotency.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

describe('counters', () => {
  it('hands out disjoint blocks under concurrency', async () => {
    const sizes = Array.from({ length: 20 }, (_, i) => (i % 4) + 1);
    const firsts = await Promise.all(sizes.map((n) => allocateIds(db.table, 'c', 'item', n)));
    const taken = firsts.flatMap((f, i) => Array.from({ length: sizes[i] as number }, (_, k) => f + k));
    expect(new Set(taken).size).toBe(taken.length);
    expect(Math.max(...taken)).toBe(sizes.reduce((a, b) => a + b, 0));
  });
});

describe('idempotency store', () => {
  it('claims, reports in-progress, replays, detects mismatches, releases and expires', async () => {
    const s = db.stores.idempotency;
    expect(await s.claim('t', 'k', 'h1', 'a1', 1000, 60)).toEqual({ state: 'new' });
    expect(await s.claim('t', 'k', 'h1', 'a2', 1001, 60)).toEqual({ state: 'in_progress' });
    expect(await s.claim('t', 'k', 'h2', 'a3', 1001, 60)).toEqual({ state: 'mismatch' });
    await s.complete('t', 'k', 'a1', 201, '{"ok":true}', 60);
    expect(await s.claim('t', 'k', 'h1', 'a4', 1002, 60)).toEqual({ state: 'replay', status: 201, body: '{"ok":true}' });
    expect(await s.claim('other', 'k', 'h2', 'b1', 1002, 60)).toEqual({ state: 'new' });
    // Past its TTL the key is free again even before DynamoDB's TTL sweep removes it.
    expect(await s.claim('t', 'k', 'h2', 'a5', 1061, 60)).toEqual({ state: 'new' });
    await s.release('t', 'k', 'a5');
    expect(await s.claim('t', 'k', 'h3', 'a6', 1062, 60)).toEqual({ state: 'new' });
  });

  it('replays a response larger than a DynamoDB item (400 KB) exactly, and a small one after it under the same key', async () => {
    const s = db.stores.idempotency;
    const now = Math.floor(Date.now() / 1000);
    // 1.5 MB that gzip cannot shrink much: random hex.
    const { randomBytes } = await import('node:crypto');
    const big = JSON.stringify({ data: Array.from({ length: 1500 }, () => randomBytes(500).toString('hex')) });
    expect(big.length).toBeGreaterThan(1_400_000);
    expect(await s.claim('t', 'big', 'h', 'o1', now, 60)).toEqual({ state: 'new' });
    await s.complete('t', 'big', 'o1', 201, big, 60);
    expect(await s.claim('t', 'big', 'h', 'o2', now + 1, 60)).toEqual({ state: 'replay', status: 201, body: big });
    // Once expired the key is claimed anew; its new, small response replays as itself.
    expect(await s.claim('t', 'big', 'h2', 'o3', now + 61, 60)).toEqual({ state: 'new' });
    await s.complete('t', 'big', 'o3', 200, '{"small":true}', 60);
    expect(await s.claim('t', 'big', 'h2', 'o4', now + 62, 60)).toEqual({ state: 'replay', status: 200, body: '{"small":true}' });
  });

  it('a failed attempt is resumed by its retry with the ids it reserved; an abandoned one too; a refused one frees the key', async () => {
    const s = db.stores.idempotency;
    const now = Math.floor(Date.now() / 1000);
    expect(await s.claim('t', 'f', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.reserve('t', 'f', 'a', 41);
    await s.fail('t', 'f', 'a');
    expect(await s.claim('t', 'f', 'other', 'x', now + 1, 600)).toEqual({ state: 'mismatch' });
    expect(await s.claim('t', 'f', 'h', 'b', now + 1, 600)).toEqual({ state: 'resume', firstId: 41 });
    // Taken over: a second retry meanwhile waits.
    expect(await s.claim('t', 'f', 'h', 'c', now + 2, 600)).toEqual({ state: 'in_progress' });
    await s.complete('t', 'f', 'b', 201, '{"done":1}', 600);
    expect(await s.claim('t', 'f', 'h', 'd', now + 3, 600)).toEqual({ state: 'replay', status: 201, body: '{"done":1}' });
    // Failed before it reserved ids: resumed with none (nothing was written under a reserved id).
    expect(await s.claim('t', 'g', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.fail('t', 'g', 'a');
    expect(await s.claim('t', 'g', 'h', 'b', now + 1, 600)).toEqual({ state: 'resume', firstId: undefined });
    // A claim whose process vanished (still pending long after) is resumed, once.
    expect(await s.claim('t', 'v', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.reserve('t', 'v', 'a', 7);
    expect(await s.claim('t', 'v', 'h', 'b', now + 10, 600)).toEqual({ state: 'in_progress' });
    expect(await s.claim('t', 'v', 'h', 'c', now + 121, 600)).toEqual({ state: 'resume', firstId: 7 });
    expect(await s.claim('t', 'v', 'h', 'd', now + 122, 600)).toEqual({ state: 'in_progress' });
    // A refused attempt (4xx) frees the key, unless ids were reserved under it.
    expect(await s.claim('t', 'r', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.release('t', 'r', 'a');
    expect(await s.claim('t', 'r', 'h', 'b', now + 1, 600)).toEqual({ state: 'new' });
    await s.reserve('t', 'r', 'b', 90);
    await s.release('t', 'r', 'b');
    expect(await s.claim('t', 'r', 'h', 'c', now + 2, 600)).toEqual({ state: 'resume', firstId: 90 });
  });

  it('an attempt that lost the key (a retry took over) can neither reserve ids, nor store, fail or drop anything', async () => {
    const { IdempotencyClaimLost } = await import('../../shared/domain/idempotency.ts');
    const s = db.stores.idempotency;
    const now = Math.floor(Date.now() / 1000);
    // Attempt a timed out before it reserved; its retry b took over and reserved ids of its own.
    expect(await s.claim('t', 'lost', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.fail('t', 'lost', 'a');
    expect(await s.claim('t', 'lost', 'h', 'b', now + 1, 600)).toEqual({ state: 'resume', firstId: undefined });
    await s.reserve('t', 'lost', 'b', 500);
    // a wakes up: it must not write under ids of its own, nor touch b's claim.
    await expect(s.reserve('t', 'lost', 'a', 900)).rejects.toBeInstanceOf(IdempotencyClaimLost);
    await s.fail('t', 'lost', 'a');
    await s.release('t', 'lost', 'a');
    await expect(s.complete('t', 'lost', 'a', 201, '{"from":"a"}', 600)).rejects.toBeInstanceOf(IdempotencyClaimLost);
    expect(await s.claim('t', 'lost', 'h', 'c', now + 2, 600)).toEqual({ state: 'in_progress' });
    await s.complete('t', 'lost', 'b', 201, '{"from":"b"}', 600);
    expect(await s.claim('t', 'lost', 'h', 'd', now + 3, 600)).toEqual({ state: 'replay', status: 201, body: '{"from":"b"}' });
    // Nor can it overwrite the parts of a large answer the retry stored.
    const { randomBytes } = await import('node:crypto');
    const large = (tag: string) => JSON.stringify({ tag, data: randomBytes(400_000).toString('hex') });
    expect(await s.claim('t', 'parts', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.fail('t', 'parts', 'a');
    expect(await s.claim('t', 'parts', 'h', 'b', now + 1, 600)).toEqual({ state: 'resume', firstId: undefined });
    const fromB = large('b');
    await s.complete('t', 'parts', 'b', 201, fromB, 600);
    await expect(s.complete('t', 'parts', 'a', 201, large('a'), 600)).rejects.toBeInstanceOf(IdempotencyClaimLost);
    expect(await s.claim('t', 'parts', 'h', 'c', now + 2, 600)).toEqual({ state: 'replay', status: 201, body: fromB });
    // Ids are reserved once per claim, even by their owner.
    expect(await s.claim('t', 'once', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.reserve('t', 'once', 'a', 1);
    await expect(s.reserve('t', 'once', 'a', 2)).rejects.toBeInstanceOf(IdempotencyClaimLost);
  });

  it("a write of the attempt's that landed, its answer lost, and was sent again (the SDK's retry, which finds the row) is the attempt's own: it holds the key", async () => {
    // Every write sent twice: the first lands, its answer is lost; the second's answer is the one heard.
    const t = db.table;
    const twice: TableRef = {
      ...t,
      doc: { send: async (c: Parameters<DynamoDBDocumentClient['send']>[0]) => (await t.doc.send(c).catch(() => undefined), t.doc.send(c)) } as unknown as DynamoDBDocumentClient,
      signed: { ...t.signed, updateItem: async (input, signal) => (await t.signed.updateItem(input, signal).catch(() => undefined), t.signed.updateItem(input, signal)) },
    };
    const s = dynamoIdempotencyStore(twice);
    const plain = db.stores.idempotency;
    const now = Math.floor(Date.now() / 1000);
    // The claim's put: the attempt's own, not one "still being processed" for 120 s.
    expect(await s.claim('t', 'sent-twice', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    expect(await plain.claim('t', 'sent-twice', 'h', 'x', now, 600)).toEqual({ state: 'in_progress' });
    // Its reservation of ids.
    await s.reserve('t', 'sent-twice', 'a', 7);
    await plain.fail('t', 'sent-twice', 'a');
    // A retry's takeover: it resumes under the ids reserved.
    expect(await s.claim('t', 'sent-twice', 'h', 'b', now + 1, 600)).toEqual({ state: 'resume', firstId: 7 });
    await plain.complete('t', 'sent-twice', 'b', 201, '{"from":"b"}', 600);
    expect(await plain.claim('t', 'sent-twice', 'h', 'c', now + 2, 600)).toEqual({ state: 'replay', status: 201, body: '{"from":"b"}' });
  });

  it("forget (an erasure of a user of the key's request): the record keeps nothing of the request, whatever its state; its claims answer erased until it expires", async () => {
    const { IdempotencyClaimLost } = await import('../../shared/domain/idempotency.ts');
    const { Idempotency, IdempotencyChunk } = await import('../../shared/data/entities.ts');
    const { getRow, queryPage } = await import('../../shared/data/ops.ts');
    const s = db.stores.idempotency;
    const now = Math.floor(Date.now() / 1000);
    const stored = async (key: string) => {
      const chunks = IdempotencyChunk.indexes.primary;
      return {
        record: await getRow(db.table, Idempotency.key({ tenant: 'fg', key }), { consistent: true }),
        parts: (await queryPage(db.table, { ...chunks.query({ tenant: 'fg', key }, { beginsWith: chunks.skPrefix() }), ConsistentRead: true })).items,
      };
    };
    const { randomBytes } = await import('node:crypto');
    const large = JSON.stringify({ user_id: 'gone', data: randomBytes(400_000).toString('hex') });
    // Done, its answer in parts.
    expect(await s.claim('fg', 'done', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.complete('fg', 'done', 'a', 201, large, 600);
    expect((await stored('done')).parts.length).toBeGreaterThan(0);
    await s.forget('fg', 'done', now);
    expect(await stored('done')).toEqual({ record: { ...Idempotency.key({ tenant: 'fg', key: 'done' }), state: 'erased', created: now, ttl: now + 600 }, parts: [] });
    expect(await s.claim('fg', 'done', 'h', 'b', now + 1, 600)).toEqual({ state: 'erased' });
    expect(await s.claim('fg', 'done', 'other', 'c', now + 1, 600)).toEqual({ state: 'erased' });
    // Past its TTL the key is free again.
    expect(await s.claim('fg', 'done', 'h', 'd', now + 601, 600)).toEqual({ state: 'new' });
    // Still running: the attempt can no longer write under new ids nor store its answer (nor leave its parts).
    expect(await s.claim('fg', 'running', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.forget('fg', 'running', now);
    await expect(s.reserve('fg', 'running', 'a', 5)).rejects.toBeInstanceOf(IdempotencyClaimLost);
    await expect(s.complete('fg', 'running', 'a', 201, large, 600)).rejects.toBeInstanceOf(IdempotencyClaimLost);
    expect((await stored('running')).parts).toEqual([]);
    expect(await s.claim('fg', 'running', 'h', 'b', now + 1, 600)).toEqual({ state: 'erased' });
    // Failed after it reserved ids: it may not have written its other users' events, so a retry
    // resumes under its ids (the events create then leaves the erased user's out and answers 409);
    // another body is still refused. Until 2026-12-04 the key answered `erased`, and those events
    // were never written.
    expect(await s.claim('fg', 'failed', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.reserve('fg', 'failed', 'a', 70);
    await s.fail('fg', 'failed', 'a');
    await s.forget('fg', 'failed', now);
    expect(await s.claim('fg', 'failed', 'other', 'b', now + 1, 600)).toEqual({ state: 'mismatch' });
    expect(await s.claim('fg', 'failed', 'h', 'b', now + 1, 600)).toEqual({ state: 'resume', firstId: 70 });
    // Still running after it reserved ids: it can no longer store its answer; a retry resumes.
    expect(await s.claim('fg', 'reserved', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.reserve('fg', 'reserved', 'a', 80);
    await s.forget('fg', 'reserved', now);
    await expect(s.complete('fg', 'reserved', 'a', 201, '{"ok":1}', 600)).rejects.toBeInstanceOf(IdempotencyClaimLost);
    expect(await s.claim('fg', 'reserved', 'h', 'b', now + 1, 600)).toEqual({ state: 'resume', firstId: 80 });
    // A record claimed after the events were written is another request's (the key used again): left alone.
    expect(await s.claim('fg', 'later', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.complete('fg', 'later', 'a', 201, '{"ok":1}', 600);
    await s.forget('fg', 'later', now - 700);
    expect(await s.claim('fg', 'later', 'h', 'b', now + 1, 600)).toEqual({ state: 'replay', status: 201, body: '{"ok":1}' });
    // An absent key: nothing is made.
    await s.forget('fg', 'never', now);
    expect((await stored('never')).record).toBeUndefined();
  });

  it('forget leaves alone the answer parts of a record it does not forget (the key used again once the erased request expired): the later request still replays', async () => {
    const s = db.stores.idempotency;
    const now = Math.floor(Date.now() / 1000);
    const { randomBytes } = await import('node:crypto');
    // A later request under a key an erased user's events were written with a day and more before: its answer in parts.
    const large = JSON.stringify({ data: randomBytes(400_000).toString('hex') });
    expect(await s.claim('fl', 'reused', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.complete('fl', 'reused', 'a', 201, large, 600);
    await s.forget('fl', 'reused', now - 90_000);
    expect(await s.claim('fl', 'reused', 'h', 'b', now + 1, 600)).toEqual({ state: 'replay', status: 201, body: large });
  });

  it('a replay that read the record just before an erasure forgot it answers erased, not a missing part', async () => {
    const { dynamoIdempotencyStore } = await import('../../shared/data/idempotency.ts');
    const { Idempotency } = await import('../../shared/data/entities.ts');
    const s = db.stores.idempotency;
    const now = Math.floor(Date.now() / 1000);
    const { randomBytes } = await import('node:crypto');
    const large = JSON.stringify({ user_id: 'gone', data: randomBytes(400_000).toString('hex') });
    expect(await s.claim('fr', 'raced', 'h', 'a', now, 600)).toEqual({ state: 'new' });
    await s.complete('fr', 'raced', 'a', 201, large, 600);
    // The erasure forgets the key between the replay's read of the record (done) and of its parts.
    const record = Idempotency.key({ tenant: 'fr', key: 'raced' });
    let raced = false;
    const racing = {
      ...db.table,
      signed: {
        ...db.table.signed,
        getItem: async (input: Parameters<typeof db.table.signed.getItem>[0]) => {
          const out = await db.table.signed.getItem(input);
          if (!raced && out.Item?.state?.S === 'done' && input.Key?.[Object.keys(record)[0] as string]?.S === Object.values(record)[0]) {
            raced = true;
            await s.forget('fr', 'raced', now);
          }
          return out;
        },
      },
    };
    expect(await dynamoIdempotencyStore(racing).claim('fr', 'raced', 'h', 'b', now + 1, 600)).toEqual({ state: 'erased' });
    expect(raced).toBe(true);
  });

  it("events name the Idempotency-Key they were written under (not shown), and an erasure hands each of its user's keys to forget, with the last of their times, before it deletes them", async () => {
    const { events } = db.stores;
    const e = (user_id: string) => ({ type: 'view', user_id, item_id: '1', context_id: null, session_id: null, request_id: null, placement: null, extra: {} });
    const [a] = await events.append('fk', [e('gone'), e('kept')], 100, { idempotencyKey: 'k1' });
    await events.append('fk', [e('gone')], 105, { idempotencyKey: 'k1' });
    await events.append('fk', [e('gone')], 110, { idempotencyKey: 'k2' });
    await events.append('fk', [e('gone')], 120);
    expect(await events.get('fk', (a as { id: number }).id)).not.toHaveProperty('idempotency_key');
    expect((await events.list('fk', { limit: 10 })).rows.some((r) => 'idempotency_key' in r)).toBe(false);
    const handed: [string, number][] = [];
    let left = -1;
    const { deleted } = await events.eraseUser('fk', 'gone', async (written) => {
      handed.push(...written);
      left = (await events.list('fk', { limit: 10, userId: 'gone' })).rows.length;
    });
    expect(deleted).toBe(4);
    expect(handed.sort()).toEqual([
      ['k1', 105],
      ['k2', 110],
    ]);
    expect(left).toBe(4);
  });
});
