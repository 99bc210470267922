import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand, type TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { countUpTo, getRow, getRows, putAll, queryPage, queryUpTo, transact } from '../../shared/data/ops.ts';
import { dynamoPassCursor } from '../../shared/data/pass-cursor.ts';
import { apiErrorOf } from '../../shared/http/error-mapping.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
  for (let p = 0; p < 4; p++) {
    for (let i = 0; i < 30; i++) {
      await db.table.doc.send(new PutCommand({ TableName: db.table.tableName, Item: { pk: `P${p}`, sk: `S${String(i).padStart(3, '0')}`, p, i } }));
    }
  }
});
afterAll(() => db.close());

describe('reads (plain signed GetItem / Query)', () => {
  it('gives each concurrent call its own answer', async () => {
    // Many reads in flight on one client and transport: each must get the answer to its own key.
    const keys = Array.from({ length: 40 }, (_, k) => ({ p: k % 4, i: (k * 7) % 30 }));
    const [gets, pages] = await Promise.all([
      Promise.all(keys.map(({ p, i }) => getRow(db.table, { pk: `P${p}`, sk: `S${String(i).padStart(3, '0')}` }))),
      Promise.all([0, 1, 2, 3].map((p) => queryPage(db.table, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `P${p}` }, Limit: 5 + p }))),
    ]);
    gets.forEach((row, k) => expect(row).toMatchObject(keys[k] as object));
    pages.forEach((page, p) => {
      expect(page.items.map((r) => r.i)).toEqual(Array.from({ length: 5 + p }, (_, i) => i));
      expect(page.items.every((r) => r.p === p)).toBe(true);
      expect(page.lastKey).toEqual({ pk: `P${p}`, sk: `S${String(4 + p).padStart(3, '0')}` });
    });
  });

  it('round-trips plain values, projections and consistent reads', async () => {
    const item = { pk: 'V', sk: 'one', n: 1.5, s: 'x', b: true, z: null, l: [1, 'a', { m: 2 }], m: { deep: { v: [true] } }, bin: new Uint8Array([1, 2, 3]), set: new Set(['a', 'b']) };
    await db.table.doc.send(new PutCommand({ TableName: db.table.tableName, Item: item }));
    expect(await getRow(db.table, { pk: 'V', sk: 'one' }, { consistent: true })).toEqual(item);
    expect(await getRow(db.table, { pk: 'V', sk: 'one' }, { projection: 'pk, n' })).toEqual({ pk: 'V', n: 1.5 });
    expect(await getRow(db.table, { pk: 'V', sk: 'missing' })).toBeUndefined();
  });

  it('pages through a partition and counts it', async () => {
    const rows = await queryUpTo(db.table, { KeyConditionExpression: 'pk = :pk AND sk > :after', ExpressionAttributeValues: { ':pk': 'P2', ':after': 'S009' } }, Infinity);
    expect(rows.map((r) => r.i)).toEqual(Array.from({ length: 20 }, (_, k) => k + 10));
    expect(await countUpTo(db.table, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'P1' } })).toBe(30);
    expect(await countUpTo(db.table, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'P1' } }, 7)).toBe(7);
  });
});

describe("the maintenance pass's cursor (one row)", () => {
  it('reads nothing before a pass saved one, then the last one saved', async () => {
    const cursor = dynamoPassCursor(db.table);
    expect(await cursor.get()).toBeUndefined();
    await cursor.set('acme');
    await cursor.set('globex');
    expect(await cursor.get()).toBe('globex');
  });
});

describe('a transaction refused before it writes (TransactWriteItems)', () => {
  it("answers DynamoDB's error for writes naming a missing table, or an item without its key, and the store answers on", async () => {
    // dynalite's answer (local/dynalite-transactions.mjs) answered twice when two writes named a
    // missing table, and made the key of an item that had none: each threw in the server, which
    // took this process down.
    const missing = { ...db.table, tableName: `${db.table.tableName}-missing` };
    await expect(transact(missing, [{ put: { pk: 'T', sk: 'a' } }, { put: { pk: 'T', sk: 'b' } }])).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    await expect(transact(db.table, [{ put: { pk: 'T', sk: 'c' } }, { put: { pk: 'T' } }])).rejects.toMatchObject({ name: 'ValidationException' });
    await expect(transact(db.table, [{ remove: { pk: 'T' } }])).rejects.toMatchObject({ name: 'ValidationException' });
    expect(await getRow(db.table, { pk: 'T', sk: 'c' }, { consistent: true })).toBeUndefined();
    await transact(db.table, [{ put: { pk: 'T', sk: 'c', n: 1 } }, { put: { pk: 'T', sk: 'd', n: 2 } }]);
    expect(await getRow(db.table, { pk: 'T', sk: 'd' }, { consistent: true })).toEqual({ pk: 'T', sk: 'd', n: 2 });
  });
});

