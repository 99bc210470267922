import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Conflict } from '../../shared/domain/errors.ts';
import { dynamoItemStore } from '../../shared/data/items.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { setClock } from '../../shared/clock.ts';
import { Item, Tombstone } from '../../shared/data/entities.ts';
import { queryPage, update } from '../../shared/data/ops.ts';
import { allocateIds } from '../../shared/data/counters.ts';
import { DeleteCommand, type PutCommand } from '@aws-sdk/lib-dynamodb';
import { CHANGE_FIELDS } from '../../shared/data/table-schema.ts';
import type { ChangeKey } from '../../shared/domain/types.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

describe('item store', () => {
  it('creates with consecutive per-tenant ids, gets, and isolates tenants', async () => {
    const s = db.stores.items;
    const [a] = await s.create('t1', [{ name: 'one', metadata: { category: 'c' } }], 100);
    const batch = await s.create('t1', [{ name: 'two' }, { name: 'three', description: 'd' }], 101);
    expect(a?.id).toBe(1);
    expect(batch.map((i) => i.id)).toEqual([2, 3]);
    const [other] = await s.create('t2', [{ name: 'theirs' }], 100);
    expect(other?.id).toBe(1);
    expect(await s.get('t1', 3)).toEqual({ id: 3, name: 'three', description: 'd', metadata: {}, active: true, created: 101, updated_at: 101, embedding_updated_at: null });
    expect((await s.get('t2', 1))?.name).toBe('theirs');
    expect(await s.get('t2', 2)).toBeUndefined();
  });

  it('reads items by id in one BatchGetItem per 100, in the order asked, undefined for those that do not exist or were deleted', async () => {
    const s = db.stores.items;
    const created = await s.create(
      'many',
      Array.from({ length: 150 }, (_, i) => ({ name: `m${i}`, metadata: { i } })),
      7,
    );
    await s.delete('many', 3, 8);
    await s.create('many-other', [{ name: 'theirs' }], 7);
    const calls: number[] = [];
    const { signed } = db.table;
    const counted = dynamoItemStore({
      ...db.table,
      signed: { ...signed, batchGetItem: (input) => (calls.push(Object.values(input.RequestItems ?? {})[0]?.Keys?.length ?? 0), signed.batchGetItem(input)) },
    });
    const ids = [150, 3, 1, 999, 1, ...created.slice(4, 130).map((r) => r.id), 2];
    const got = await counted.getMany('many', ids);
    expect(got.map((r) => r?.name)).toEqual(ids.map((id) => (id === 3 || id === 999 ? undefined : `m${id - 1}`)));
    expect(got[0]).toEqual(await s.get('many', 150));
    // 132 ids: two calls, the first 100 ids (the repeated 1 asked once: DynamoDB refuses a key
    // asked twice in one request) and the other 32.
    expect(calls.sort((a, b) => a - b)).toEqual([32, 99]);
    expect(await counted.getMany('many-other', [1, 2])).toEqual([expect.objectContaining({ name: 'theirs' }), undefined]);
    expect(await counted.getMany('many', [])).toEqual([]);
  });

  it('reads again the keys a BatchGetItem leaves unprocessed, until none is left', async () => {
    const s = db.stores.items;
    await s.create('unprocessed', [{ name: 'a' }, { name: 'b' }, { name: 'c' }], 7);
    const { signed } = db.table;
    const sent: number[] = [];
    // DynamoDB answers the first request's first key and leaves the others unprocessed (over its
    // read capacity, or its 16 MB answer limit).
    const batchGetItem: typeof signed.batchGetItem = async (input) => {
      const [table, ask] = Object.entries(input.RequestItems ?? {})[0] ?? [];
      const keys = ask?.Keys ?? [];
      sent.push(keys.length);
      if (sent.length > 1 || !table || !ask) return signed.batchGetItem(input);
      const out = await signed.batchGetItem({ RequestItems: { [table]: { ...ask, Keys: keys.slice(0, 1) } } });
      return { ...out, UnprocessedKeys: { [table]: { ...ask, Keys: keys.slice(1) } } };
    };
    const got = await dynamoItemStore({ ...db.table, signed: { ...signed, batchGetItem } }).getMany('unprocessed', [3, 1, 2]);
    expect(got.map((r) => r?.name)).toEqual(['c', 'a', 'b']);
    expect(sent).toEqual([3, 2]);
  });

  it('writes a batch of 100 (BatchWriteItem chunks) completely', async () => {
    const s = db.stores.items;
    const created = await s.create(
      'bulk',
      Array.from({ length: 100 }, (_, i) => ({ name: `n${i}` })),
      5,
    );
    const page = await s.list('bulk', { limit: 100 });
    expect(page.rows.map((r) => r.id)).toEqual(created.map((r) => r.id));
    expect(page.hasMore).toBe(false);
  });

  it('counts changes after a time (updates and deletions), stopping at the limit asked', async () => {
    const s = db.stores.items;
    // Stamps in the future: a write stamped more than a second before it commits is stamped
    // again with the time it committed (search readers would pass it otherwise).
    const F = Math.floor(Date.now() / 1000) + 10_000;
    await s.create(
      'chg',
      Array.from({ length: 30 }, (_, i) => ({ name: `c${i}` })),
      F + 1000,
    );
    await s.create('chg', [{ name: 'later' }, { name: 'later too' }], F + 2000);
    expect(await s.delete('chg', 1, F + 2001)).toBe(true);
    expect(await s.countChangesSince('chg', 0, 1000)).toBe(32);
    expect(await s.countChangesSince('chg', F + 1500, 1000)).toBe(3);
    expect(await s.countChangesSince('chg', 0, 10)).toBe(10);
    expect(await s.countChangesSince('chg', F + 3000, 10)).toBe(0);
    const changes = await s.changedSince('chg', F + 1500, 100);
    expect(changes.items.length + changes.deleted.length).toBe(3);
    // Paging with the cursor reads every change once, even when they share one second.
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await s.changedSince('chg', 0, 7, cursor);
      seen.push(...page.items.map((i) => i.id), ...page.deleted.map((d) => d.id));
      expect(page.complete).toBe(page.cursor === undefined);
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toHaveLength(32);
    expect(new Set(seen).size).toBe(32);
    // Listing without item data: a state change within the same second still shows as a new state.
    const before = await s.changeKeysSince('chg', F + 1500);
    expect(before).toHaveLength(3);
    await s.update('chg', 31, { active: false }, F + 2000);
    const after = await s.changeKeysSince('chg', F + 1500);
    expect(after.map((k) => k.cursor)).toEqual(before.map((k) => k.cursor));
    expect(after.map((k) => k.state)).not.toEqual(before.map((k) => k.state));
    expect(after.find((k) => k.id === 31)).toMatchObject({ deleted: false, at: F + 2000 });
    expect(after.find((k) => k.id === 1)).toMatchObject({ deleted: true, at: F + 2001 });
    // Listed where changedSince reads (the search delta) or from the slim listing (the index
    // status): the same changes.
    expect(await s.changeKeysSince('chg', F + 1500, { besideReads: true })).toEqual(after);
  });

  it('reads the changes of a range of time a page at a time, and finds when the first and the last change after a time were made', async () => {
    const s = db.stores.items;
    // Stamps in the future, as above (a write is never stamped again for committing early).
    const F = Math.floor(Date.now() / 1000) + 20_000;
    const early = Array.from({ length: 5 }, (_, i) => `early ${i}`);
    const late = Array.from({ length: 4 }, (_, i) => `late ${i}`);
    await s.create(
      'rng',
      early.map((name) => ({ name })),
      F + 100,
    );
    await s.create(
      'rng',
      late.map((name) => ({ name })),
      F + 200,
    );
    expect(await s.changeSpanSince('rng', 0)).toEqual({ first: F + 100, last: F + 200 });
    expect(await s.changeSpanSince('rng', F + 101)).toEqual({ first: F + 200, last: F + 200 });
    expect(await s.changeSpanSince('rng', F + 201)).toBeUndefined();
    const names = async (since: number, before: number | undefined, limit: number) => {
      const out: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await s.changedSince('rng', since, limit, cursor, before);
        out.push(...page.items.map((i) => i.name));
        expect(page.complete).toBe(page.cursor === undefined);
        cursor = page.cursor;
      } while (cursor);
      return out;
    };
    // `since` counts, `before` does not; pages read each change once, in order.
    expect(await names(0, F + 200, 2)).toEqual(early);
    expect(await names(F + 200, undefined, 2)).toEqual(late);
    expect(await names(F + 100, F + 201, 3)).toEqual([...early, ...late]);
    expect(await names(F + 101, F + 200, 2)).toEqual([]);
  });

  it('a write that commits over a second after its stamp is stamped again, and settles even when every write takes that long', async () => {
    const s = db.stores.items;
    // Every read of the clock is 1.5 s after the one before (the first 1.5 s after the stamp):
    // each write, and each new stamp, commits over a second after it was taken. A new stamp of
    // the time now never landed in time (the write looped until its function's timeout); one
    // that allows as long as the last stamping took lands.
    // 900 ms into a second: a new stamp of the time now (rounded up to the second) would then
    // always commit 1.4 s after it; at under 500 ms into one it landed in time.
    const base = Math.floor(Date.now() / 1000) * 1000 + 30_000_900;
    let reads = 0;
    const restore = setClock({ nowMs: () => base + 1500 * ++reads });
    try {
      const stamp = Math.floor(base / 1000);
      const [made] = await s.create('late', [{ name: 'slow' }], stamp);
      // Stamped again, later than its first stamp and than when it committed (2 s after at the
      // least): a listing of the changes after that finds it; its own times are as written.
      const keys = await s.changeKeysSince('late', stamp + 2);
      expect(keys.map((k) => [k.id, k.at])).toEqual([[made?.id, stamp]]);
    } finally {
      restore();
    }
  }, 10_000);

  it('lists changes from an index that holds no item data (gsi4: the change fields only)', async () => {
    const s = db.stores.items;
    const [a, b] = await s.create('slim', [{ name: 'with a vector', description: 'long text' }, { name: 'gone' }], 50);
    expect(await s.saveEmbedding('slim', a?.id as number, 1, new Float32Array(512).fill(0.5), 51)).toBe('saved');
    expect(await s.delete('slim', b?.id as number, 52)).toBe(true);
    const q = Item.indexes.changeKeys.query({ tenant: 'slim' });
    const { items: rows } = await queryPage(db.table, q);
    expect(q.IndexName).toBe('gsi4');
    expect(rows).toHaveLength(2);
    const allowed = new Set<string>(['pk', 'sk', 'gsi2pk', 'gsi2sk', ...CHANGE_FIELDS]);
    for (const r of rows) expect(Object.keys(r).filter((k) => !allowed.has(k))).toEqual([]);
    expect(rows.map((r) => r.id)).toEqual([a?.id, b?.id]);
    expect(rows[0]).toMatchObject({ embedded_version: 1, embedding_updated_at: 51 });
    expect(rows[1]).toMatchObject({ deleted_at: 52 });
    expect(await s.changeKeysSince('slim', 0)).toEqual(await s.changeKeysSince('slim', 0, { besideReads: true }));
    // When each changed: the embedding's save (after the content's update), the deletion.
    expect((await s.changeKeysSince('slim', 0)).map((k) => [k.id, k.deleted, k.at])).toEqual([
      [a?.id, false, 51],
      [b?.id, true, 52],
    ]);
    expect(await s.countChangesSince('slim', 0, 100)).toBe(2);
  });

  it('saves an embedding only for the content it was made from, and takes the item out of the pending index', async () => {
    // docs/api.md: the worker stores the vector only if the content did not change meanwhile; the
    // sweep re-queues items whose embedding is behind (the sparse pending index).
    const s = db.stores.items;
    const T = 'embed-save';
    const [item] = await s.create(T, [{ name: 'A' }], 100);
    const id = item?.id as number;
    expect((await s.pendingEmbeddings(T, 200, 10)).map((p) => p.id)).toEqual([id]);
    // The content changes (version 2) while version 1 is being embedded: that vector is stale.
    await s.update(T, id, { name: 'B' }, 101);
    expect(await s.saveEmbedding(T, id, 1, new Float32Array([1, 0]), 102)).toBe('stale');
    expect((await s.get(T, id))?.embedding_updated_at).toBeNull();
    expect((await s.pendingEmbeddings(T, 200, 10)).map((p) => p.id)).toEqual([id]);
    expect(await s.saveEmbedding(T, id, 2, new Float32Array([0, 1]), 103)).toBe('saved');
    expect((await s.get(T, id))?.embedding_updated_at).toBe(103);
    expect((await s.pendingEmbeddings(T, 200, 10)).map((p) => p.id)).toEqual([]);
    expect(await s.pendingCount(T)).toBe(0);
  });

  it('updates only given fields and moves the category index with the metadata', async () => {
    const s = db.stores.items;
    const [it1] = await s.create('upd', [{ name: 'x', metadata: { category: 'old' } }], 10);
    const id = it1?.id as number;
    const u = await s.update('upd', id, { metadata: { category: 'new' }, active: false }, 20);
    expect(u).toMatchObject({ name: 'x', metadata: { category: 'new' }, active: false, created: 10, updated_at: 20 });
    expect((await s.list('upd', { limit: 10, category: 'old' })).rows).toEqual([]);
    expect((await s.list('upd', { limit: 10, category: 'new' })).rows.map((r) => r.id)).toEqual([id]);
    await s.update('upd', id, { metadata: { brand: 'b' } }, 30);
    expect((await s.list('upd', { limit: 10, category: 'new' })).rows).toEqual([]);
    expect(await s.update('upd', 999, { name: 'y' }, 40)).toBeUndefined();
    expect(await s.update('other-tenant', id, { name: 'y' }, 40)).toBeUndefined();
  });

  it('indexes a string category of any length (a long one by its digest: a key holds at most 2,048 bytes); other values filter nothing', async () => {
    const s = db.stores.items;
    const long = 'é'.repeat(1500); // 3,000 bytes
    const made = await s.create(
      'cats',
      [
        { name: 'long', metadata: { category: long } },
        { name: 'number', metadata: { category: 5 } },
      ],
      10,
    );
    expect((await s.list('cats', { limit: 10, category: long })).rows.map((r) => r.name)).toEqual(['long']);
    expect((await s.list('cats', { limit: 10, category: long.slice(1) })).rows).toEqual([]);
    expect((await s.list('cats', { limit: 10, category: '5' })).rows).toEqual([]);
    await s.update('cats', made[1]?.id as number, { metadata: { category: long } }, 20);
    expect((await s.list('cats', { limit: 10, category: long })).rows.map((r) => r.name)).toEqual(['long', 'number']);
  });

  it('a single create whose put landed, its answer lost and sent again by the SDK (which then finds the row), is stored, not 409 item_exists', async () => {
    // Every put sent twice: the first lands, its answer is lost; the second's answer is the one heard.
    const t = db.table;
    const twice: TableRef = {
      ...t,
      doc: { send: async (c: Parameters<DynamoDBDocumentClient['send']>[0]) => (await t.doc.send(c).catch(() => undefined), t.doc.send(c)) } as unknown as DynamoDBDocumentClient,
    };
    const [one] = await dynamoItemStore(twice).create('resent', [{ name: 'lamp', description: 'd', metadata: { category: 'c', n: 1 } }], 7);
    expect(one).toMatchObject({ id: 1, name: 'lamp' });
    expect(await db.stores.items.get('resent', 1)).toEqual(one);
    // A row of another item under the id (the id handed out twice) is still the conflict.
    await db.stores.items.create('resent', [{ name: 'other' }], 8);
    const { Counter } = await import('../../shared/data/entities.ts');
    const { update } = await import('../../shared/data/ops.ts');
    await update(t, Counter.key({ tenant: 'resent', counter: 'item' }), { set: { value: 1 } });
    await expect(db.stores.items.create('resent', [{ name: 'third' }], 9)).rejects.toBeInstanceOf(Conflict);
    expect((await db.stores.items.get('resent', 2))?.name).toBe('other');
  });

  it('deletes once', async () => {
    const s = db.stores.items;
    const [it1] = await s.create('del', [{ name: 'x' }], 1);
    expect(await s.delete('del', it1?.id as number, 2)).toBe(true);
    expect(await s.delete('del', it1?.id as number, 3)).toBe(false);
    expect(await s.get('del', it1?.id as number)).toBeUndefined();
  });

  it('a delete right after a create finds the item: its read is strongly consistent (on DynamoDB an eventual one may not see it yet)', async () => {
    const { dynamoItemStore } = await import('../../shared/data/items.ts');
    // A replica that has not seen the create yet: an eventually consistent read finds nothing.
    const signed = { ...db.table.signed, getItem: (input: Parameters<typeof db.table.signed.getItem>[0]) => (input.ConsistentRead ? db.table.signed.getItem(input) : Promise.resolve({})) };
    const s = dynamoItemStore({ ...db.table, signed: signed as typeof db.table.signed });
    const [made] = await s.create('del-fresh', [{ name: 'x' }], 1);
    // Until 2026-12-02 this was 404 (false) with the item left in place.
    expect(await s.delete('del-fresh', made?.id as number, 2)).toBe(true);
    expect(await db.stores.items.get('del-fresh', made?.id as number)).toBeUndefined();
  });

  it('lists in id order with cursor, category and created filters', async () => {
    const s = db.stores.items;
    for (let i = 0; i < 12; i++) await s.create('lst', [{ name: `i${i}`, metadata: { category: i % 2 ? 'odd' : 'even' } }], 1000 + i);
    const p1 = await s.list('lst', { limit: 5 });
    expect(p1.rows.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    expect(p1.hasMore).toBe(true);
    const p3 = await s.list('lst', { limit: 5, after: 10 });
    expect(p3.rows.map((r) => r.id)).toEqual([11, 12]);
    expect(p3.hasMore).toBe(false);
    expect((await s.list('lst', { limit: 3, category: 'odd', after: 2 })).rows.map((r) => r.id)).toEqual([4, 6, 8]);
    const window = await s.list('lst', { limit: 2, createdAfter: 1003, createdBefore: 1008 });
    expect(window.rows.map((r) => r.created)).toEqual([1003, 1004]);
    expect(window.hasMore).toBe(true);
    expect((await s.list('lst', { limit: 10, createdAfter: 1011 })).rows.map((r) => r.id)).toEqual([12]);
  });
});

