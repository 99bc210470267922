import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../shared/data/keys.ts';
import { getRow } from '../../shared/data/ops.ts';
import { dynamoQuotaLedger } from '../../shared/data/quota.ts';
import type { QuotaLedger } from '../../shared/domain/quota.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
let ledger: QuotaLedger;
beforeAll(async () => {
  db = await testTable();
  ledger = dynamoQuotaLedger(db.table);
});
afterAll(() => db.close());

const NOW = 1_750_000_000_000_000; // µs

describe('quota ledger', () => {
  it('starts a missing or idle row at now, adds to one ahead of now, whichever write is guessed first', async () => {
    expect(await ledger.charge('a', 5_000, NOW, true)).toBe(NOW + 5_000);
    expect(await ledger.charge('a', 5_000, NOW + 1_000, false)).toBe(NOW + 10_000);
    expect(await ledger.charge('a', 5_000, NOW + 2_000, true)).toBe(NOW + 15_000);
    // Idle since: the bucket refilled, so the row starts again from now.
    expect(await ledger.charge('a', 5_000, NOW + 60_000_000, true)).toBe(NOW + 60_005_000);
    const row = await getRow(db.table, keys.quota('a'), { consistent: true });
    expect(row?.ttl).toBe(Math.floor((NOW + 60_000_000) / 1e6) + 86_400);
  });

  it('gives back what was charged and not used, and never creates a row to do it', async () => {
    await ledger.charge('b', 10_000, NOW, false);
    await ledger.refund('b', 4_000);
    expect(await ledger.charge('b', 1_000, NOW, true)).toBe(NOW + 7_000);
    await ledger.refund('nobody', 4_000);
    expect(await getRow(db.table, keys.quota('nobody'), { consistent: true })).toBeUndefined();
  });

  it('loses no charge among concurrent ones (every container charges the same row)', async () => {
    const n = 24;
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => ledger.charge('c', 1_000, NOW, i % 2 === 0)));
    expect(new Set(answers).size).toBe(n);
    expect(Math.max(...answers)).toBe(NOW + n * 1_000);
  });

  it('keeps tenants on rows of their own, outside every TENANT# partition', () => {
    expect(keys.quota('acme').pk.startsWith(keys.quotaPkPrefix)).toBe(true);
    expect(keys.quota('acme').pk.startsWith('TENANT#')).toBe(false);
  });
});