describe('a transaction cancelled for a moment (TransactionCanceledException)', () => {
  /** The table, its next transactions cancelled with each of `reasons` in turn; `sent` counts the attempts. */
  function cancelling(reasons: string[][]) {
    const counts = { sent: 0 };
    const doc = {
      send: (command: TransactWriteCommand) => {
        counts.sent++;
        const next = reasons.shift();
        if (next)
          return Promise.reject(new TransactionCanceledException({ message: `Transaction cancelled [${next.join(', ')}]`, $metadata: {}, CancellationReasons: next.map((Code) => ({ Code })) }));
        return db.table.doc.send(command);
      },
    } as unknown as DynamoDBDocumentClient;
    return { table: { ...db.table, doc }, counts };
  }

  it('is sent again while it is cancelled only for throttling or a later row held by another transaction, and lands', async () => {
    // Until 2026-12-07 the SDK's answer went up as it was: the audit trail's change answered 500.
    const { table, counts } = cancelling([
      ['None', 'ThrottlingError'],
      ['ProvisionedThroughputExceeded', 'None'],
      ['None', 'TransactionConflict'],
    ]);
    await transact(table, [{ put: { pk: 'X', sk: 'a', n: 1 } }, { put: { pk: 'X', sk: 'b', n: 2 } }]);
    expect(counts.sent).toBe(4);
    expect(await getRow(db.table, { pk: 'X', sk: 'b' }, { consistent: true })).toEqual({ pk: 'X', sk: 'b', n: 2 });
  });

  it("is not sent again when a condition failed: the first write's as a ConditionalCheckFailedException, a later one's as DynamoDB answered it", async () => {
    const first = cancelling([['ConditionalCheckFailed', 'None']]);
    await expect(transact(first.table, [{ put: { pk: 'X', sk: 'c' } }, { put: { pk: 'X', sk: 'd' } }])).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    const later = cancelling([['ThrottlingError', 'ConditionalCheckFailed']]);
    await expect(transact(later.table, [{ put: { pk: 'X', sk: 'c' } }, { put: { pk: 'X', sk: 'd' } }])).rejects.toBeInstanceOf(TransactionCanceledException);
    expect([first.counts.sent, later.counts.sent]).toEqual([1, 1]);
    expect(await getRow(db.table, { pk: 'X', sk: 'c' }, { consistent: true })).toBeUndefined();
  });
});

describe('a batch call the table leaves unprocessed after every attempt (BatchWriteItem, BatchGetItem)', () => {
  it('answers 503 unavailable with Retry-After, as the table refusing for load (a throttling error) does', async () => {
    // DynamoDB leaves a batch's items unprocessed for load, as it throws ProvisionedThroughputExceeded
    // when it processes none: until 2026-12-07 the first answered 500, the second 503.
    const { signed } = db.table;
    const table = {
      ...db.table,
      signed: {
        ...signed,
        batchWriteItem: async (input: Parameters<typeof signed.batchWriteItem>[0]) => ({ UnprocessedItems: input.RequestItems }),
        batchGetItem: async (input: Parameters<typeof signed.batchGetItem>[0]) => ({ Responses: {}, UnprocessedKeys: input.RequestItems }),
      },
    };
    const [written, read] = await Promise.allSettled([putAll(table, [{ pk: 'U', sk: 'a' }]), getRows(table, [{ pk: 'P0', sk: 'S000' }])]);
    for (const out of [written, read]) {
      expect(out.status).toBe('rejected');
      const e = (out as PromiseRejectedResult).reason;
      expect(apiErrorOf(e), String(e)).toMatchObject({ type: 'api_error', status: 503, code: 'unavailable', headers: { 'retry-after': '1' } });
    }
  });
});