describe('a create retried under its ids while one of its items is deleted', () => {
  /** A step one racing call waits for another to reach. */
  const signal = () => {
    let open: () => void = () => undefined;
    const p = new Promise<void>((r) => {
      open = r;
    });
    return { p, open };
  };

  it('leaves the item deleted when the delete lands between the retry\'s look for its tombstone and its write (docs/api.md: "stays deleted")', async () => {
    const s = db.stores.items;
    const T = 'retry-vs-delete';
    const now = Math.floor(Date.now() / 1000);
    // The failed attempt reserved the id and wrote the item.
    const [item] = await s.create(T, [{ name: 'gone soon' }], now);
    const id = (item as { id: number }).id;
    // The retry looks for the item's tombstone (none yet), then waits for the delete to answer.
    const [looked, deleted] = [signal(), signal()];
    const { signed } = db.table;
    const getItem: typeof signed.getItem = async (input) => {
      const out = await signed.getItem(input);
      if (input.Key?.pk && 'S' in input.Key.pk && input.Key.pk.S === Tombstone.key({ tenant: T, id }).pk) {
        looked.open();
        await deleted.p;
      }
      return out;
    };
    const retry = dynamoItemStore({ ...db.table, signed: { ...signed, getItem } }).create(T, [{ name: 'gone soon' }], now, { reuse: id });
    await looked.p;
    expect(await s.delete(T, id, now + 1)).toBe(true);
    deleted.open();
    await retry;
    // Until 2026-12-03 the retry's write found no row (the delete had removed it) and stored the item again.
    expect(await s.get(T, id)).toBeUndefined();
    expect((await s.list(T, { limit: 10 })).rows).toEqual([]);
  });

  it('leaves a delete of the item it wrote to that delete: the delete answers 200, not 404 (the retry waits for it to remove the row)', async () => {
    const T = 'retry-then-delete';
    const now = Math.floor(Date.now() / 1000);
    // The failed attempt reserved the id and stopped before its write.
    const id = await allocateIds(db.table, T, 'item', 1);
    const [wrote, sawTombstone, tombstoned] = [signal(), signal(), signal()];
    const { signed } = db.table;
    let looks = 0;
    // The retry's second look for the tombstone (after its write) finds the delete's: it reads once the delete wrote it.
    const getItem: typeof signed.getItem = async (input) => {
      const tomb = input.Key?.pk && 'S' in input.Key.pk && input.Key.pk.S === Tombstone.key({ tenant: T, id }).pk;
      if (tomb && ++looks === 2) {
        wrote.open();
        await tombstoned.p;
      }
      const out = await signed.getItem(input);
      if (tomb && looks === 2) sawTombstone.open();
      return out;
    };
    // The delete removes the row only once the retry has seen its tombstone, and some time after (its tombstone's stamp settled, say).
    const doc = {
      send: async (command: { input: object }) => {
        if (command instanceof DeleteCommand) {
          await sawTombstone.p;
          await new Promise((r) => setTimeout(r, 50));
        } else if ('Item' in command.input && String((command.input.Item as Record<string, unknown>).pk).endsWith('#TOMBSTONES')) {
          const done = await db.table.doc.send(command as PutCommand);
          tombstoned.open();
          return done;
        }
        return db.table.doc.send(command as PutCommand);
      },
    } as unknown as TableRef['doc'];
    const retry = dynamoItemStore({ ...db.table, signed: { ...signed, getItem } }).create(T, [{ name: 'mine' }], now, { reuse: id });
    await wrote.p;
    const del = dynamoItemStore({ ...db.table, doc }).delete(T, id, now + 1);
    expect((await retry).map((i) => i.id)).toEqual([id]);
    expect(await del).toBe(true);
    expect(await db.stores.items.get(T, id)).toBeUndefined();
  });
});

