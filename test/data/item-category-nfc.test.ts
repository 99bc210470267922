import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CategoryRekey, Counter, Item } from '../../shared/data/entities.ts';
import { dynamoItemStore } from '../../shared/data/items.ts';
import { OLD_CODE_SETTLE_SECONDS } from '../../shared/domain/deploys.ts';
import { getRow, putAll, update } from '../../shared/data/ops.ts';
import { listItems } from '../../shared/domain/items.ts';
import { listItemsQuery } from '../../shared/schemas/items.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { interceptSigned, testTable, type TestTable } from '../helpers/table.ts';

/*
 * The item listing's `category` compares categories in Unicode NFC, as search's filters and
 * recommendations' `category` do (review of 2026-12-07: it compared them as sent, so "Café" with e
 * and a combining accent was not listed under a composed "Café", nor the other way round).
 */

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

const COMPOSED = 'Caf\u00e9';
const DECOMPOSED = 'Cafe\u0301';
const { byCategory } = Item.indexes;

/** Keys the item's category index as the code before 2026-12-08 did: the category as sent. */
const keyAsSent = (tenant: string, id: number, category: string) => update(db.table, Item.key({ tenant, id }), { set: byCategory.key({ tenant, category: keyed(category), id }) });
const keyed = (c: string) => (c.length <= 256 ? c : `#sha256:${createHash('sha256').update(c).digest('hex')}`);
const ids = async (tenant: string, category: string, extra: { limit?: number; after?: number; createdAfter?: number } = {}) =>
  (await db.stores.items.list(tenant, { limit: extra.limit ?? 50, category, ...extra })).rows.map((r) => r.id);
const indexKey = async (tenant: string, id: number) => (await getRow(db.table, Item.key({ tenant, id }), { consistent: true }))?.[byCategory.pkAttr];

