import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import '../../local/dynalite-indexes.mjs';
import { lookUp } from '../../local/dynalite-query-cache.mjs';

// The local DynamoDB stand-in writes an item's row and its index entries in one LevelDB batch
// (local/dynalite-indexes.mjs). dynalite wrote the entries first and the row after: a process that
// died in between (kill -9 during an import) left "ghost" items, listed by every index and missing
// from the table, which GET, PATCH and DELETE answered 404.

const require = createRequire(import.meta.url);
const db = require(join(dirname(require.resolve('dynalite')), 'db')) as {
  create(options: object): Store;
  createKey(item: Item, table: object): string;
  updateIndexes(store: Store, table: object, existing: Item | undefined, item: Item | null, cb: (err?: Error) => void): void;
};
type Item = Record<string, { S: string }>;
interface Store {
  db: { get(key: string): Promise<unknown>; keys(): AsyncIterable<string> };
  getItemDb(name: string): { put(key: string, value: Item, cb: (err?: Error) => void): void; del(key: string, cb: (err?: Error) => void): void };
}

const table = {
  TableName: 't',
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
    { AttributeName: 'g', AttributeType: 'S' },
  ],
  GlobalSecondaryIndexes: [{ IndexName: 'gsi', KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
};

const updateIndexes = (store: Store, existing: Item | undefined, item: Item | null) =>
  new Promise<void>((resolve, reject) => db.updateIndexes(store, table, existing, item, (err) => (err ? reject(err) : resolve())));
const keys = async (store: Store) => {
  const out: string[] = [];
  for await (const k of store.db.keys()) out.push(k);
  return out.sort();
};

describe('the local DynamoDB stand-in', () => {
  it("writes an item's row with its index entries, so a process that dies before dynalite's own row write leaves no entry without its row", async () => {
    const store = db.create({});
    const item: Item = { pk: { S: 'a' }, sk: { S: '1' }, g: { S: 'x' } };
    const key = db.createKey(item, table);
    // What dynalite does for a PutItem: the index entries, then (not reached here: the process died) the row.
    await updateIndexes(store, undefined, item);
    expect(await keys(store)).toEqual([expect.stringMatching(/^index-global~t~gsi~/), `item-t~${key}`]);
    expect(await store.db.get(`item-t~${key}`)).toEqual(item);
    // dynalite's row write then is answered as done; a later write of the row is made.
    const itemDb = store.getItemDb('t');
    await new Promise<void>((resolve, reject) => itemDb.put(key, item, (e) => (e ? reject(e) : resolve())));
    const moved: Item = { ...item, g: { S: 'y' } };
    await updateIndexes(store, item, moved);
    await new Promise<void>((resolve, reject) => itemDb.put(key, moved, (e) => (e ? reject(e) : resolve())));
    expect(await store.db.get(`item-t~${key}`)).toEqual(moved);
    expect((await keys(store)).filter((k) => k.startsWith('index-'))).toHaveLength(1);
    // A delete takes its entries and its row together.
    await updateIndexes(store, moved, null);
    expect(await keys(store)).toEqual([]);
  });

  it('moves the kept Query answers of the rows and indexes a write touches when it begins and again once it is applied', async () => {
    const store = db.create({});
    const signed = {
      'x-amz-target': 'DynamoDB_20120810.Query',
      'content-type': 'application/x-amz-json-1.0',
      authorization: 'AWS4-HMAC-SHA256 Credential=local/20261130/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=abc',
      'x-amz-date': '20261130T000000Z',
    };
    const ofIndex = JSON.stringify({ TableName: 't', IndexName: 'gsi', KeyConditionExpression: 'g = :g' });
    const keep = (text: string) => lookUp('POST', '/', signed, ofIndex)?.keep?.(200, {}, text);
    const kept = () => lookUp('POST', '/', signed, ofIndex)?.answer?.body;
    keep('before');
    expect(kept()).toBe('before');
    const item: Item = { pk: { S: 'a' }, sk: { S: '1' }, g: { S: 'x' } };
    // Read while the write's batch is under way: not kept (it may hold the write or not).
    const writing = updateIndexes(store, undefined, item);
    expect(kept()).toBeUndefined();
    keep('while writing');
    expect(kept()).toBeUndefined();
    await writing;
    expect(kept()).toBeUndefined();
    keep('written');
    expect(kept()).toBe('written');
    // A write that puts no entry of the index (no g) leaves its answers standing.
    await updateIndexes(store, undefined, { pk: { S: 'b' }, sk: { S: '1' } });
    expect(kept()).toBe('written');
    // A row dynalite writes itself (not written by the batch before it) moves the answers of the rows.
    const ofRows = JSON.stringify({ TableName: 't', KeyConditionExpression: 'pk = :p' });
    lookUp('POST', '/', signed, ofRows)?.keep?.(200, {}, 'rows');
    expect(lookUp('POST', '/', signed, ofRows)?.answer?.body).toBe('rows');
    const itemDb = store.getItemDb('t');
    await new Promise<void>((resolve, reject) => itemDb.put(db.createKey(item, table), { ...item, g: { S: 'z' } }, (e) => (e ? reject(e) : resolve())));
    expect(lookUp('POST', '/', signed, ofRows)?.answer).toBeUndefined();
  });

  it("writes a BatchWriteItem's puts with their index entries in one LevelDB batch, each reading the row it replaces in place, with dynalite's answers", async () => {
    const store = db.create({ createTableMs: 0 }) as Store & {
      db: Store['db'] & { batch: (...a: unknown[]) => unknown; getSync: (...a: unknown[]) => unknown; get: (...a: unknown[]) => unknown };
      getTable(name: string, cb: (err: Error | null, t?: { TableStatus: string }) => void): void;
    };
    const action =
      (name: string) =>
      (data: object): Promise<unknown> =>
        new Promise((resolve, reject) => require(join(dirname(require.resolve('dynalite')), 'actions', name))(store, data, (err: Error | null, out: unknown) => (err ? reject(err) : resolve(out))));
    await action('createTable')({ ...table, BillingMode: 'PAY_PER_REQUEST' });
    await expect.poll(() => new Promise((resolve) => store.getTable('t', (_e, t) => resolve(t?.TableStatus)))).toBe('ACTIVE');
    const put = (pk: string, g: string) => ({ PutRequest: { Item: { pk: { S: pk }, sk: { S: '1' }, g: { S: g } } } });
    await action('batchWriteItem')({ RequestItems: { t: [put('a', 'x'), put('b', 'x')] } });
    const batches = vi.spyOn(store.db, 'batch');
    const inPlace = vi.spyOn(store.db, 'getSync');
    const reads = vi.spyOn(store.db, 'get');
    // Two rows replaced (their entries move from x to y) and two new ones.
    await action('batchWriteItem')({ RequestItems: { t: [put('a', 'y'), put('b', 'y'), put('c', 'y'), put('d', 'x')] } });
    expect(batches).toHaveBeenCalledTimes(1);
    expect(inPlace).toHaveBeenCalledTimes(4);
    // (The table's description is read as before.)
    const rowReads = () => reads.mock.calls.filter(([k]) => String(k).startsWith('item-'));
    expect(rowReads()).toEqual([]);
    const all = await keys(store);
    expect(all.filter((k) => k.startsWith('item-t~'))).toHaveLength(4);
    const entries = all.filter((k) => k.startsWith('index-global~t~gsi~'));
    expect(entries).toHaveLength(4);
    // A replaced row's old entry is gone: three entries under y, one under x.
    const values = await Promise.all(entries.map((k) => store.db.get(k) as Promise<Item>));
    expect(values.map((v) => `${v.pk?.S}${v.g?.S}`).sort()).toEqual(['ay', 'by', 'cy', 'dx']);
    // A condition reads the row it replaces: the put of a row that is there fails, one that is not succeeds.
    const conditional = (pk: string) => action('putItem')({ TableName: 't', Item: { pk: { S: pk }, sk: { S: '1' }, g: { S: 'z' } }, Expected: { pk: { Exists: false } } });
    await expect(conditional('a')).rejects.toMatchObject({ body: { message: 'The conditional request failed' } });
    await conditional('e');
    // A GetItem reads as dynalite does (no lock held).
    reads.mockClear();
    expect(await action('getItem')({ TableName: 't', Key: { pk: { S: 'e' }, sk: { S: '1' } } })).toMatchObject({ Item: { g: { S: 'z' } } });
    expect(rowReads()).toHaveLength(1);
  });
});
