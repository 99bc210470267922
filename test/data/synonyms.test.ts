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
    // Five short of the cap, then 16 creates at once. (Each create counts up to the cap's worth of
    // sets a round, consistently: 32 at once at ten short made DynamoDB Local, shared with the rest
    // of the data suite, so slow that the creates' 8 s wait ran out and the cap was left short.)
    for (let k = 0; k < MAX_SYNONYM_SETS - 5; k++) {
      const id = await store.nextId(T);
      await store.put(T, { id, type: 'two_way', input: null, synonyms: [`a${id}`, `b${id}`], created: 1, updated_at: 1 });
    }
    const outcomes = await Promise.allSettled(Array.from({ length: 16 }, (_, k) => createSynonymSet(store, T, { synonyms: [`x${k}`, `y${k}`] })));
    const created = outcomes.filter((o) => o.status === 'fulfilled');
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ message: 'Too many synonym sets.' });
    expect(await store.count(T, MAX_SYNONYM_SETS + 100)).toBe(MAX_SYNONYM_SETS);
    expect(created).toHaveLength(5);
    // Every set answered as created is stored.
    for (const o of created) if (o.status === 'fulfilled') expect(await store.get(T, o.value.id)).toEqual(o.value);
  }, 60_000);
});