describe('GET /v1/items?category= compares categories in NFC', () => {
  it('an item written decomposed is listed under the composed spelling, and the other way round; its category stays as sent', async () => {
    const s = db.stores.items;
    const T = 'nfc-new';
    const [d, c] = await s.create(
      T,
      [
        { name: 'decomposed', metadata: { category: DECOMPOSED } },
        { name: 'composed', metadata: { category: COMPOSED } },
      ],
      100,
    );
    expect(await ids(T, COMPOSED)).toEqual([d?.id, c?.id]);
    expect(await ids(T, DECOMPOSED)).toEqual([d?.id, c?.id]);
    const page = await listItems(s, T, listItemsQuery.parse({ category: COMPOSED }), 1000);
    expect(page.data.map((r) => r.metadata.category)).toEqual([DECOMPOSED, COMPOSED]);
    // An update's replacement metadata is keyed alike.
    await s.update(T, c?.id as number, { metadata: { category: 'Cre\u0300me' } }, 200);
    expect(await ids(T, 'Cr\u00e8me')).toEqual([c?.id]);
    expect(await ids(T, COMPOSED)).toEqual([d?.id]);
  });

  it('an item stored before, keyed as sent, is listed under either spelling, paging by id across both keys', async () => {
    const s = db.stores.items;
    const T = 'nfc-old';
    const made = await s.create(
      T,
      Array.from({ length: 6 }, (_, i) => ({ name: `i${i}`, metadata: { category: i % 2 ? COMPOSED : DECOMPOSED } })),
      100,
    );
    const all = made.map((m) => m.id);
    // The decomposed ones as the code before keyed them.
    for (const m of made.filter((_, i) => i % 2 === 0)) await keyAsSent(T, m.id, DECOMPOSED);
    expect(await indexKey(T, all[0] as number)).toBe(byCategory.pk({ tenant: T, category: DECOMPOSED }));
    // A listing of a category with one spelling only (read under its one key) first.
    expect(await ids(T, 'plain')).toEqual([]);
    expect(await ids(T, COMPOSED)).toEqual(all);
    expect(await ids(T, DECOMPOSED)).toEqual(all);
    for (const spelling of [COMPOSED, DECOMPOSED]) {
      const seen: number[] = [];
      let after: number | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const p = await s.list(T, { limit: 2, category: spelling, ...(after !== undefined ? { after } : {}) });
        seen.push(...p.rows.map((r) => r.id));
        if (!p.hasMore) break;
        after = p.rows.at(-1)?.id;
      }
      expect(seen).toEqual(all);
    }
    // Filtered by a created window too.
    expect(await ids(T, COMPOSED, { createdAfter: 100, after: all[1] as number, limit: 3 })).toEqual(all.slice(2, 5));
  });

  it("a filtered page's bounded read that stops in one key's partition ends there, not past rows of that partition it did not read", async () => {
    const T = 'nfc-bounded';
    // 2,100 items stored before, keyed as sent (decomposed), created at 100 but one, created at 200;
    // one item written since (keyed in NFC), created at 200, after them all.
    const before = Array.from({ length: 2100 }, (_, i) => {
      const id = i + 1;
      const created = id === 2050 ? 200 : 100;
      const item = { id, name: `old ${id}`, metadata: { category: DECOMPOSED }, active: true, created, updated_at: created, embedding_updated_at: null };
      return { ...Item.keys({ tenant: T, id, category: DECOMPOSED, changed_at: created, pending_since: created }), ...item, content_version: 1, embedded_version: 0 };
    });
    await putAll(db.table, before);
    await update(db.table, Counter.key({ tenant: T, counter: 'item' }), { set: { value: 2200 } });
    const [fresh] = await db.stores.items.create(T, [{ name: 'new', metadata: { category: COMPOSED } }], 200);
    // The read of the old key stops after 2,000 rows (FILTERED_LIST_READ): the page ends there, though
    // the new key's partition was read whole, and the next page reads on from it.
    const first = await db.stores.items.list(T, { limit: 10, category: COMPOSED, createdAfter: 200 });
    expect(first).toEqual({ rows: [], hasMore: true, next: 2000 });
    const second = await db.stores.items.list(T, { limit: 10, category: COMPOSED, createdAfter: 200, after: 2000 });
    expect([second.rows.map((r) => r.id), second.hasMore]).toEqual([[2050, fresh?.id], false]);
  });

  it('a category longer than 256 characters (keyed by its digest) too, the digest itself a category of its own', async () => {
    const s = db.stores.items;
    const T = 'nfc-long';
    const long = (c: string) => `${c} ${'x'.repeat(300)}`;
    const literal = keyed(long(COMPOSED));
    const [old, fresh, lit] = await s.create(
      T,
      [
        { name: 'old', metadata: { category: long(DECOMPOSED) } },
        { name: 'new', metadata: { category: long(DECOMPOSED) } },
        { name: 'literal', metadata: { category: literal } },
      ],
      100,
    );
    await keyAsSent(T, old?.id as number, long(DECOMPOSED));
    expect(await ids(T, long(COMPOSED))).toEqual([old?.id, fresh?.id]);
    expect(await ids(T, long(DECOMPOSED))).toEqual([old?.id, fresh?.id]);
    expect(await ids(T, literal)).toEqual([lit?.id]);
  });

  it("the maintenance pass's re-keying finds a stored spelling that is neither the one asked for nor its NFD, and leaves the category as sent", async () => {
    const s = db.stores.items;
    const T = 'nfc-rekey';
    // è composed, û decomposed: NFC is both composed, NFD both decomposed.
    const mixed = 'Cr\u00e8me bru\u0302le\u0301e';
    const composed = mixed.normalize('NFC');
    const made = await s.create(
      T,
      Array.from({ length: 5 }, (_, i) => ({ name: `m${i}`, metadata: { category: mixed } })),
      100,
    );
    for (const m of made) await keyAsSent(T, m.id, mixed);
    expect(await ids(T, composed)).toEqual([]);
    const now = 10_000;
    // Two rows a step: three steps read the catalog.
    expect(await s.indexCategoriesInNfc(T, now, 2)).toEqual({ rekeyed: 2, done: false });
    expect(await ids(T, composed)).toEqual(made.slice(0, 2).map((m) => m.id));
    await s.indexCategoriesInNfc(T, now + 60, 2);
    // The code before, still running in a function deployed earlier, keys a row as sent after the scan passed it.
    await keyAsSent(T, made[0]?.id as number, mixed);
    expect(await s.indexCategoriesInNfc(T, now + 120, 2)).toEqual({ rekeyed: 1, done: false });
    expect(await ids(T, composed)).toEqual(made.slice(1).map((m) => m.id));
    // Not done until a scan that started once such writes surely stopped has looked again.
    expect(await s.indexCategoriesInNfc(T, now + 180, 2)).toEqual({ rekeyed: 0, done: false });
    const settled = now + OLD_CODE_SETTLE_SECONDS;
    let rekeyed = 0;
    let done = false;
    for (let step = 0; step < 5 && !done; step++) ({ rekeyed, done } = await s.indexCategoriesInNfc(T, settled + step * 60, 2).then((r) => ({ rekeyed: rekeyed + r.rekeyed, done: r.done })));
    expect({ rekeyed, done }).toEqual({ rekeyed: 1, done: true });
    expect(await ids(T, composed)).toEqual(made.map((m) => m.id));
    expect(await indexKey(T, made[0]?.id as number)).toBe(byCategory.pk({ tenant: T, category: composed }));
    expect((await s.get(T, made[0]?.id as number))?.metadata.category).toBe(mixed);
    expect(await ids(T, mixed.normalize('NFD'))).toEqual(made.map((m) => m.id));
    // Done: a step reads its mark alone.
    await keyAsSent(T, made[1]?.id as number, mixed);
    expect(await s.indexCategoriesInNfc(T, settled + 3600, 2)).toEqual({ rekeyed: 0, done: true });
  });

  it("once a tenant's re-keying is done, a listing reads the NFC key alone; before, the old keys too", async () => {
    const T = 'nfc-done';
    const [made] = await db.stores.items.create(T, [{ name: 'old', metadata: { category: DECOMPOSED } }], 100);
    await keyAsSent(T, made?.id as number, DECOMPOSED);
    const keysRead: string[] = [];
    const s = dynamoItemStore(
      interceptSigned<{ ExpressionAttributeValues?: Record<string, { S?: string }> }>(db.table, 'query', (params, call) => {
        keysRead.push(String(params.ExpressionAttributeValues?.[':pk']?.S));
        return call();
      }),
    );
    const listed = async () => (await s.list(T, { limit: 10, category: COMPOSED })).rows.map((r) => r.id);
    expect(await listed()).toEqual([made?.id]);
    expect(keysRead).toEqual([byCategory.pk({ tenant: T, category: DECOMPOSED }), byCategory.pk({ tenant: T, category: COMPOSED })]);
    // Re-keyed by the maintenance pass's store, not this one: the listing finds it done itself.
    const pass = db.stores.items;
    for (let step = 0; step < 5; step++) await pass.indexCategoriesInNfc(T, 100 + step * OLD_CODE_SETTLE_SECONDS, 100);
    expect(await pass.indexCategoriesInNfc(T, 100 + 5 * OLD_CODE_SETTLE_SECONDS, 100)).toEqual({ rekeyed: 0, done: true });
    // The listing that finds it done still reads the old key; the next ones do not.
    expect(await listed()).toEqual([made?.id]);
    keysRead.length = 0;
    expect(await listed()).toEqual([made?.id]);
    expect(keysRead).toEqual([byCategory.pk({ tenant: T, category: COMPOSED })]);
  });

  it('a category alike in NFC and NFD (an ASCII one, most) is listed with one Query and no other read while the re-keying is pending', async () => {
    const T = 'nfc-ascii';
    const [made] = await db.stores.items.create(T, [{ name: 'tent', metadata: { category: 'tents' } }], 100);
    const calls: string[] = [];
    const counted = (t: TableRef, op: string) =>
      interceptSigned(t, op, (_params, call) => {
        calls.push(op);
        return call();
      });
    const s = dynamoItemStore(counted(counted(db.table, 'query'), 'getItem'));
    expect((await s.list(T, { limit: 10, category: 'tents' })).rows.map((r) => r.id)).toEqual([made?.id]);
    expect((await s.list(T, { limit: 10, category: 'tents', createdAfter: 50 })).rows.map((r) => r.id)).toEqual([made?.id]);
    expect(calls).toEqual(['query', 'query']);
  });

  it("once a tenant's re-keying is done, the pass's later steps for it read nothing", async () => {
    const T = 'nfc-done-pass';
    await db.stores.items.create(T, [{ name: 'a', metadata: { category: COMPOSED } }], 100);
    let marksRead = 0;
    const s = dynamoItemStore(
      interceptSigned<{ Key: Record<string, { S?: string }> }>(db.table, 'getItem', (params, call) => {
        if (params.Key.sk?.S === String(CategoryRekey.key({ tenant: T }).sk)) marksRead++;
        return call();
      }),
    );
    let done = false;
    for (let step = 0; step < 5 && !done; step++) ({ done } = await s.indexCategoriesInNfc(T, 100 + step * OLD_CODE_SETTLE_SECONDS, 100));
    expect(done).toBe(true);
    // Each pass steps every tenant, every minute, for good: a done tenant's step costs no read.
    marksRead = 0;
    for (let pass = 1; pass <= 3; pass++) expect(await s.indexCategoriesInNfc(T, 100 + 6 * OLD_CODE_SETTLE_SECONDS + pass * 60, 100)).toEqual({ rekeyed: 0, done: true });
    expect(marksRead).toBe(0);
  });

  it("the re-keying's write leaves an item deleted or given another category between its read and its write as that change left it", async () => {
    const T = 'nfc-race';
    const [gone, moved, kept] = await db.stores.items.create(
      T,
      ['gone', 'moved', 'kept'].map((name) => ({ name, metadata: { category: DECOMPOSED } })),
      100,
    );
    for (const m of [gone, moved, kept]) await keyAsSent(T, m?.id as number, DECOMPOSED);
    const keyOf = (id: number | undefined) => String(Item.key({ tenant: T, id: id as number }).sk);
    // Just before the step's write of each, a client's DELETE of one, and an update of another's category.
    const s = dynamoItemStore(
      interceptSigned<{ Key: Record<string, { S?: string }> }>(db.table, 'updateItem', async (params, call) => {
        const sk = params.Key.sk?.S;
        if (sk === keyOf(gone?.id)) await db.stores.items.delete(T, gone?.id as number, 200);
        if (sk === keyOf(moved?.id)) await db.stores.items.update(T, moved?.id as number, { metadata: { category: 'Th\u00e9' } }, 200);
        return call();
      }),
    );
    expect(await s.indexCategoriesInNfc(T, 30_000, 10)).toEqual({ rekeyed: 1, done: false });
    expect(await db.stores.items.get(T, gone?.id as number)).toBeUndefined();
    expect(await getRow(db.table, Item.key({ tenant: T, id: gone?.id as number }), { consistent: true })).toBeUndefined();
    expect(await indexKey(T, moved?.id as number)).toBe(byCategory.pk({ tenant: T, category: 'Th\u00e9' }));
    expect(await ids(T, COMPOSED)).toEqual([kept?.id]);
    expect(await ids(T, 'The\u0301')).toEqual([moved?.id]);
  });

  it("a step reads no further page past the pass's budget (`until`), and the next step goes on from there", async () => {
    const T = 'nfc-until';
    const made = await db.stores.items.create(
      T,
      Array.from({ length: 6 }, (_, i) => ({ name: `u${i}`, metadata: { category: DECOMPOSED } })),
      100,
    );
    for (const m of made) await keyAsSent(T, m.id, DECOMPOSED);
    // Large items: DynamoDB's 1 MB ends each page of the catalog after 2 rows.
    const s = dynamoItemStore(
      interceptSigned<{ Limit?: number; ExpressionAttributeValues?: Record<string, { S?: string }> }>(db.table, 'query', (params, call) => {
        if (params.ExpressionAttributeValues?.[':pk']?.S === String(Item.key({ tenant: T, id: 1 }).pk)) params.Limit = Math.min(params.Limit ?? 2, 2);
        return call();
      }),
    );
    const rekeyedIds = async () =>
      (await Promise.all(made.map(async (m) => ((await indexKey(T, m.id)) === byCategory.pk({ tenant: T, category: COMPOSED }) ? m.id : undefined)))).filter((id) => id !== undefined);
    // The budget already spent: one page (ids 1-2) of the 5,000 rows a step may read.
    expect(await s.indexCategoriesInNfc(T, 40_000, 5_000, performance.now())).toEqual({ rekeyed: 2, done: false });
    expect(await rekeyedIds()).toEqual(made.slice(0, 2).map((m) => m.id));
    expect(await s.indexCategoriesInNfc(T, 40_060, 5_000)).toEqual({ rekeyed: 4, done: false });
    expect(await rekeyedIds()).toEqual(made.map((m) => m.id));
  });

  it('a scan under way when the code before surely stopped looks again only at the ids it had passed by then', async () => {
    const s = db.stores.items;
    const T = 'nfc-recheck';
    const made = await s.create(
      T,
      Array.from({ length: 5 }, (_, i) => ({ name: `r${i}`, metadata: { category: DECOMPOSED } })),
      100,
    );
    for (const m of made) await keyAsSent(T, m.id, DECOMPOSED);
    const now = 20_000;
    await s.indexCategoriesInNfc(T, now, 2);
    await s.indexCategoriesInNfc(T, now + 60, 2);
    // Written as sent behind the scan (id 1) and ahead of it (id 5: its first look is still to come).
    await keyAsSent(T, made[0]?.id as number, DECOMPOSED);
    const settled = now + OLD_CODE_SETTLE_SECONDS;
    // Past the settle time the scan ends (id 5), then looks again at ids 1 to 4 only, and is done.
    expect(await s.indexCategoriesInNfc(T, settled, 2)).toEqual({ rekeyed: 1, done: false });
    expect(await s.indexCategoriesInNfc(T, settled + 60, 2)).toEqual({ rekeyed: 1, done: false });
    expect(await s.indexCategoriesInNfc(T, settled + 120, 2)).toEqual({ rekeyed: 0, done: true });
    for (const m of made) expect(await indexKey(T, m.id)).toBe(byCategory.pk({ tenant: T, category: COMPOSED }));
  });
});