describe('updating an item to the content it has', () => {
  it('keeps the embedding, but a content change landing between the read and the write is not undone', async () => {
    const { updateItem } = await import('../../shared/domain/items.ts');
    const s = db.stores.items;
    const T = 'same-content';
    const queue = { sent: [] as unknown[], send: async (_q: string, jobs: unknown[]) => void queue.sent.push(...jobs) };
    const now = Math.floor(Date.now() / 1000);
    const [item] = await s.create(T, [{ name: 'A' }], now);
    const id = (item as { id: number }).id;
    await s.saveEmbedding(T, id, 1, new Float32Array([1, 0]), now);
    // As it is: written, but the embedding stays.
    const same = await updateItem(s, queue as never, T, id, { name: 'A' });
    expect(same.embedding_updated_at).not.toBeNull();
    expect(queue.sent).toEqual([]);
    // Another update renames the item to B between this update's read and its write of A.
    let raced = false;
    const racing = {
      ...s,
      update: async (...args: Parameters<typeof s.update>) => {
        if (!raced) {
          raced = true;
          await s.update(T, id, { name: 'B' }, now);
        }
        return s.update(...args);
      },
    };
    const r = await updateItem(racing, queue as never, T, id, { name: 'A' });
    expect(r.name).toBe('A');
    expect((await s.get(T, id))?.name).toBe('A');
    // A is new content again after B: embedded anew.
    expect(r.embedding_updated_at).toBeNull();
    expect(queue.sent).toEqual([{ type: 'embed', tenant: T, item_id: id }]);
    // An update with the item's own values whose content keeps changing under it (every try) is
    // written as a change in the end, embedded again: never refused.
    queue.sent.length = 0;
    let k = 0;
    const churning = {
      ...s,
      update: async (...args: Parameters<typeof s.update>) => {
        await s.update(T, id, { description: `churn ${k++}` }, now);
        return s.update(...args);
      },
    };
    const current = (await s.get(T, id))?.name as string;
    const kept = await updateItem(churning, queue as never, T, id, { name: current });
    expect(kept.name).toBe(current);
    expect(queue.sent).toEqual([{ type: 'embed', tenant: T, item_id: id }]);
  });

  it('compares again after up to two races, and takes the update as a change after the third (docs/api.md: "after three such races")', async () => {
    // Fewer tries would re-embed an item sent with its own name after one or two races; more
    // would keep comparing after the third.
    const { updateItem } = await import('../../shared/domain/items.ts');
    const s = db.stores.items;
    const T = 'three-races';
    const queue = { sent: [] as unknown[], send: async (_q: string, jobs: unknown[]) => void queue.sent.push(...jobs) };
    const now = Math.floor(Date.now() / 1000);
    const [item] = await s.create(T, [{ name: 'A' }], now);
    const id = (item as { id: number }).id;
    const racingTimes = (n: number) => {
      let k = 0;
      return {
        ...s,
        update: async (...args: Parameters<typeof s.update>) => {
          if (k < n) await s.update(T, id, { description: `race ${n}.${k++}` }, now);
          return s.update(...args);
        },
      };
    };
    await updateItem(racingTimes(2), queue as never, T, id, { name: 'A' });
    expect(queue.sent).toEqual([]);
    await updateItem(racingTimes(3), queue as never, T, id, { name: 'A' });
    expect(queue.sent).toEqual([{ type: 'embed', tenant: T, item_id: id }]);
  });

  it('compares metadata whatever its key order: the same object in another order keeps the embedding', async () => {
    // docs/api.md: metadata is compared whatever its key order; a comparison of the JSON text
    // as sent would take a reordered object for a change and embed the item again.
    const { updateItem } = await import('../../shared/domain/items.ts');
    const s = db.stores.items;
    const T = 'same-metadata';
    const queue = { sent: [] as unknown[], send: async (_q: string, jobs: unknown[]) => void queue.sent.push(...jobs) };
    const now = Math.floor(Date.now() / 1000);
    const [item] = await s.create(T, [{ name: 'A', metadata: { category: 'c', brand: 'b', tags: { x: 1, y: 2 } } }], now);
    const id = (item as { id: number }).id;
    await s.saveEmbedding(T, id, 1, new Float32Array([1, 0]), now);
    const same = await updateItem(s, queue as never, T, id, { metadata: { tags: { y: 2, x: 1 }, brand: 'b', category: 'c' } });
    expect(same.embedding_updated_at).not.toBeNull();
    expect(queue.sent).toEqual([]);
    // A value changed deep inside is a change.
    const changed = await updateItem(s, queue as never, T, id, { metadata: { tags: { y: 3, x: 1 }, brand: 'b', category: 'c' } });
    expect(changed.embedding_updated_at).toBeNull();
    expect(queue.sent).toEqual([{ type: 'embed', tenant: T, item_id: id }]);
  });

  it('a create or a content change whose embedding request cannot be queued still succeeds: the item stays marked for the sweep', async () => {
    // The comment on requestEmbeddings, and docs/api.md: the maintenance sweep re-queues items whose embedding is behind, so a lost message only delays.
    const { createItems, updateItem } = await import('../../shared/domain/items.ts');
    const s = db.stores.items;
    const T = 'queue-down';
    const queue = {
      send: async () => {
        throw new Error('queue unreachable');
      },
    };
    const created = await createItems(s, queue as never, T, { name: 'A' });
    expect(created).toMatchObject({ name: 'A', embedding_updated_at: null });
    const id = Number((created as { id: string }).id);
    expect((await s.get(T, id))?.name).toBe('A');
    expect(await updateItem(s, queue as never, T, id, { name: 'B' })).toMatchObject({ name: 'B', embedding_updated_at: null });
  });

  it('keeps the embedding of an item stored before content versions were kept (no content_version: version 1)', async () => {
    const { updateItem } = await import('../../shared/domain/items.ts');
    const s = db.stores.items;
    const T = 'no-content-version';
    const queue = { sent: [] as unknown[], send: async (_q: string, jobs: unknown[]) => void queue.sent.push(...jobs) };
    const now = Math.floor(Date.now() / 1000);
    const [item] = await s.create(T, [{ name: 'A' }], now);
    const id = (item as { id: number }).id;
    await s.saveEmbedding(T, id, 1, new Float32Array([1, 0]), now);
    await update(db.table, Item.key({ tenant: T, id }), { remove: ['content_version'] });
    expect((await s.getForEmbedding(T, id))?.contentVersion).toBe(1);
    const same = await updateItem(s, queue as never, T, id, { name: 'A' });
    expect(same.embedding_updated_at).not.toBeNull();
    expect(queue.sent).toEqual([]);
  });

  it('a description sent as it is keeps the embedding; a new one embeds the item again', async () => {
    // docs/api.md: embedding_updated_at is null from the moment an item's name, description or metadata changes.
    const { updateItem } = await import('../../shared/domain/items.ts');
    const s = db.stores.items;
    const T = 'same-description';
    const queue = { sent: [] as unknown[], send: async (_q: string, jobs: unknown[]) => void queue.sent.push(...jobs) };
    const now = Math.floor(Date.now() / 1000);
    const [item] = await s.create(T, [{ name: 'A', description: 'd' }], now);
    const id = (item as { id: number }).id;
    await s.saveEmbedding(T, id, 1, new Float32Array([1, 0]), now);
    const same = await updateItem(s, queue as never, T, id, { description: 'd' });
    expect(same.embedding_updated_at).not.toBeNull();
    expect(queue.sent).toEqual([]);
    const changed = await updateItem(s, queue as never, T, id, { description: 'e' });
    expect(changed).toMatchObject({ description: 'e', embedding_updated_at: null });
    expect(queue.sent).toEqual([{ type: 'embed', tenant: T, item_id: id }]);
  });
});

