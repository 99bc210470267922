import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storesFor, type Stores } from '../../shared/data/index.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { interceptSigned, testTable, type TestTable } from '../helpers/table.ts';

/*
 * DynamoDB's limits on a key, in UTF-8 bytes: a partition key of at most 2,048, a sort key of at
 * most 1,024. dynalite counts UTF-16 code units, so it takes keys DynamoDB refuses; this table
 * refuses them as DynamoDB does (a ValidationException), on the calls a store makes by key.
 */
const MAX_BYTES = { pk: 2048, sk: 1024 } as const;

function refuseLongKey(key: Record<string, unknown> | undefined): void {
  for (const [attr, max] of Object.entries(MAX_BYTES)) {
    const v = key?.[attr];
    const text = typeof v === 'string' ? v : (v as { S?: string } | undefined)?.S;
    if (text !== undefined && Buffer.byteLength(text) > max) {
      throw Object.assign(new Error(`One or more parameter values were invalid: ${attr} of ${Buffer.byteLength(text)} bytes, over ${max}`), { name: 'ValidationException' });
    }
  }
}

function withDynamoKeyLimits(table: TableRef): TableRef {
  const t = interceptSigned<{ Key?: Record<string, unknown> }>(table, 'getItem', async (params, call) => {
    refuseLongKey(params.Key);
    return call();
  });
  const doc = new Proxy(t.doc, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'send') return typeof v === 'function' ? v.bind(target) : v;
      return (command: { input: { Item?: Record<string, unknown>; Key?: Record<string, unknown> } }, ...rest: unknown[]) => {
        refuseLongKey(command.input.Item ?? command.input.Key);
        return (v as (...a: unknown[]) => Promise<unknown>).call(target, command, ...rest);
      };
    },
  });
  return { ...t, doc };
}

let db: TestTable;
let stores: Stores;
const T = 'keys';
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  db = await testTable();
  stores = storesFor(withDynamoKeyLimits(db.table));
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
});
