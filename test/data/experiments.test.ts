import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoExposureStore } from '../../shared/data/experiments.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

describe('experiment exposures', () => {
  it('counts every request once and every user once, however many are written together, and each is findable when its promise settles', async () => {
    const store = dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    // 120 requests at once from 30 users (variant by user), then 10 more later.
    const reqs = Array.from({ length: 130 }, (_, k) => ({ requestId: `req-${k}`, experimentId: 7, variant: (k % 30) % 2, userId: `user-${k % 30}`, servedAt: now, windowSeconds: 3600 }));
    await Promise.all(
      reqs.slice(0, 120).map(async (r) => {
        await store.recordExposure('t1', r);
        expect(await store.exposure('t1', r.requestId)).toMatchObject({ experimentId: 7, variant: r.variant, userId: r.userId, attributeUntil: now + 3600 });
      }),
    );
    for (const r of reqs.slice(120)) await store.recordExposure('t1', r);
    const totals = await store.totals('t1', 7);
    expect(totals.get(0)).toMatchObject({ requests: 65, users: 15 });
    expect(totals.get(1)).toMatchObject({ requests: 65, users: 15 });
    // Another store (another container) does not count known users again.
    await dynamoExposureStore(db.table).recordExposure('t1', { ...reqs[0]!, requestId: 'elsewhere' });
    expect((await store.totals('t1', 7)).get(0)).toMatchObject({ requests: 66, users: 15 });
    // Other tenants and experiments are apart.
    expect((await store.totals('t2', 7)).size).toBe(0);
    expect(await store.exposure('t2', 'req-1')).toBeUndefined();
  });

  it('attributes an event once, and tells first conversions of a request and a user apart', async () => {
    const store = dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    for (const [id, user] of [
      ['a1', 'ua'],
      ['a2', 'ua'],
      ['b1', 'ub'],
    ] as const)
      await store.recordExposure('t3', { requestId: id, experimentId: 1, variant: 0, userId: user, servedAt: now, windowSeconds: 60 });
    const x = (id: string) => store.exposure('t3', id).then((r) => r!);
    expect(await store.attribute('t3', await x('a1'), { id: 1, type: 'click', created: now })).toBe(true);
    expect(await store.attribute('t3', await x('a1'), { id: 1, type: 'click', created: now })).toBe(false);
    expect(await store.attribute('t3', await x('a1'), { id: 2, type: 'click', created: now })).toBe(true);
    expect(await store.attribute('t3', await x('a2'), { id: 3, type: 'click', created: now })).toBe(true);
    expect(await store.attribute('t3', await x('b1'), { id: 4, type: 'purchase', created: now })).toBe(true);
    expect((await store.totals('t3', 1)).get(0)).toEqual({
      requests: 3,
      users: 2,
      events: { click: 3, purchase: 1 },
      requestsWith: { click: 2, purchase: 1 },
      usersWith: { click: 1, purchase: 1 },
    });
  });
});
