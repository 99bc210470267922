import { afterAll, beforeAll, expect, it } from 'vitest';
import { dynamoItemStore } from '../../shared/data/items.ts';
import { nowSeconds } from '../../shared/clock.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { interceptSigned, testTable, type TestTable } from '../helpers/table.ts';
import { nextSecond } from '../helpers/clock.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

/** The table as a first attempt cut off by its deadline sees it: its item rows land, no restamp does. */
function noItemUpdates(table: TableRef): TableRef {
  return interceptSigned<{ Key: Record<string, { S?: string }> }>(table, 'updateItem', async (params, call) => {
    if (String(params.Key.pk?.S).endsWith('#ITEMS')) throw Object.assign(new Error('deadline passed'), { name: 'DeadlineExceeded' });
    return call();
  });
}

// Found by a review of the catalog (2026-12-05). STAMP_LAG_MS contract (shared/data/items.ts): every change commits at most a second after its
// gsi2 stamp, else search's delta readers pass it for good. A create whose slow rows landed long
// after their stamp and which was cut off before `settle` (503 timeout / crash) is retried under
// its Idempotency-Key (resume, `ids.reuse`): putMissing finds the rows and the retry answers 201,
// but its settle only restamps rows at the *retry's* stamp, so the first attempt's rows keep their
// stale stamp: a delta reader that read after they landed never sees the items.
it('a resumed create leaves every item it answers findable by a change reader that read before the retry', async () => {
  const tenant = 'resume-stamp';
  const firstNow = nowSeconds() - 30; // the first attempt's stamp; its rows commit ~30 s later
  let reserved: number | undefined;
  await expect(
    dynamoItemStore(noItemUpdates(db.table)).create(tenant, [{ name: 'a' }, { name: 'b' }], firstNow, {
      reserved: async (f) => {
        reserved = f;
      },
    }),
  ).rejects.toThrow(/deadline/);
  // A search container read the changes just now (after the rows landed), before the retry.
  const readerStart = nowSeconds();
  await nextSecond();
  const retried = await db.stores.items.create(tenant, [{ name: 'a' }, { name: 'b' }], nowSeconds(), { reuse: reserved });
  expect(retried.map((r) => r.name)).toEqual(['a', 'b']); // 201 to the client
  // The reader's next read: the changes after its previous read began, less the 2 s skew margin.
  const next = await db.stores.items.changeKeysSince(tenant, readerStart - 2);
  expect(next.map((k) => k.id).sort()).toEqual(retried.map((r) => r.id));
});

/** The table with the BatchWriteItem of the item rows holding `failId` failing: a create failing part way. */
function failingChunk(table: TableRef, failId: number): TableRef {
  type Puts = { RequestItems: Record<string, { PutRequest?: { Item: Record<string, { N?: string }> } }[]> };
  return interceptSigned<Puts>(table, 'batchWriteItem', async (params, call) => {
    const ids = Object.values(params.RequestItems).flatMap((reqs) => reqs.map((r) => Number(r.PutRequest?.Item.id?.N)));
    if (ids.includes(failId)) throw Object.assign(new Error('throughput exceeded'), { name: 'ProvisionedThroughputExceededException' });
    return call();
  });
}

// Found by a review of the catalog (2026-12-05): a batch create without an Idempotency-Key whose
// write failed part way answered 500 with the rows that landed never settled, so items stored
// late after their stamp were passed by a delta reader for good (not searchable until a build).
it('a batch create failing part way leaves the items it stored findable by a change reader', async () => {
  const tenant = 'partial-create';
  const stampedAt = nowSeconds() - 30; // its rows commit ~30 s after their stamp
  const items = Array.from({ length: 30 }, (_, i) => ({ name: `item ${i}` }));
  await expect(dynamoItemStore(failingChunk(db.table, 30)).create(tenant, items, stampedAt)).rejects.toThrow(/throughput/);
  const stored = (await db.stores.items.list(tenant, { limit: 100 })).rows.map((r) => r.id);
  expect(stored).toHaveLength(25); // the first chunk of 25 landed, the second did not
  // A search container that read the changes just before the failure answered.
  const next = await db.stores.items.changeKeysSince(tenant, nowSeconds() - 2);
  expect(next.map((k) => k.id).sort((a, b) => a - b)).toEqual(stored);
});
