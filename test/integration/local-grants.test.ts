/**
 * The local stack's stand-in for the functions' IAM roles (local/grants.ts): a DynamoDB call a
 * function's grant does not cover is refused as DynamoDB refuses it, on both of the data layer's
 * paths (its signed requests and the SDK's commands), in the stack's own threads.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTable, type TableRef } from '../../shared/data/client.ts';
import { IdempotencyClaimLost } from '../../shared/domain/idempotency.ts';
import { dynamoConsoleSessionStore } from '../../shared/data/console-auth.ts';
import { ConsoleSession, IdempotencyChunk } from '../../shared/data/entities.ts';
import { keys } from '../../shared/data/keys.ts';
import { storesFor } from '../../shared/data/index.ts';
import { getRow, put, queryPage, transact, update } from '../../shared/data/ops.ts';
import { dynamoExposureStore } from '../../shared/data/experiments.ts';
import { dynamoPopularitySnapshots } from '../../shared/data/popularity.ts';
import { asFunction } from '../../local/grants.ts';
import { blobs } from '../../shared/blob.ts';
import { workQueue } from '../../shared/queue/messages.ts';
import { withoutErased } from '../../shared/recs/erase-from-models.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

let t: TestStack;
let table: TableRef;
beforeAll(async () => {
  t = await startTestStack();
  const endpoint = JSON.parse(readFileSync(`${t.dataDir}/stack.json`, 'utf8')).dynamodb_endpoint as string;
  table = makeTable('recsearch-local', endpoint, 'us-east-1');
}, 60_000);
afterAll(() => t.stop());

const denied = async (p: Promise<unknown>, action: string) => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x as Error,
  );
  expect(e?.name).toBe('AccessDeniedException');
  expect(e?.message).toContain(`is not authorized to perform: dynamodb:${action}`);
};
const changes = (index: string) => ({ IndexName: index, KeyConditionExpression: 'gsi2pk = :p', ExpressionAttributeValues: { ':p': 'TENANT#nobody' } });

describe('local IAM', () => {
  it('refuses what a function is not granted, on the signed path and the SDK path', async () => {
    const item = keys.item('nobody', 1);
    // The Core API's unmatched-path function reads nothing.
    await denied(
      asFunction('errors/not-found-core', () => getRow(table, item)),
      'GetItem',
    );
    // The item GET reads items (and charges the quota): it writes no item.
    await denied(
      asFunction('core/items/get', () => put(table, { ...item, name: 'x' })),
      'PutItem',
    );
    await denied(
      asFunction('core/items/get', () => update(table, item, { set: { name: 'x' } })),
      'UpdateItem',
    );
    // Indexes are granted one by one: the item list queries gsi1, not the change index.
    await denied(
      asFunction('core/items/list', () => queryPage(table, changes('gsi4'))),
      'Query',
    );
  });

  it('lets through what it is granted', async () => {
    expect(await asFunction('core/items/get', () => getRow(table, keys.item('nobody', 1)))).toBeUndefined();
    // Search reads the change index.
    expect((await asFunction('core/search/search', () => queryPage(table, changes('gsi4')))).items).toEqual([]);
    // A Core route's function updates its tenant's quota row (IAM's LeadingKeys condition), and only that.
    await asFunction('core/items/get', () => update(table, keys.quota('nobody'), { add: { probe: 1 } }));
    // Outside a function (the stack's own set-up) nothing is checked.
    await put(table, { ...keys.item('nobody', 1), name: 'x' });
    expect(await getRow(table, keys.item('nobody', 1))).toMatchObject({ name: 'x' });
  });

  it('let the functions that serve popularity without a model read and store the popularity snapshot, and no other Core function store it', async () => {
    const snapshots = dynamoPopularitySnapshots(table);
    let at = Date.now();
    for (const m of ['core/recommendations/recommend', 'core/search/search', 'console-session/reads']) {
      at++;
      await asFunction(m, () => snapshots.write('grants', { countedAt: at, events: 20_000, top: [[1, 2]] }));
      expect(await asFunction(m, () => snapshots.read('grants')), m).toEqual({ countedAt: at, events: 20_000, top: [[1, 2]] });
    }
    await denied(
      asFunction('core/items/get', () => snapshots.write('grants', { countedAt: at + 1, events: 20_000, top: [] })),
      'PutItem',
    );
  });

  it('grant each item write its slow path: a change stamped more than a second before it was written is stamped again (UpdateItem)', async () => {
    const items = storesFor(table).items;
    const now = Math.floor(Date.now() / 1000);
    const [a, b] = await items.create('grants', [{ name: 'a' }, { name: 'b' }], now);
    // Stamped a minute ago, as a write that took that long would be.
    expect(await asFunction('core/items/update', () => items.update('grants', a?.id as number, { name: 'a2' }, now - 60))).toMatchObject({ name: 'a2' });
    expect(await asFunction('core/items/delete', () => items.delete('grants', b?.id as number, now - 60))).toBe(true);
  });

  it('let training (the worker and the container task) look items up 100 to a read (BatchGetItem), as a run whose events name an item it did not read does', async () => {
    // Found by a review (2026-12-06): runTraining looks up the ids taken before its catalog read
    // that the read did not hold (items.getMany, shared/recs/trainer.ts), which every run of a
    // tenant with events on a deleted item does; neither role was granted BatchGetItem, so on AWS
    // such a run failed with AccessDeniedException.
    const items = storesFor(table).items;
    const now = Math.floor(Date.now() / 1000);
    const [kept, gone] = await items.create('grants-train', [{ name: 'kept' }, { name: 'gone' }], now);
    await items.delete('grants-train', gone?.id as number, now);
    for (const fn of ['workers/train', 'workers/train-task']) {
      const found = await asFunction(fn, () => items.getMany('grants-train', [kept?.id as number, gone?.id as number]));
      expect(
        found.map((i) => i?.name),
        fn,
      ).toEqual(['kept', undefined]);
    }
  });

  it("let the event lists read the erasure sweep rows of a page's users by their keys (BatchGetItem), as a list past 1,000 rows does", async () => {
    // Found by a review (2026-12-07): past 1,000 sweep rows a list not filtered by user reads the
    // rows of the page's users in one BatchGetItem (ConsoleStore.erasureSweepsOf), which GET
    // /v1/events was not granted: on AWS such a list would have failed with AccessDeniedException.
    const c = storesFor(table).console;
    await c.putErasureSweep('grants-sweeps', { user_id: 'u', due_at: 1, events_through: 3, members_through: 0 });
    for (const fn of ['core/events/list', 'console-session/reads']) {
      expect(
        (await asFunction(fn, () => c.erasureSweepsOf('grants-sweeps', ['u', 'v']))).map((s) => s.events_through),
        fn,
      ).toEqual([3]);
    }
  });

  it('let the serving routes take back the exposure of a request that failed once recorded (DeleteItem of its row), as a recommendation whose ranking or read fails after it was accepted does', async () => {
    // Found by a review (2026-12-06): planAndRecord's `failed` (shared/control/exposures.ts) calls
    // ExposureStore.forgetRequest, which deletes the request's exposure row. Search is granted
    // DeleteItem with its search log; recommendations were not, so on AWS the take-back was
    // refused (logged as a warning) and the failed request stayed counted in its variant.
    const exposures = dynamoExposureStore(table);
    const now = Math.floor(Date.now() / 1000);
    for (const fn of ['core/recommendations/recommend', 'core/search/search']) {
      const requestId = `grants-forget-${fn.replace(/\//g, '-')}`;
      await exposures.recordExposure('grants-exp', { requestId, experimentId: 1, variant: 0, userId: 'u1', servedAt: now, windowSeconds: 600 });
      expect(await exposures.exposure('grants-exp', requestId), fn).toBeDefined();
      await asFunction(fn, () => exposures.forgetRequest('grants-exp', requestId));
      expect(await exposures.exposure('grants-exp', requestId), fn).toBeUndefined();
    }
    expect((await exposures.totals('grants-exp', 1)).get(0)).toMatchObject({ requests: 0, users: 1 });
  });

  it("let the Core create functions drop the parts of an answer they could not store under an Idempotency-Key they no longer hold (Query of the key's chunk rows)", async () => {
    // Found by a review (2026-12-06): IdempotencyStore.complete stores an answer over 300 KB
    // (gzipped) in chunk rows first; when the key's record then no longer names the attempt (an
    // erasure forgot the key meanwhile, or a retry took it over), it lists the attempt's chunk
    // rows (Query) to delete them. The Core create functions (CREATE) were not granted Query: on
    // AWS the call was refused, the parts stayed and the request logged its record as not completed.
    const idem = storesFor(table).idempotency;
    // Incompressible: about 600 KB gzipped, two chunks.
    const body = randomBytes(450_000).toString('base64');
    for (const fn of ['core/events/ingest', 'core/items/create']) {
      const key = `grants-chunks-${fn.replace(/\//g, '-')}`;
      const now = Math.floor(Date.now() / 1000);
      expect(await asFunction(fn, () => idem.claim('grants-idem', key, 'h', 'owner-a', now, 3600))).toEqual({ state: 'new' });
      // An erasure of a user whose events the request wrote forgets the key (no owner any more).
      await idem.forget('grants-idem', key, now);
      const lost = await asFunction(fn, () => idem.complete('grants-idem', key, 'owner-a', 201, body, 3600)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(lost, fn).toBeInstanceOf(IdempotencyClaimLost);
      // Its parts were dropped: none is left under the key.
      const chunks = IdempotencyChunk.indexes.primary;
      expect((await queryPage(table, { ...chunks.query({ tenant: 'grants-idem', key }, { beginsWith: chunks.skPrefix() }), ConsistentRead: true })).items, fn).toEqual([]);
    }
  });

  it('let training (the worker and the container task) read back the version it stored, which it writes again without a user whose erasure began meanwhile', async () => {
    // Found by a review (2026-12-06): runTraining (shared/recs/trainer.ts), once its version is
    // stored, reads the erasure markers again and, when the artifact holds a user erased
    // meanwhile, calls withoutErased, which reads the artifact (GetObject) before writing it
    // again. The container task was granted PutObject under models/ only, so on AWS such a run
    // failed there (AccessDenied) after storing a version that still held the erased user.
    const s = storesFor(table);
    for (const fn of ['workers/train', 'workers/train-task']) {
      // No artifact under the key: read, nothing to take out, nothing written.
      expect(await asFunction(fn, () => withoutErased({ console: s.console, blobs: blobs() }, 'grants-train', 'models/grants-train/none')), fn).toBe(false);
    }
    // The task's read is of models only.
    const e = await asFunction('workers/train-task', () => blobs().get('search/grants-train/none')).then(
      () => undefined,
      (x: unknown) => x as Error,
    );
    expect(e?.message).toContain('is not authorized to perform: s3:GetObject');
  });

  it("let every Platform function record its check of a console session's user on the session's row (UpdateItem on CONSOLESESSION# rows), and no Core function", async () => {
    const sessions = dynamoConsoleSessionStore(table);
    const now = Math.floor(Date.now() / 1000);
    await sessions.put('grants-probe', { email: 'a@example.com', tenant: 'grants', role: 'admin', csrf_token: 'x', created: now - 600, expires_at: now + 600 });
    // A read-only Platform route's function, and a console route's.
    expect(await asFunction('platform/contexts/list', () => sessions.recordCheck('grants-probe', now, { role: 'viewer' }))).toBe(true);
    expect(await asFunction('console-session/reads', () => sessions.recordCheck('grants-probe', now + 1, { end: true }))).toBe(true);
    expect(await sessions.get('grants-probe')).toMatchObject({ role: 'viewer', checked_at: now + 1, expires_at: now + 1 });
    // The grant is the session rows only: the same function updates no other row.
    await denied(
      asFunction('platform/contexts/list', () => update(table, keys.item('grants', 1), { set: { name: 'x' } })),
      'UpdateItem',
    );
    await denied(
      asFunction('core/items/get', () => sessions.recordCheck('grants-probe', now + 2, { role: 'admin' })),
      'UpdateItem',
    );
    // The sign-in function opens and ends sessions (PutItem, DeleteItem on their rows), and puts or deletes no other row.
    await asFunction('console-session/session', () =>
      sessions.put('grants-probe-2', { email: 'a@example.com', tenant: 'grants', role: 'admin', csrf_token: 'x', created: now, expires_at: now + 600 }),
    );
    await asFunction('console-session/session', () => sessions.delete('grants-probe-2'));
    expect(await sessions.get('grants-probe-2')).toBeUndefined();
    await denied(
      asFunction('console-session/session', () => put(table, { ...keys.item('grants', 1), name: 'x' })),
      'PutItem',
    );
    await denied(
      asFunction('platform/contexts/list', () => sessions.put('grants-probe-3', { email: 'a@example.com', tenant: 'grants', role: 'admin', csrf_token: 'x', created: now, expires_at: now + 600 })),
      'PutItem',
    );
    // In a transaction too, as IAM checks dynamodb:LeadingKeys on each write: a Put's partition key is its Item's.
    const row = { ...ConsoleSession.key({ id_hash: 'grants-probe-4' }), email: 'a@example.com', tenant: 'grants', role: 'admin', csrf_token: 'x', created: now, expires_at: now + 600 };
    await asFunction('console-session/session', () => transact(table, [{ put: row }]));
    expect(await sessions.get('grants-probe-4')).toMatchObject({ email: 'a@example.com' });
    await denied(
      asFunction('console-session/session', () => transact(table, [{ put: { ...keys.item('grants', 1), name: 'x' } }])),
      'PutItem',
    );
  });

  it("checks each write of a transaction (TransactWriteItems) as its own action, as IAM does: a change and its audit entry, and the entry's removal", async () => {
    const record = keys.item('nobody', 7);
    const entry = keys.item('nobody', 8);
    // The item GET writes no item, whatever the call.
    await denied(
      asFunction('core/items/get', () => transact(table, [{ put: { ...record, name: 'x' } }, { put: { ...entry, name: 'y' } }])),
      'PutItem',
    );
    // A segment's PATCH puts its change and entry, and takes nothing back: no DeleteItem, even beside writes it may make.
    await denied(
      asFunction('platform/segments/update', () => transact(table, [{ put: { ...record, name: 'x' } }, { remove: entry }])),
      'DeleteItem',
    );
    expect(await getRow(table, record, { consistent: true })).toBeUndefined();
    // A rule's PATCH may take a change back with its entry (DeleteItem): the same transaction goes through.
    await asFunction('platform/rules/update', () => transact(table, [{ put: { ...record, name: 'x' } }, { remove: entry }]));
    expect(await getRow(table, record, { consistent: true })).toMatchObject({ name: 'x' });
  });

  it('names the function and the grant it lacks where a developer looks', async () => {
    const errors: string[] = [];
    const original = console.error;
    console.error = (...a: unknown[]) => void errors.push(a.map(String).join(' '));
    try {
      await asFunction('errors/not-found-core', () => getRow(table, keys.item('nobody', 1))).catch(() => undefined);
    } finally {
      console.error = original;
    }
    expect(errors.join('\n')).toContain('functions/errors/not-found-core.ts is not granted dynamodb:GetItem');
  });

  it('holds queue sends and artifact reads, writes and deletes to the grant too', async () => {
    const denied = async (p: Promise<unknown>, action: string) => {
      const e = await p.then(
        () => undefined,
        (x: unknown) => x as Error,
      );
      expect(e?.name).toBe('AccessDenied');
      expect(e?.message).toContain(`is not authorized to perform: ${action}`);
    };
    // The item GET sends nothing; item creation sends embedding jobs.
    await denied(
      asFunction('core/items/get', () => workQueue().send('embedding', [{ type: 'embed', tenant: 'nobody', item_id: 1 }])),
      'sqs:SendMessage',
    );
    await asFunction('core/items/create', () => workQueue().send('embedding', []));
    // Search reads indexes and writes none; nothing is granted outside the artifact prefixes.
    expect(await asFunction('core/search/search', () => blobs().get('search/nobody/none'))).toBeUndefined();
    await denied(
      asFunction('core/search/search', () => blobs().put('search/nobody/none', 'x')),
      's3:PutObject',
    );
    await denied(
      asFunction('core/search/search', () => blobs().get('elsewhere/x')),
      's3:GetObject',
    );
    await denied(
      asFunction('core/items/get', () => blobs().get('search/nobody/none')),
      's3:GetObject',
    );
    // The embedding worker replaces index builds (deletes under search/), training deletes nothing.
    await asFunction('workers/embed', () => blobs().delete('search/nobody/none'));
    await denied(
      asFunction('workers/train', () => blobs().delete('models/nobody/none')),
      's3:DeleteObject',
    );
    // A bucket grant covers its function's prefixes only: the embedding worker writes no model, an erasure no index build.
    await denied(
      asFunction('workers/embed', () => blobs().put('models/nobody/none', 'x')),
      's3:PutObject',
    );
    await denied(
      asFunction('platform/users/erase', () => blobs().put('search/nobody/none', 'x')),
      's3:PutObject',
    );
    expect(await asFunction('platform/users/erase', () => blobs().get('models/nobody/none'))).toBeUndefined();
  });

  it('knows every function the stack invokes', () => {
    expect(() => asFunction('core/no-such-thing', () => undefined)).toThrow(/no grant is declared/);
  });
});
