import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExperimentUser, Exposure } from '../../shared/data/entities.ts';
import { dynamoExposureStore } from '../../shared/data/experiments.ts';
import type { ExposureRecord } from '../../shared/control/exposures.ts';
import { EVENTS_PER_REQUEST_MAX } from '../../shared/data/ops.ts';
import { getRow, put, update } from '../../shared/data/ops.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { gate } from '../helpers/fixtures.ts';
import { interceptSigned, testTable, updateFailingOnce, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

/** Records requests served to `userId` in experiment 1 of `tenant` (variant 0), with the user's erasure's end as the request read it. */
const servedIn = (store: ReturnType<typeof dynamoExposureStore>, tenant: string, userId: string) => (requestId: string, servedAt: number, erasedThrough?: number) =>
  store.recordExposure(tenant, { requestId, experimentId: 1, variant: 0, userId, servedAt, windowSeconds: 600, ...(erasedThrough !== undefined ? { erasedThrough } : {}) });

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

  it('a write that fails fails only its own request: the others written with it (other tenants too) are stored and counted exactly, and the failed one is taken back', async () => {
    const throttled = () => Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    // Fails the membership row of user `bad`, and the exposure row of request `row-fails` (its batch too).
    let failing = true;
    const doc: TableRef['doc'] = Object.create(db.table.doc);
    doc.send = ((cmd: { input: { Item?: Record<string, unknown> } }) =>
      failing && /EXPUSER#5#bad$|EXPREQ#row-fails$/.test(String(cmd.input.Item?.pk ?? '')) ? Promise.reject(throttled()) : db.table.doc.send(cmd as never)) as TableRef['doc']['send'];
    const table = interceptSigned(updateFailingOnce({ ...db.table, doc }, 'TENANT#gb#EXPAGG#5#'), 'batchWriteItem', async (_params, call) => {
      if (failing) throw throttled();
      return call();
    });
    const store = dynamoExposureStore(table);
    const now = Math.floor(Date.now() / 1000);
    const served = (tenant: string, requestId: string, userId: string, variant = 0) => store.recordExposure(tenant, { requestId, experimentId: 5, variant, userId, servedAt: now, windowSeconds: 600 });
    // The first is written alone; the others wait for it and are written together.
    const outcomes = await Promise.allSettled([
      served('ga', 'first', 'u0'),
      served('ga', 'a1', 'u1'),
      served('ga', 'a2', 'u2', 1),
      served('ga', 'bad-1', 'bad'),
      served('ga', 'row-fails', 'u3'),
      served('gb', 'b1', 'v1'),
      served('gb', 'b2', 'v2'),
      served('gb', 'b3', 'v1'),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    const totals = async (tenant: string) => Object.fromEntries([...(await store.totals(tenant, 5))].map(([v, x]) => [v, { requests: x.requests, users: x.users }]));
    expect(await totals('ga')).toEqual({ 0: { requests: 2, users: 2 }, 1: { requests: 1, users: 1 } });
    // gb's totals failed once for the group: each request was added again alone.
    expect(await totals('gb')).toEqual({ 0: { requests: 3, users: 2 } });
    for (const id of ['first', 'a1', 'a2']) expect(await store.exposure('ga', id)).toBeDefined();
    for (const id of ['b1', 'b2', 'b3']) expect(await store.exposure('gb', id)).toBeDefined();
    // The failed requests left nothing: no exposure, no membership row.
    expect(await store.exposure('ga', 'bad-1')).toBeUndefined();
    expect(await store.exposure('ga', 'row-fails')).toBeUndefined();
    expect(await getRow(db.table, ExperimentUser.key({ tenant: 'ga', experiment: 5, user_id: 'u3' }))).toBeUndefined();
    // Their retries count once, with their users.
    failing = false;
    await Promise.all([served('ga', 'bad-2', 'bad'), served('ga', 'row-fails-2', 'u3')]);
    expect(await totals('ga')).toEqual({ 0: { requests: 4, users: 4 }, 1: { requests: 1, users: 1 } });
  });

  it('a failed request whose membership row another served request of the same user in its group shares leaves the row and the user counted', async () => {
    const throttled = () => Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    // Fails the exposure row of request w-1 (its batch too); w-1 is first of its group, so its put creates the membership row.
    const doc: TableRef['doc'] = Object.create(db.table.doc);
    doc.send = ((cmd: { input: { Item?: Record<string, unknown> } }) =>
      /EXPREQ#w-1$/.test(String(cmd.input.Item?.pk ?? '')) ? Promise.reject(throttled()) : db.table.doc.send(cmd as never)) as TableRef['doc']['send'];
    const table = interceptSigned({ ...db.table, doc }, 'batchWriteItem', async () => {
      throw throttled();
    });
    const store = dynamoExposureStore(table);
    const now = Math.floor(Date.now() / 1000);
    const served = (requestId: string, userId: string) => store.recordExposure('gd', { requestId, experimentId: 5, variant: 0, userId, servedAt: now, windowSeconds: 600 });
    const outcomes = await Promise.allSettled([served('first', 'u0'), served('w-1', 'w'), served('w-2', 'w')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await store.exposure('gd', 'w-2')).toBeDefined();
    expect(await getRow(db.table, ExperimentUser.key({ tenant: 'gd', experiment: 5, user_id: 'w' }))).toBeDefined();
    const x = (await store.totals('gd', 5)).get(0);
    expect({ requests: x?.requests, users: x?.users }).toEqual({ requests: 2, users: 2 });
  });

  it('a failed request whose totals were not added, sharing its membership row with a served request of the same user, counts the user for the served one', async () => {
    const throttled = () => Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    // The group update of ge totals (after the first request) is refused for load, and so is the first request by request: w-1s, which created the row.
    let calls = 0;
    const table = interceptSigned<{ Key: Record<string, { S?: string }> }>(db.table, 'updateItem', async (params, call) => {
      if (String(params.Key.pk?.S).includes('TENANT#ge#EXPAGG#5#') && [2, 3].includes(++calls)) throw throttled();
      return call();
    });
    const store = dynamoExposureStore(table);
    const now = Math.floor(Date.now() / 1000);
    const served = (requestId: string, userId: string) => store.recordExposure('ge', { requestId, experimentId: 5, variant: 0, userId, servedAt: now, windowSeconds: 600 });
    const outcomes = await Promise.allSettled([served('first', 'u0'), served('w-1', 'w'), served('w-2', 'w')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await getRow(db.table, ExperimentUser.key({ tenant: 'ge', experiment: 5, user_id: 'w' }))).toBeDefined();
    const x = (await store.totals('ge', 5)).get(0);
    expect({ requests: x?.requests, users: x?.users }).toEqual({ requests: 2, users: 2 });
  });

  it("a failed request's membership row that another container's served request of the user found (and relies on) stays, with the user counted", async () => {
    // Container A's totals fail (not for load: not added again) once container B has served the same user on the row A's request wrote.
    // B: the module loaded again, as in another container (users it recorded are its own).
    vi.resetModules();
    const elsewhere = (await import('../../shared/data/experiments.ts')).dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    const served = (store: ReturnType<typeof dynamoExposureStore>, requestId: string) =>
      store.recordExposure('gx', { requestId, experimentId: 5, variant: 0, userId: 'w', servedAt: now, windowSeconds: 600 });
    let meanwhile: Promise<void> | undefined;
    const table = interceptSigned<{ Key: Record<string, { S?: string }> }>(db.table, 'updateItem', async (params, call) => {
      if (meanwhile || !String(params.Key.pk?.S).includes('TENANT#gx#EXPAGG#5#')) return call();
      meanwhile = served(elsewhere, 'in-b');
      await meanwhile;
      throw Object.assign(new Error('internal'), { name: 'InternalServerError' });
    });
    await expect(served(dynamoExposureStore(table), 'in-a')).rejects.toMatchObject({ name: 'InternalServerError' });
    await meanwhile;
    expect(await dynamoExposureStore(db.table).exposure('gx', 'in-b')).toBeDefined();
    // Until 2026-12-07 A's take-back deleted the row B's request relied on: the user, served, counted nowhere (nor their conversions).
    expect(await getRow(db.table, ExperimentUser.key({ tenant: 'gx', experiment: 5, user_id: 'w' }), { consistent: true })).toMatchObject({ first_served_at: now });
    const x = (await elsewhere.totals('gx', 5)).get(0);
    expect({ requests: x?.requests, users: x?.users }).toEqual({ requests: 1, users: 1 });
  });

  it("a failed request's membership row whose other container's mark is taken back just after the delete it held back goes, not left with the user counted nowhere", async () => {
    // Container A's request writes the row; B's request (another container) finds it and marks it
    // before A's totals fail (not for load: not added). A's delete is refused for B's mark, and B's
    // request, failed too, takes its mark back before A reads the row: no request served relies on it.
    const now = Math.floor(Date.now() / 1000);
    const key = ExperimentUser.key({ tenant: 'gz', experiment: 5, user_id: 'w' });
    const mark = (n: number) => update(db.table, key, { add: { shared: n } });
    const totalsFail = interceptSigned<{ Key: Record<string, { S?: string }> }>(db.table, 'updateItem', async (params, call) => {
      if (!String(params.Key.pk?.S).includes('TENANT#gz#EXPAGG#5#')) return call();
      await mark(1);
      throw Object.assign(new Error('internal'), { name: 'InternalServerError' });
    });
    let refused = 0;
    const doc: TableRef['doc'] = Object.create(db.table.doc);
    doc.send = (async (cmd: { input: { Key?: Record<string, unknown>; ConditionExpression?: string } }) => {
      const sent = db.table.doc.send(cmd as never);
      if (cmd.input.Key?.pk !== key.pk || cmd.input.Key?.sk !== key.sk || !cmd.input.ConditionExpression) return sent;
      try {
        return await sent;
      } catch (e) {
        if (refused++ === 0) await mark(-1);
        throw e;
      }
    }) as TableRef['doc']['send'];
    const store = dynamoExposureStore({ ...totalsFail, doc });
    await expect(store.recordExposure('gz', { requestId: 'in-a', experimentId: 5, variant: 0, userId: 'w', servedAt: now, windowSeconds: 600 })).rejects.toMatchObject({ name: 'InternalServerError' });
    expect(refused).toBe(1);
    // Until 2026-12-07 (ec4ec1ff) the row read after the refused delete, unmarked, was left: the user's next requests found it and counted them nowhere.
    expect(await getRow(db.table, key, { consistent: true })).toBeUndefined();
    expect((await store.totals('gz', 5)).get(0)?.users ?? 0).toBe(0);
  });

  it("a failed request's mark is taken back only off the row it marked, not off a row written since (the user's erasure deleted it meanwhile)", async () => {
    // B's request finds A's row and marks it; before B's totals fail, the user's erasure deletes the row, a
    // request served after it writes the user's new one, and another container's served request marks that.
    const now = Math.floor(Date.now() / 1000);
    const key = ExperimentUser.key({ tenant: 'gw', experiment: 5, user_id: 'w' });
    await put(db.table, { ...key, variant: 0, first_served_at: now - 100 });
    const table = interceptSigned<{ Key: Record<string, { S?: string }> }>(db.table, 'updateItem', async (params, call) => {
      if (!String(params.Key.pk?.S).includes('TENANT#gw#EXPAGG#5#')) return call();
      await put(db.table, { ...key, variant: 0, first_served_at: now, shared: 1 });
      throw Object.assign(new Error('internal'), { name: 'InternalServerError' });
    });
    await expect(dynamoExposureStore(table).recordExposure('gw', { requestId: 'in-b', experimentId: 5, variant: 0, userId: 'w', servedAt: now, windowSeconds: 600 })).rejects.toMatchObject({
      name: 'InternalServerError',
    });
    // Until 2026-12-07 (ec4ec1ff) B took the other request's mark off the new row: its writer's take-back, failing, would then delete the row that request relies on.
    expect(await getRow(db.table, key, { consistent: true })).toMatchObject({ first_served_at: now, shared: 1 });
  });

  it('two failed requests of one user in a group, one of which wrote the membership row and the other marked it found, leave no row and no user', async () => {
    const throttled = () => Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    // Fails the exposure rows of both requests of user w (their batch too).
    const doc: TableRef['doc'] = Object.create(db.table.doc);
    doc.send = ((cmd: { input: { Item?: Record<string, unknown> } }) =>
      /EXPREQ#w-[12]$/.test(String(cmd.input.Item?.pk ?? '')) ? Promise.reject(throttled()) : db.table.doc.send(cmd as never)) as TableRef['doc']['send'];
    const table = interceptSigned({ ...db.table, doc }, 'batchWriteItem', async () => {
      throw throttled();
    });
    const store = dynamoExposureStore(table);
    const now = Math.floor(Date.now() / 1000);
    const served = (requestId: string, userId: string) => store.recordExposure('gy', { requestId, experimentId: 5, variant: 0, userId, servedAt: now, windowSeconds: 600 });
    const outcomes = await Promise.allSettled([served('first', 'u0'), served('w-1', 'w'), served('w-2', 'w')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(await getRow(db.table, ExperimentUser.key({ tenant: 'gy', experiment: 5, user_id: 'w' }), { consistent: true })).toBeUndefined();
    const x = (await store.totals('gy', 5)).get(0);
    expect({ requests: x?.requests, users: x?.users }).toEqual({ requests: 1, users: 1 });
  });

  it('a failed batch of exposure rows is written again row by row alone, not the batches of the group stored', async () => {
    const throttled = () => Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    let putItems = 0;
    const doc: TableRef['doc'] = Object.create(db.table.doc);
    doc.send = ((cmd: { input: { Item?: Record<string, unknown> } }) => {
      if (/EXPREQ#r-/.test(String(cmd.input.Item?.pk ?? ''))) putItems++;
      return db.table.doc.send(cmd as never);
    }) as TableRef['doc']['send'];
    // The batch holding r-29 (the second of the group of 30 after the first request) fails.
    const table = interceptSigned({ ...db.table, doc }, 'batchWriteItem', async (params, call) => {
      if (JSON.stringify(params).includes('EXPREQ#r-29')) throw throttled();
      return call();
    });
    const store = dynamoExposureStore(table);
    const now = Math.floor(Date.now() / 1000);
    const served = (requestId: string) => store.recordExposure('gf', { requestId, experimentId: 5, variant: 0, userId: 'u', servedAt: now, windowSeconds: 600 });
    const outcomes = await Promise.allSettled([served('first'), ...Array.from({ length: 30 }, (_, i) => served(`r-${i}`))]);
    expect(outcomes.every((o) => o.status === 'fulfilled')).toBe(true);
    expect(await store.exposure('gf', 'r-29')).toBeDefined();
    expect(putItems).toBe(5);
  });

  it('the requests of a group that were stored are answered without waiting for the take-back of one that failed', async () => {
    const throttled = () => Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    const takeBack = gate();
    // The row of request bad fails (its batch too), and its take-back (the delete of that row) waits until the gate opens.
    const doc: TableRef['doc'] = Object.create(db.table.doc);
    doc.send = (async (cmd: { input: { Item?: Record<string, unknown>; Key?: Record<string, unknown> } }) => {
      if (/EXPREQ#bad$/.test(String(cmd.input.Item?.pk ?? ''))) throw throttled();
      if (/EXPREQ#bad$/.test(String(cmd.input.Key?.pk ?? ''))) await takeBack.opened;
      return db.table.doc.send(cmd as never);
    }) as TableRef['doc']['send'];
    const table = interceptSigned({ ...db.table, doc }, 'batchWriteItem', async (params, call) => {
      if (JSON.stringify(params).includes('EXPREQ#bad')) throw throttled();
      return call();
    });
    const store = dynamoExposureStore(table);
    const now = Math.floor(Date.now() / 1000);
    const served = (requestId: string, userId: string) => store.recordExposure('gg', { requestId, experimentId: 5, variant: 0, userId, servedAt: now, windowSeconds: 600 });
    const first = served('first', 'u0');
    const ok = served('ok', 'u1');
    const bad = served('bad', 'u2');
    bad.catch(() => undefined);
    // ok is answered while the take-back is still held (not within 1 s of elapsed time, which a loaded machine overruns).
    await takeBack.notWaitedFor(ok).finally(takeBack.open);
    await first;
    await expect(bad).rejects.toThrow('throttled');
    expect(await store.exposure('gg', 'bad')).toBeUndefined();
  });

  it('a variant total that failed other than for load (it may have been applied) is not added again request by request: its requests fail, counted at most once', async () => {
    // The second UpdateItem of gc totals (the group after the first request) is applied, then answered as failed, as a timeout would be.
    let calls = 0;
    const table = interceptSigned<{ Key: Record<string, { S?: string }> }>(db.table, 'updateItem', async (params, call) => {
      const out = await call();
      if (String(params.Key.pk?.S).includes('TENANT#gc#EXPAGG#5#') && ++calls === 2) throw Object.assign(new Error('timed out'), { name: 'TimeoutError' });
      return out;
    });
    const store = dynamoExposureStore(table);
    const now = Math.floor(Date.now() / 1000);
    const served = (requestId: string, userId: string) => store.recordExposure('gc', { requestId, experimentId: 5, variant: 0, userId, servedAt: now, windowSeconds: 600 });
    const outcomes = await Promise.allSettled([served('first', 'u0'), served('c1', 'x1'), served('c2', 'x2'), served('c3', 'x1')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    // The group update landed once; added again per request it would read 7.
    expect((await store.totals('gc', 5)).get(0)?.requests).toBe(4);
  });

  it('forgetRequest takes back a request that failed once recorded: its row and its request in the totals, once however often asked; the user stays', async () => {
    const store = dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    await store.recordExposure('fr', { requestId: 'failed', experimentId: 3, variant: 1, userId: 'u', servedAt: now, windowSeconds: 60 });
    await store.recordExposure('fr', { requestId: 'served', experimentId: 3, variant: 1, userId: 'u', servedAt: now, windowSeconds: 60 });
    await Promise.all([store.forgetRequest('fr', 'failed'), store.forgetRequest('fr', 'failed')]);
    await store.forgetRequest('fr', 'never-recorded');
    expect(await store.exposure('fr', 'failed')).toBeUndefined();
    expect(await store.exposure('fr', 'served')).toBeDefined();
    expect((await store.totals('fr', 3)).get(1)).toMatchObject({ requests: 1, users: 1 });
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

  it("forgetUser deletes the user's rows in the experiments named (none there is no error); the totals stay; a conversion attributed later counts for its request, not the user, and writes no row", async () => {
    const store = dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    const row = (tenant: string, experiment: number, user_id: string) => getRow(db.table, ExperimentUser.key({ tenant, experiment, user_id }), { consistent: true });
    for (const [tenant, experimentId, requestId, userId] of [
      ['f1', 1, 'f-1', 'gone'],
      ['f1', 2, 'f-2', 'gone'],
      ['f1', 1, 'f-3', 'kept'],
      ['f2', 1, 'f-4', 'gone'],
    ] as const)
      await store.recordExposure(tenant, { requestId, experimentId, variant: 0, userId, servedAt: now, windowSeconds: 600 });
    const x = (id: string) => store.exposure('f1', id).then((r) => r!);
    expect(await store.attribute('f1', await x('f-1'), { id: 1, type: 'click', created: now })).toBe(true);
    const before = await store.totals('f1', 1);
    expect(before.get(0)).toEqual({ requests: 2, users: 2, events: { click: 1 }, requestsWith: { click: 1 }, usersWith: { click: 1 } });
    expect(await row('f1', 1, 'gone')).toMatchObject({ variant: 0, first_served_at: now, 'converted:click': now });

    // Experiment 3 never served the user; an id named twice is deleted once.
    await store.forgetUser('f1', 'gone', [1, 2, 3, 1]);
    expect(await row('f1', 1, 'gone')).toBeUndefined();
    expect(await row('f1', 2, 'gone')).toBeUndefined();
    // Other users, and the user in another tenant, keep theirs.
    expect(await row('f1', 1, 'kept')).toMatchObject({ first_served_at: now });
    expect(await row('f2', 1, 'gone')).toMatchObject({ first_served_at: now });
    expect(await store.totals('f1', 1)).toEqual(before);
    // Again, or with no experiment: nothing to do.
    await store.forgetUser('f1', 'gone', [1, 2]);
    await store.forgetUser('f1', 'gone', []);

    // A click again and a first purchase on the request served before: both count for the request's
    // events, the purchase for the requests with one; neither counts the user (no row), nor writes one.
    expect(await store.attribute('f1', await x('f-1'), { id: 2, type: 'click', created: now + 1 })).toBe(true);
    expect(await store.attribute('f1', await x('f-1'), { id: 3, type: 'purchase', created: now + 1 })).toBe(true);
    expect(await store.attribute('f1', await x('f-1'), { id: 3, type: 'purchase', created: now + 1 })).toBe(false);
    expect((await store.totals('f1', 1)).get(0)).toEqual({ requests: 2, users: 2, events: { click: 2, purchase: 1 }, requestsWith: { click: 1, purchase: 1 }, usersWith: { click: 1 } });
    expect(await row('f1', 1, 'gone')).toBeUndefined();
  });
  it('a container that recorded the user by the end of their erasure writes their membership again after it; not before, nor once recorded since', async () => {
    const store = dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    const row = () => getRow(db.table, ExperimentUser.key({ tenant: 'f3', experiment: 1, user_id: 'back' }), { consistent: true });
    const served = servedIn(store, 'f3', 'back');
    await served('b-1', now);
    await store.forgetUser('f3', 'back', [1]);
    // Without the marker, or with one of an erasure that ended before the container's record, the container trusts what it remembers: no row.
    await served('b-2', now + 1);
    await served('b-3', now + 1, now - 10);
    expect(await row()).toBeUndefined();
    // An erasure that ended after this container recorded the user (at now + 1): the row is written again, the user counted as a new member.
    await served('b-4', now + 2, now + 1);
    expect(await row()).toMatchObject({ first_served_at: now + 2 });
    expect((await store.totals('f3', 1)).get(0)).toMatchObject({ requests: 4, users: 2 });
    // Recorded since that erasure ended: the next request skips the row again.
    await store.forgetUser('f3', 'back', [1]);
    await served('b-5', now + 3, now + 1);
    expect(await row()).toBeUndefined();
  });

  it('a user served while their erasure runs, then after it ends: the row the erasure (or its sweep) deletes is replaced by a new membership, which stays', async () => {
    const store = dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    const row = () => getRow(db.table, ExperimentUser.key({ tenant: 'f5', experiment: 1, user_id: 'during' }), { consistent: true });
    const served = servedIn(store, 'f5', 'during');
    // While the erasure runs (its marker not ended: Infinity), every request writes the row if it is not there: none is remembered.
    await served('d-1', now, Number.POSITIVE_INFINITY);
    expect(await row()).toMatchObject({ first_served_at: now });
    await store.forgetUser('f5', 'during', [1]);
    await served('d-2', now + 1, Number.POSITIVE_INFINITY);
    expect(await row()).toMatchObject({ first_served_at: now + 1 });
    // The erasure ended at now + 2 without deleting that row (the sweep will): the first request after it replaces the row.
    await served('d-3', now + 5, now + 2);
    expect(await row()).toMatchObject({ first_served_at: now + 5 });
    // The sweep deletes rows first served by the end: this one stays, and the container serves the user on without writing.
    await store.forgetUser('f5', 'during', [1], now + 2);
    expect(await row()).toMatchObject({ first_served_at: now + 5 });
    await served('d-4', now + 6, now + 2);
    expect((await store.totals('f5', 1)).get(0)).toMatchObject({ requests: 4, users: 3 });
  });

  it('a request served after the erasure ended whose marker read failed (Infinity) leaves the next one to replace a row served as it ran: the membership survives the sweep', async () => {
    const store = dynamoExposureStore(db.table);
    const key = ExperimentUser.key({ tenant: 'f6', experiment: 1, user_id: 'u' });
    const served = servedIn(store, 'f6', 'u');
    // Another container served the user as the erasure ran (first served 999); it ended at 1000.
    await put(db.table, { ...key, variant: 0, first_served_at: 999 });
    await served('after-1', 1001, Number.POSITIVE_INFINITY);
    await served('after-2', 1002, 1000);
    await store.forgetUser('f6', 'u', [1], 1000);
    expect(await getRow(db.table, key, { consistent: true })).toMatchObject({ first_served_at: 1002 });
  });

  it("a new membership written when the user's marker could not be read does not take conversions of requests served before it (before an erasure, say) as the user's", async () => {
    const store = dynamoExposureStore(db.table);
    const served = servedIn(store, 'mr6', 'u');
    await served('r0', 1000);
    // The user's erasure (1100 to 1200) deleted their row, and its sweep ran.
    await store.forgetUser('mr6', 'u', [1]);
    // Served at 2000, the marker read failed; served again with it read.
    await served('r1', 2000, Number.POSITIVE_INFINITY);
    await store.recordExposure('mr6', { requestId: 'r2', experimentId: 1, variant: 0, userId: 'u', servedAt: 2001, windowSeconds: 600, erasedThrough: 1200, erasureBegan: 1100 });
    const buy = async (requestId: string, id: number) => store.attribute('mr6', (await store.exposure('mr6', requestId)) as ExposureRecord, { id, type: 'buy', created: 2002 });
    await buy('r0', 9);
    expect((await store.totals('mr6', 1)).get(0)?.usersWith.buy ?? 0).toBe(0);
    await buy('r1', 10);
    expect((await store.totals('mr6', 1)).get(0)?.usersWith.buy).toBe(1);
  });

  it('an event whose totals could not be added counts, for the request and the user, when the ingest is retried', async () => {
    const store = dynamoExposureStore(db.table);
    await servedIn(store, 'mr7', 'u')('r0', 1000);
    const flaky = dynamoExposureStore(updateFailingOnce(db.table, '#EXPAGG#'));
    const x = (await store.exposure('mr7', 'r0')) as ExposureRecord;
    await expect(flaky.attribute('mr7', x, { id: 5, type: 'buy', created: 1001 })).rejects.toThrow('throttled');
    // The retry counts it (until 2026-12-04 its mark stayed, and it counted nothing; since 2026-12-08
    // the mark is written with the counts, in one transaction); once.
    expect(await flaky.attribute('mr7', x, { id: 5, type: 'buy', created: 1001 })).toBe(true);
    expect(await flaky.attribute('mr7', x, { id: 5, type: 'buy', created: 1001 })).toBe(false);
    expect((await store.totals('mr7', 1)).get(0)).toMatchObject({ requests: 1, users: 1, events: { buy: 1 }, requestsWith: { buy: 1 }, usersWith: { buy: 1 } });
  });

  it('forgetUser with servedThrough deletes only a membership first served by then', async () => {
    const store = dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    const row = (experiment: number) => getRow(db.table, ExperimentUser.key({ tenant: 'f4', experiment, user_id: 'u' }), { consistent: true });
    await store.recordExposure('f4', { requestId: 'g-1', experimentId: 1, variant: 0, userId: 'u', servedAt: now, windowSeconds: 600 });
    await store.recordExposure('f4', { requestId: 'g-2', experimentId: 2, variant: 0, userId: 'u', servedAt: now + 1, windowSeconds: 600 });
    await store.forgetUser('f4', 'u', [1, 2, 3], now);
    expect(await row(1)).toBeUndefined();
    expect(await row(2)).toMatchObject({ first_served_at: now + 1 });
  });
});

describe('events attributed to one request', () => {
  it('count up to a bound and no more, so that its exposure row never outgrows what DynamoDB stores (past ~5,000 marks every ingest naming it failed)', async () => {
    // The bound's worst row: a mark per event of the longest type (and a first conversion per type) stays far below 400 KB.
    expect(EVENTS_PER_REQUEST_MAX * (`event:${Number.MAX_SAFE_INTEGER}`.length + 64) * 2).toBeLessThan(400_000);
    const cap = 40;
    const store = dynamoExposureStore(db.table, { eventsPerRequest: cap });
    const now = Math.floor(Date.now() / 1000);
    // A response cached for a shared guest id: everyone's clicks name its request_id under that one user.
    await store.recordExposure('cap', { requestId: 'cached', experimentId: 1, variant: 0, userId: 'guest', servedAt: now, windowSeconds: 3600 });
    const x = (await store.exposure('cap', 'cached'))!;
    const click = (id: number) => store.attribute('cap', x, { id, type: 'click', created: now });
    expect(await Promise.all(Array.from({ length: cap }, (_, k) => click(1 + k)))).not.toContain(false);
    // Past the bound: not counted, nor marked on the row; one counted before still counts once.
    expect(await click(cap + 1)).toBe(false);
    expect(await store.attribute('cap', x, { id: cap + 2, type: 'purchase', created: now })).toBe(false);
    expect(await click(1)).toBe(false);
    const row = await getRow(db.table, Exposure.key({ tenant: 'cap', request_id: 'cached' }), { consistent: true });
    expect(Object.keys(row!).filter((k) => k.startsWith('event:'))).toHaveLength(cap);
    expect((await store.totals('cap', 1)).get(0)).toEqual({ requests: 1, users: 1, events: { click: cap }, requestsWith: { click: 1 }, usersWith: { click: 1 } });
    // Another request of the same user counts on.
    await store.recordExposure('cap', { requestId: 'next', experimentId: 1, variant: 0, userId: 'guest', servedAt: now, windowSeconds: 3600 });
    expect(await store.attribute('cap', (await store.exposure('cap', 'next'))!, { id: 500, type: 'click', created: now })).toBe(true);
  });
});

describe("a user's first conversion from requests converting at once", () => {
  it("counts the user once, however many of the user's requests convert at once (ops.ts countEventOnce: the user's write holds the conversion absent)", async () => {
    const store = dynamoExposureStore(db.table);
    const now = Math.floor(Date.now() / 1000);
    const ids = Array.from({ length: 8 }, (_, k) => `conv-${k}`);
    for (const requestId of ids) await store.recordExposure('uc', { requestId, experimentId: 4, variant: 0, userId: 'u', servedAt: now, windowSeconds: 600 });
    const exposures = await Promise.all(ids.map((id) => store.exposure('uc', id).then((r) => r as ExposureRecord)));
    const counted = await Promise.all(exposures.map((x, k) => store.attribute('uc', x, { id: 100 + k, type: 'purchase', created: now + 1 })));
    expect(counted.every((c) => c)).toBe(true);
    expect((await store.totals('uc', 4)).get(0)).toMatchObject({ users: 1, events: { purchase: 8 }, requestsWith: { purchase: 8 }, usersWith: { purchase: 1 } });
  });
});
