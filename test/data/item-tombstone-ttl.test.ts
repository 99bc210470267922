import { afterAll, beforeAll, expect, it } from 'vitest';
import { Tombstone } from '../../shared/data/entities.ts';
import { getRow } from '../../shared/data/ops.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

// An Idempotency-Key that lives longer than a week (settings are read on first use: before it),
// put back for the test files after this one in the same process.
const before = process.env.IDEMPOTENCY_TTL_SECONDS;
process.env.IDEMPOTENCY_TTL_SECONDS = String(14 * 86_400);
afterAll(() => {
  if (before === undefined) delete process.env.IDEMPOTENCY_TTL_SECONDS;
  else process.env.IDEMPOTENCY_TTL_SECONDS = before;
});

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

it("a deleted item's tombstone lasts as long as a retry of its create can come (the key's life and an hour), so the retry cannot write it again", async () => {
  const now = Math.floor(Date.now() / 1000);
  const [made] = await db.stores.items.create('tomb', [{ name: 'Storm lantern' }], now);
  expect(await db.stores.items.delete('tomb', made?.id as number, now)).toBe(true);
  const tombstone = await getRow(db.table, Tombstone.key({ tenant: 'tomb', id: made?.id as number }), { consistent: true });
  // 7 days until 2026-12-04, whatever the key's life.
  expect(Number(tombstone?.ttl)).toBeGreaterThanOrEqual(now + 14 * 86_400 + 3600);
});
