import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storesFor, type Stores } from '../../shared/data/index.ts';
import { getRow, put, transact, update } from '../../shared/data/ops.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * DynamoDB's limits on a key, in UTF-8 bytes: a partition key of at most 2,048, a sort key of at
 * most 1,024, in the table's key and in each index's. AWS's DynamoDB Local refuses a row put with keys past them
 * (not an update's); dynalite counted UTF-16 code units (and checked no index key) until
 * local/dynalite-key-sizes.mjs made it count bytes: these tests run on both.
 */

let db: TestTable;
let stores: Stores;
const T = 'keys';
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  db = await testTable();
  stores = storesFor(db.table);
});
afterAll(() => db.close());

describe("keys within DynamoDB's byte limits", () => {
  // 256 characters, the longest user_id the API takes, of four bytes each in UTF-8: 1,024 bytes.
  const longest = '😀'.repeat(256);

  it('an erasure marker of a user id of 256 four-byte characters is stored and read (its sort key, erased_user#<user>, was 1,036 bytes: recommendations for the user answered 500 on AWS)', async () => {
    for (const user of [longest, `${'😀'.repeat(253)}abcd`, 'plain user']) {
      const marker = { user_id: user, requested_at: now, completed_at: null, order: now * 1000 };
      await stores.console.putErasure(T, marker);
      expect(await stores.console.erasedUser(T, user)).toEqual(marker);
    }
    // Each marker is its own user's, and serving's read of all of them holds the ids as sent.
    expect(await stores.console.erasedUser(T, '😀'.repeat(255))).toBeUndefined();
    const ids = (await stores.console.servingConfig(T)).erased_user.map((m) => m.user_id);
    expect(ids.sort()).toEqual([longest, `${'😀'.repeat(253)}abcd`, 'plain user'].sort());
  });

  it("the erasure's sweep of a user id of 256 four-byte characters is stored (its sort key is the user id: 1,024 bytes)", async () => {
    await stores.console.putErasureSweep(T, { user_id: longest, due_at: now, events_through: 5, members_through: 0 });
    expect((await stores.console.erasureSweeps(T)).map((s) => s.user_id)).toContain(longest);
  });

  it('a row whose key, or an index key, is past its bytes is refused, as DynamoDB refuses it (a ValidationException)', async () => {
    // Within the limits counted in UTF-16 code units (what dynalite counted), past them in bytes.
    const over = (bytes: number) => '😀'.repeat(bytes / 4 + 1);
    const refused = async (row: Record<string, string>) => {
      const e = await put(db.table, { pk: 'TENANT#keys#KIND#k', sk: 'x', ...row }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((e as Error | undefined)?.name, JSON.stringify(Object.keys(row))).toBe('ValidationException');
    };
    await refused({ pk: over(2048) });
    await refused({ sk: over(1024) });
    await refused({ gsi1pk: over(2048), gsi1sk: 'a' });
    await refused({ gsi1pk: 'a', gsi1sk: over(1024) });
    // At the limits, in bytes: stored.
    await put(db.table, { pk: `K#${'😀'.repeat(511)}`, sk: '😀'.repeat(256), gsi1pk: '😀'.repeat(512), gsi1sk: '😀'.repeat(256) });
  });

  // DynamoDB refuses these (its TransactWriteItems reference names "a secondary index key beyond
  // allowed limits" among a transaction's cancellation reasons); AWS's DynamoDB Local 1.25.1 takes
  // them all, even an ASCII gsi1pk of 2,049 bytes, so this half runs on dynalite only.
  it.skipIf(process.env.DDB_LABEL === 'dynamodb-local')(
    'an update or a transaction that sets an index key past its bytes is refused and writes nothing, as DynamoDB refuses it (dynalite checked only the key an update names)',
    async () => {
      const over = (bytes: number) => '😀'.repeat(bytes / 4 + 1);
      const key = { pk: 'TENANT#keys#KIND#u', sk: 'x' };
      await put(db.table, { ...key, gsi1pk: 'a', gsi1sk: 'a' });
      const failure = (p: Promise<unknown>) =>
        p.then(
          () => undefined,
          (err: unknown) => err as Error,
        );
      for (const set of [{ gsi1pk: over(2048) }, { gsi1sk: over(1024) }, { gsi2pk: 'b', gsi2sk: over(1024) }]) {
        const e = await failure(update(db.table, key, { set }));
        expect(e?.name, JSON.stringify(Object.keys(set))).toBe('ValidationException');
        expect(await failure(transact(db.table, [{ update: key, change: { set } }, { put: { pk: 'TENANT#keys#KIND#t', sk: 'y' } }])), JSON.stringify(Object.keys(set))).toBeInstanceOf(Error);
      }
      // Nothing of them written: the row as it was, the transaction's other row absent.
      expect(await getRow(db.table, key, { consistent: true })).toEqual({ ...key, gsi1pk: 'a', gsi1sk: 'a' });
      expect(await getRow(db.table, { pk: 'TENANT#keys#KIND#t', sk: 'y' }, { consistent: true })).toBeUndefined();
      // At the limits, in bytes: stored.
      await update(db.table, key, { set: { gsi1pk: '😀'.repeat(512), gsi1sk: '😀'.repeat(256) } });
      expect((await getRow(db.table, key, { consistent: true }))?.gsi1sk).toBe('😀'.repeat(256));
    },
  );
});