describe('the change index while an update moves an item in it', () => {
  it('lists the item at its old key or its new one (or both), never at neither', async () => {
    // An embedding saved moves the item's change row to the time of the save: DynamoDB writes the
    // new index entry and deletes the old one. A read of the changes meanwhile must still find
    // the item (the search delta's first read and the index status count on it).
    const s = db.stores.items;
    const T = 'moving-row';
    const base = Math.floor(Date.now() / 1000);
    const [item] = await s.create(T, [{ name: 'Storm lantern' }], base);
    const id = (item as { id: number }).id;
    const vector = new Float32Array(8).fill(0.5);
    let missing = 0;
    for (let round = 1; round <= 40; round++) {
      // Each round a new content version, so each save moves the row (its stamp one second on).
      await s.update(T, id, { name: `Storm lantern ${round}` }, base + 2 * round);
      // Listings sent one after another while the save is in flight.
      let done = false;
      const saved = s.saveEmbedding(T, id, round + 1, vector, base + 2 * round + 1).finally(() => (done = true));
      const listings: Promise<ChangeKey[]>[] = [];
      while (!done) {
        listings.push(s.changeKeysSince(T, 0, { besideReads: true }));
        await new Promise((r) => setImmediate(r));
      }
      const reads = await Promise.all(listings);
      expect(await saved).toBe('saved');
      missing += reads.filter((keys) => !keys.some((k) => k.id === id)).length;
    }
    expect(missing).toBe(0);
  }, 30_000);
});
