import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
});
