import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoItemStore } from '../../shared/data/items.ts';
import { getItem, listItems } from '../../shared/domain/items.ts';
import { listItemsQuery } from '../../shared/schemas/items.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/* The item list and GET (found by a review of the catalog, 2026-12-05). */

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

const query = (q: Record<string, string>) => listItemsQuery.parse(q);

describe('GET /v1/items', () => {
  it('a client following starting_after sees every item, one whose id was taken before a page was read and written after it included', async () => {
    const s = db.stores.items;
    const T = 'list-held';
    let allocated!: () => void;
    const gotId = new Promise<void>((r) => {
      allocated = r;
    });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // Request A: its id is taken (1), its row not written yet; B and C (ids 2 and 3) are written.
    const slow = s.create(T, [{ name: 'slow' }], 100, {
      reserved: async () => {
        allocated();
        await gate;
      },
    });
    await gotId;
    await s.create(T, [{ name: 'b' }], 100);
    await s.create(T, [{ name: 'c' }], 100);
    // The first page stops before id 1 (missing, and the item after it stored under 30 s ago): empty, no more yet.
    const first = await listItems(s, T, query({ limit: '1' }), 110);
    expect([first.data, first.has_more]).toEqual([[], false]);
    release();
    await slow;
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const p = await listItems(s, T, query({ limit: '1', ...(after !== undefined ? { starting_after: after } : {}) }), 110);
      seen.push(...p.data.map((r) => r.id));
      after = p.data.at(-1)?.id ?? after;
      if (!p.has_more) break;
    }
    expect(seen).toEqual(['1', '2', '3']);
    // A deleted item's id is passed at once (its tombstone tells), and any gap older than 30 s (a
    // create that failed after taking its ids).
    await s.delete(T, 2, 105);
    expect((await listItems(s, T, query({ limit: '10' }), 110)).data.map((r) => r.id)).toEqual(['1', '3']);
    await expect(
      s.create(T, [{ name: 'failed' }], 150, {
        reserved: async () => {
          throw new Error('crashed');
        },
      }),
    ).rejects.toThrow('crashed');
    await s.create(T, [{ name: 'next' }], 151);
    expect((await listItems(s, T, query({ limit: '10' }), 160)).data.map((r) => r.id)).toEqual(['1', '3']);
    expect((await listItems(s, T, query({ limit: '10' }), 190)).data.map((r) => r.id)).toEqual(['1', '3', '5']);
    // Filtered, it stops before the tenant's first id still being written, whoever's it is.
    const [cat] = await s.create(T, [{ name: 'shoe', metadata: { category: 'shoes' } }], 300);
    // 'later' has its id reserved (awaited, not a sleep), its row unwritten until the test calls write().
    let write!: () => void;
    const written = new Promise<void>((r) => (write = r));
    let reserved!: () => void;
    const hasReserved = new Promise<void>((r) => (reserved = r));
    const held = s.create(T, [{ name: 'later' }], 301, {
      reserved: () => {
        reserved();
        return written;
      },
    });
    await hasReserved;
    const [after4] = await s.create(T, [{ name: 'shoe 2', metadata: { category: 'shoes' } }], 302);
    const shoes = await listItems(s, T, query({ category: 'shoes' }), 303);
    expect(shoes.data.map((r) => r.id)).toEqual([String(cat?.id)]);
    write();
    await held;
    expect((await listItems(s, T, query({ category: 'shoes' }), 303)).data.map((r) => r.id)).toEqual([String(cat?.id), String(after4?.id)]);
  });

  it('a created window that holds nothing reads a bounded number of rows: the page ends where the read did, its cursor there', async () => {
    const T = 'list-scan';
    for (let i = 0; i < 21; i++)
      await db.stores.items.create(
        T,
        Array.from({ length: 100 }, (_, k) => ({ name: `n${i}-${k}` })),
        1000,
      );
    let queries = 0;
    const signed = {
      ...db.table.signed,
      query: (input: Parameters<typeof db.table.signed.query>[0]) => {
        queries++;
        return db.table.signed.query(input);
      },
    };
    const s = dynamoItemStore({ ...db.table, signed: signed as typeof db.table.signed });
    const page = await listItems(s, T, query({ created_after: '2000' }), 5000);
    // Until 2026-12-05: 43 Queries of 50 rows (a million items, some 20,000: a 503). Since
    // 2026-12-06 one more: the ids below where the read stopped read back for one still being
    // written (an old row at once here), which the cursor must not pass; and one row past the
    // bound, read to tell whether anything lies there.
    expect(queries).toBeLessThanOrEqual(6);
    expect(page).toMatchObject({ data: [], has_more: true, next_cursor: '2000' });
    const rest = await listItems(s, T, query({ created_after: '2000', starting_after: '2000' }), 5000);
    expect(rest).toMatchObject({ data: [], has_more: false, next_cursor: null });
    // A window that matches: its page fills as before.
    expect((await listItems(s, T, query({ created_after: '1000', limit: '3', starting_after: '1999' }), 5000)).data.map((r) => r.id)).toEqual(['2000', '2001', '2002']);
  });

  it('a filtered read that ends at its bound on the last row answers no cursor (nothing lies past it)', async () => {
    const s = db.stores.items;
    const T = 'list-bound-end';
    for (let i = 0; i < 20; i++)
      await s.create(
        T,
        Array.from({ length: 100 }, (_, k) => ({ name: `n${i}-${k}` })),
        1000,
      );
    // 2,000 rows, none in the window: the read fills its bound on the catalog's last row.
    const page = await listItems(s, T, query({ created_after: '2000' }), 5000);
    expect(page).toMatchObject({ data: [], has_more: false, next_cursor: null });
    // One item more past the bound: the page ends there, its cursor leading on to it.
    const [late] = await s.create(T, [{ name: 'late' }], 3000);
    const next = await listItems(s, T, query({ created_after: '2000' }), 5000);
    expect(next).toMatchObject({ data: [], has_more: true, next_cursor: '2000' });
    expect((await listItems(s, T, query({ created_after: '2000', starting_after: '2000' }), 5000)).data.map((r) => r.id)).toEqual([String(late?.id)]);
  });

  it('lists only the items whose category is the one asked for, a category longer than 256 characters included', async () => {
    const s = db.stores.items;
    const long = 'x'.repeat(300);
    // The literal text a long category is indexed under is a category too.
    const literal = `#sha256:${createHash('sha256').update(long).digest('hex')}`;
    const [a] = await s.create('cat', [{ name: 'long', metadata: { category: long } }], 1);
    const [b] = await s.create('cat', [{ name: 'literal', metadata: { category: literal } }], 1);
    expect((await listItems(s, 'cat', query({ category: long }), 1000)).data.map((r) => r.id)).toEqual([String(a?.id)]);
    expect((await listItems(s, 'cat', query({ category: literal }), 1000)).data.map((r) => r.id)).toEqual([String(b?.id)]);
  });

  it('a page of large items fits the answer a Lambda function may give (6 MB), the rest on the next page', async () => {
    const s = db.stores.items;
    const T = 'list-large';
    // Items as large as create takes: 1,000 characters of name, 20,000 of description, 16 KiB of
    // metadata (quotes, which the body's JSON string inside Lambda's answer escapes again).
    const metadata = { category: 'big', k: '"'.repeat(8000) };
    const big = (i: number) => ({ name: '\u{1F600}'.repeat(999) + String(i % 10), description: '\u{1F600}'.repeat(20_000), metadata });
    for (let b = 0; b < 10; b++)
      await s.create(
        T,
        Array.from({ length: 10 }, (_, i) => big(b * 10 + i)),
        100,
      );
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const p = await listItems(s, T, query({ limit: '100', ...(after !== undefined ? { starting_after: after } : {}) }), 1000);
      // As Lambda writes the answer: the body is a JSON string inside its JSON.
      expect(Buffer.byteLength(JSON.stringify({ statusCode: 200, body: JSON.stringify(p) }))).toBeLessThan(6 * 1024 * 1024);
      seen.push(...p.data.map((r) => r.id));
      if (!p.has_more) break;
      expect(p.next_cursor).toBe(p.data.at(-1)?.id);
      after = p.next_cursor as string;
    }
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 1)));
    // Filtered, likewise.
    const first = await listItems(s, T, query({ limit: '100', category: 'big' }), 1000);
    expect(first.has_more).toBe(true);
    expect(first.data.length).toBeLessThan(100);
  });
});

describe('GET /v1/items/{id}', () => {
  it('reads consistently: right after the 201 of its create, the item is found', async () => {
    // An eventual read that has not seen the write of a moment ago (as DynamoDB's may).
    const signed = { ...db.table.signed, getItem: (input: Parameters<typeof db.table.signed.getItem>[0]) => (input.ConsistentRead ? db.table.signed.getItem(input) : Promise.resolve({})) };
    const s = dynamoItemStore({ ...db.table, signed: signed as typeof db.table.signed });
    const [made] = await s.create('get-fresh', [{ name: 'x' }], 1);
    await expect(getItem(s, 'get-fresh', made?.id as number)).resolves.toMatchObject({ name: 'x' });
  });
});
