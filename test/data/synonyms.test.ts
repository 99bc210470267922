import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoSynonymStore } from '../../shared/data/synonyms.ts';
import { createSynonymSet, MAX_SYNONYM_SETS } from '../../shared/search/synonyms.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

describe('synonym sets', () => {
  it('hold to the tenant cap when creates come at once: the cap is filled, never passed', async () => {
    const store = dynamoSynonymStore(db.table);
    const T = 'syn-cap';
    // Ten short of the cap, then 32 creates at once.
    for (let k = 0; k < MAX_SYNONYM_SETS - 10; k++) {
      const id = await store.nextId(T);
      await store.put(T, { id, type: 'two_way', input: null, synonyms: [`a${id}`, `b${id}`], created: 1, updated_at: 1 });
    }
    const outcomes = await Promise.allSettled(Array.from({ length: 32 }, (_, k) => createSynonymSet(store, T, { synonyms: [`x${k}`, `y${k}`] })));
    const created = outcomes.filter((o) => o.status === 'fulfilled');
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ message: 'Too many synonym sets.' });
    expect(await store.count(T, MAX_SYNONYM_SETS + 100)).toBe(MAX_SYNONYM_SETS);
    expect(created).toHaveLength(10);
    // Every set answered as created is stored.
    for (const o of created) if (o.status === 'fulfilled') expect(await store.get(T, o.value.id)).toEqual(o.value);
  }, 60_000);
});
