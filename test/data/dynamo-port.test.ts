import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ResourceNotFoundException, type TableDescription } from '@aws-sdk/client-dynamodb';
import type { HttpRequest } from '@smithy/types';
import { closeTable, makeTable, useLocalTransport } from '../../shared/data/client.ts';
import { getRow, isConditionFailure, queryPage } from '../../shared/data/ops.ts';
import { connectLocalDynamo, ensureTable, startDynalite, startDynaliteThread, type LocalDynamo } from '../../local/dynamo.ts';
import { PortHttpHandler, useDynamoPort } from '../../local/dynamo-port.ts';

let dynamo: LocalDynamo;
let sent: string[];
beforeAll(async () => {
  dynamo = await startDynaliteThread();
  await ensureTable(dynamo.endpoint, 'port-test');
  const conn = connectLocalDynamo();
  if (!conn) throw new Error('no local dynalite thread');
  const port = new PortHttpHandler(conn.port);
  sent = [];
  // The real handler, counting what goes through it.
  useLocalTransport(conn.endpoint, {
    handle: (req: HttpRequest) => {
      sent.push(String(req.headers['x-amz-target']));
      return port.handle(req);
    },
  });
});
afterAll(() => dynamo.close());

describe('local DynamoDB over a MessagePort', () => {
  it('carries reads, writes, conditional failures and service errors as HTTP would', async () => {
    const t = makeTable('port-test', dynamo.endpoint, 'us-east-1');
    await t.doc.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'p', sk: 'a', n: 1, text: 'é ✓ "quoted"' } }));
    expect(await getRow(t, { pk: 'p', sk: 'a' })).toEqual({ pk: 'p', sk: 'a', n: 1, text: 'é ✓ "quoted"' });
    const conflict = await t.doc.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'p', sk: 'a' }, ConditionExpression: 'attribute_not_exists(pk)' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConditionFailure(conflict)).toBe(true);
    const page = await queryPage(t, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'p' } });
    expect(page.items).toHaveLength(1);
    const missing = makeTable('no-such-table', dynamo.endpoint, 'us-east-1');
    await expect(getRow(missing, { pk: 'p', sk: 'a' })).rejects.toBeInstanceOf(ResourceNotFoundException);
    expect(sent).toEqual(['DynamoDB_20120810.PutItem', 'DynamoDB_20120810.GetItem', 'DynamoDB_20120810.PutItem', 'DynamoDB_20120810.Query', 'DynamoDB_20120810.GetItem']);
    closeTable(t);
    closeTable(missing);
  });

  it('leaves tables of any other endpoint on their own connection', async () => {
    const other = await startDynalite();
    try {
      await ensureTable(other.endpoint, 'elsewhere');
      const t = makeTable('elsewhere', other.endpoint, 'us-east-1');
      const before = sent.length;
      expect(await getRow(t, { pk: 'x', sk: 'y' })).toBeUndefined();
      expect(sent.length).toBe(before);
      closeTable(t);
    } finally {
      await other.close();
    }
  });

  it('fails calls in flight when the database thread goes away', async () => {
    const db = await startDynaliteThread();
    await ensureTable(db.endpoint, 'gone');
    const conn = connectLocalDynamo();
    if (!conn) throw new Error('no local dynalite thread');
    useDynamoPort(conn.endpoint, conn.port);
    const t = makeTable('gone', conn.endpoint, 'us-east-1');
    const calls = Array.from({ length: 20 }, (_, i) =>
      getRow(t, { pk: 'p', sk: String(i) }).then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    );
    await db.close();
    const outcomes = await Promise.all(calls);
    // Each call either finished before the close or failed; none is left hanging, and later
    // calls fail at once.
    expect(outcomes.every((o) => o === 'ok' || /local DynamoDB/.test(o))).toBe(true);
    await expect(getRow(t, { pk: 'p', sk: 'later' })).rejects.toThrow(/local DynamoDB: the connection closed/);
    closeTable(t);
    // The port number may serve another database now: new tables there use TCP again.
    const next = await startDynalite({ port: Number(new URL(conn.endpoint).port) });
    try {
      await ensureTable(next.endpoint, 'gone');
      const again = makeTable('gone', conn.endpoint, 'us-east-1');
      expect(await getRow(again, { pk: 'p', sk: 'x' })).toBeUndefined();
      closeTable(again);
    } finally {
      await next.close();
    }
  });
});

describe('the local DynamoDB thread on disk', () => {
  it('closes the LevelDB iterator of every Query, read to its end or stopped at its Limit', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { putAll, queryUpTo } = await import('../../shared/data/ops.ts');
    const dir = mkdtempSync(join(tmpdir(), 'dynalite-iterators-'));
    const db = await startDynaliteThread({ path: dir });
    try {
      await ensureTable(db.endpoint, 'iter-test');
      const t = makeTable('iter-test', db.endpoint, 'us-east-1');
      await putAll(
        t,
        Array.from({ length: 60 }, (_, i) => ({ pk: 'q', sk: String(i).padStart(3, '0'), gsi1pk: 'g', gsi1sk: String(i).padStart(3, '0'), i })),
      );
      const all = { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'q' } };
      expect((await queryPage(t, all)).items).toHaveLength(60);
      expect((await queryPage(t, { ...all, Limit: 5 })).items).toHaveLength(5);
      expect((await queryPage(t, { ...all, ScanIndexForward: false, Limit: 1 })).items[0]?.i).toBe(59);
      expect((await queryPage(t, { KeyConditionExpression: 'pk = :pk AND sk > :s', ExpressionAttributeValues: { ':pk': 'q', ':s': '999' } })).items).toEqual([]);
      expect(await queryUpTo(t, { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :g', ExpressionAttributeValues: { ':g': 'g' } }, 25)).toHaveLength(25);
      expect(await db.openIterators()).toBe(0);
      closeTable(t);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('table descriptions kept in the local DynamoDB thread', () => {
  it('answers for a table deleted and created again, or updated, from its new description', async () => {
    const { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand, QueryCommand, UpdateTableCommand } = await import('@aws-sdk/client-dynamodb');
    const db = await startDynaliteThread();
    const client = new DynamoDBClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      const attr = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });
      // As with DynamoDB, a table is used once ACTIVE and created again once its deletion is done.
      const settled = async (gone: boolean) => {
        for (let i = 0; i < 200; i++) {
          const status = await client.send(new DescribeTableCommand({ TableName: 'desc' })).then(
            (d) => d.Table?.TableStatus,
            (e: Error) => e.name,
          );
          if (gone ? status === 'ResourceNotFoundException' : status === 'ACTIVE') return;
          await new Promise((r) => setTimeout(r, 20));
        }
        throw new Error('the table did not settle');
      };
      await client.send(new CreateTableCommand({ TableName: 'desc', BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [attr('pk')], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] }));
      await settled(false);
      await client.send(new PutItemCommand({ TableName: 'desc', Item: { pk: { S: 'a' } } }));
      await client.send(new DeleteTableCommand({ TableName: 'desc' }));
      await settled(true);
      await client.send(
        new CreateTableCommand({
          TableName: 'desc',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [attr('pk'), attr('sk')],
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
        }),
      );
      await settled(false);
      // Under the first description this item would lack nothing; under the second it lacks sk.
      await expect(client.send(new PutItemCommand({ TableName: 'desc', Item: { pk: { S: 'a' } } }))).rejects.toThrow(/key/i);
      await client.send(new PutItemCommand({ TableName: 'desc', Item: { pk: { S: 'a' }, sk: { S: '1' } } }));
      expect((await client.send(new QueryCommand({ TableName: 'desc', KeyConditionExpression: 'pk = :a', ExpressionAttributeValues: { ':a': { S: 'a' } } }))).Items).toEqual([
        { pk: { S: 'a' }, sk: { S: '1' } },
      ]);
      // An update (and the status changes dynalite makes after it) shows at once too.
      await client.send(new UpdateTableCommand({ TableName: 'desc', BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 7, WriteCapacityUnits: 3 } }));
      let table: TableDescription | undefined;
      for (let i = 0; i < 100; i++) {
        table = (await client.send(new DescribeTableCommand({ TableName: 'desc' }))).Table;
        if (table?.TableStatus === 'ACTIVE') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(table).toMatchObject({ TableStatus: 'ACTIVE', ProvisionedThroughput: { ReadCapacityUnits: 7, WriteCapacityUnits: 3 } });
    } finally {
      client.destroy();
      await db.close();
    }
  });
});

describe('Query answers kept in the local DynamoDB thread', () => {
  it('answers a repeated Query from memory until a write touches the rows or the index it read, never with less than was acknowledged', async () => {
    const { DeleteCommand, UpdateCommand, BatchWriteCommand } = await import('@aws-sdk/lib-dynamodb');
    const db = await startDynaliteThread();
    try {
      await ensureTable(db.endpoint, 'kept-test');
      const conn = connectLocalDynamo();
      if (!conn) throw new Error('no local dynalite thread');
      useDynamoPort(conn.endpoint, conn.port);
      const t = makeTable('kept-test', conn.endpoint, 'us-east-1');
      const put = (row: Record<string, unknown>) => t.doc.send(new PutCommand({ TableName: t.tableName, Item: row }));
      // A change-index read as a search makes it (gsi4), a read of the table's rows, and one of another index.
      const changes = async () =>
        (await queryPage(t, { IndexName: 'gsi4', KeyConditionExpression: 'gsi2pk = :p AND gsi2sk > :s', ExpressionAttributeValues: { ':p': 'c', ':s': '0' } })).items.map((r) => r.sk);
      const rows = async () => (await queryPage(t, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'p' } })).items.map((r) => r.sk);
      const stats = () => db.queryCache();

      await put({ pk: 'p', sk: 'a', gsi2pk: 'c', gsi2sk: '1' });
      expect(await changes()).toEqual(['a']);
      const first = await stats();
      expect(await changes()).toEqual(['a']);
      expect(await changes()).toEqual(['a']);
      expect((await stats()).hits).toBe(first.hits + 2);

      // A row of another index only (as a search's analytics row, in gsi1): the change index's
      // answer stands, the table's rows are read again.
      expect(await rows()).toEqual(['a']);
      await put({ pk: 'p', sk: 'b', gsi1pk: 'x', gsi1sk: '1' });
      const before = await stats();
      expect(await changes()).toEqual(['a']);
      expect(await rows()).toEqual(['a', 'b']);
      const after = await stats();
      expect(after.hits).toBe(before.hits + 1);
      expect(after.misses).toBe(before.misses + 1);

      // Every kind of write that moves an index entry is seen by the next read.
      await put({ pk: 'p', sk: 'c', gsi2pk: 'c', gsi2sk: '2' });
      expect(await changes()).toEqual(['a', 'c']);
      await t.doc.send(new UpdateCommand({ TableName: t.tableName, Key: { pk: 'p', sk: 'a' }, UpdateExpression: 'SET gsi2sk = :s', ExpressionAttributeValues: { ':s': '3' } }));
      expect(await changes()).toEqual(['c', 'a']);
      await t.doc.send(new UpdateCommand({ TableName: t.tableName, Key: { pk: 'p', sk: 'c' }, UpdateExpression: 'REMOVE gsi2pk, gsi2sk' }));
      expect(await changes()).toEqual(['a']);
      await t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: { pk: 'p', sk: 'a' } }));
      expect(await changes()).toEqual([]);
      await t.doc.send(
        new BatchWriteCommand({
          RequestItems: { [t.tableName]: [{ PutRequest: { Item: { pk: 'p', sk: 'd', gsi2pk: 'c', gsi2sk: '4' } } }, { PutRequest: { Item: { pk: 'p', sk: 'e', gsi2pk: 'c', gsi2sk: '5' } } }] },
        }),
      );
      expect(await changes()).toEqual(['d', 'e']);
      expect(await rows()).toEqual(['b', 'c', 'd', 'e']);

      // Reads racing writes: each write, once acknowledged, is in every read sent after it.
      const written: string[] = ['d', 'e'];
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const sk = `w${String(i).padStart(2, '0')}`;
          const reading = changes();
          await put({ pk: 'p', sk, gsi2pk: 'c', gsi2sk: `6${sk}` });
          written.push(sk);
          const seen = await changes();
          expect(seen).toContain(sk);
          await reading;
        }),
      );
      expect((await changes()).sort()).toEqual(written.sort());

      // A table deleted and made again answers from its new rows only.
      const { DeleteTableCommand, DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
      const client = new DynamoDBClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
      await client.send(new DeleteTableCommand({ TableName: t.tableName }));
      client.destroy();
      for (let i = 0; i < 200; i++) {
        const gone = await changes().then(
          () => false,
          () => true,
        );
        if (gone) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await ensureTable(db.endpoint, 'kept-test');
      expect(await changes()).toEqual([]);
      expect(await rows()).toEqual([]);
      closeTable(t);
    } finally {
      await db.close();
    }
  });

  it("answers from memory exactly what dynalite answers (but the request id) after writes of every kind and changes of tables, whatever the table's indexes project", async () => {
    // After every write, each Query answered over the port (dynalite's answer kept, then the kept
    // one) is compared with dynalite's own answer over TCP, which nothing keeps.
    const db = await startDynaliteThread();
    try {
      await ensureTable(db.endpoint, 'ooo');
      const conn = connectLocalDynamo();
      if (!conn) throw new Error('no thread');
      let next = 0;
      const headers = (target: string) => ({
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${target}`,
        authorization: 'AWS4-HMAC-SHA256 Credential=local/20261130/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=abc',
        'x-amz-date': '20261130T000000Z',
      });
      const viaPort = (target: string, body: unknown) =>
        new Promise<{ status: number; headers: Record<string, string>; body: string }>((resolve) => {
          const id = next++;
          const on = (m: { id: number; status: number; headers: Record<string, string>; body: string }) => {
            if (m.id !== id) return;
            conn.port.off('message', on);
            resolve(m);
          };
          conn.port.on('message', on);
          conn.port.postMessage({ id, method: 'POST', path: '/', headers: headers(target), body: JSON.stringify(body) });
        });
      const viaTcp = async (target: string, body: unknown) => {
        const r = await fetch(db.endpoint, { method: 'POST', headers: headers(target), body: JSON.stringify(body) });
        const h: Record<string, string> = {};
        r.headers.forEach((v, k) => (h[k] = v));
        return { status: r.status, headers: h, body: await r.text() };
      };
      const strip = (h: Record<string, string>) => {
        const { 'x-amzn-requestid': _, date: _d, connection: _c, 'keep-alive': _k, ...rest } = h;
        return rest;
      };
      let n = 0;
      const write = (target: string, body: unknown) => (n++ % 2 ? viaPort(target, body) : viaTcp(target, body)).then((r) => expect(r.status, r.body).toBe(200));
      const str = (s: string) => ({ S: s });
      const queries: unknown[] = [];
      const check = async (label: string) => {
        for (const q of queries) {
          for (let k = 0; k < 2; k++) {
            const p = await viaPort('Query', q);
            const d = await viaTcp('Query', q);
            expect({ label, status: p.status, headers: strip(p.headers), body: p.body }).toEqual({ label, status: d.status, headers: strip(d.headers), body: d.body });
          }
        }
      };
      // The project's table: gsi4 (INCLUDE), gsi3 (KEYS_ONLY), gsi2 (ALL), the rows.
      const gsi = (IndexName: string, extra = {}) => ({ TableName: 'ooo', IndexName, KeyConditionExpression: 'gsi2pk = :p', ExpressionAttributeValues: { ':p': str('c') }, ...extra });
      queries.push(
        gsi('gsi4'),
        gsi('gsi2'),
        gsi('gsi4', { ReturnConsumedCapacity: 'INDEXES', ProjectionExpression: 'sk, active, secret' }),
        gsi('gsi4', { Select: 'COUNT', ScanIndexForward: false, Limit: 1 }),
        { TableName: 'ooo', IndexName: 'gsi3', KeyConditionExpression: 'gsi3pk = :p', ExpressionAttributeValues: { ':p': str('k') } },
        { TableName: 'ooo', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': str('p') }, ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' },
        { TableName: 'ooo', KeyConditionExpression: 'pk = :p', FilterExpression: 'secret = :s', ExpressionAttributeValues: { ':p': str('p'), ':s': str('2') } },
      );
      await check('empty');
      await write('PutItem', { TableName: 'ooo', Item: { pk: str('p'), sk: str('a'), gsi2pk: str('c'), gsi2sk: str('1'), gsi3pk: str('k'), gsi3sk: str('1'), active: str('yes'), secret: str('1') } });
      await check('put');
      await write('UpdateItem', { TableName: 'ooo', Key: { pk: str('p'), sk: str('a') }, UpdateExpression: 'SET active = :a', ExpressionAttributeValues: { ':a': str('no') } });
      await check('projected attribute, keys unchanged');
      await write('UpdateItem', { TableName: 'ooo', Key: { pk: str('p'), sk: str('a') }, UpdateExpression: 'SET secret = :a', ExpressionAttributeValues: { ':a': str('2') } });
      await check('unprojected attribute');
      await write('UpdateItem', { TableName: 'ooo', Key: { pk: str('p'), sk: str('a') }, UpdateExpression: 'SET big = :a', ExpressionAttributeValues: { ':a': str('x'.repeat(9000)) } });
      await check('size only (consumed capacity)');
      await write('BatchWriteItem', {
        RequestItems: { ooo: [{ PutRequest: { Item: { pk: str('p'), sk: str('b'), gsi2pk: str('c'), gsi2sk: str('2') } } }, { DeleteRequest: { Key: { pk: str('p'), sk: str('a') } } }] },
      });
      await check('batch');
      await write('DeleteItem', { TableName: 'ooo', Key: { pk: str('p'), sk: str('b') } });
      await check('delete');
      await write('DeleteItem', { TableName: 'ooo', Key: { pk: str('p'), sk: str('nothing') } });
      await check('delete of nothing');

      /** A table with a local index on l of this projection. */
      const lsiTable = (ProjectionType: 'KEYS_ONLY' | 'ALL') => ({
        TableName: 'lll',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: 'l', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        LocalSecondaryIndexes: [
          {
            IndexName: 'lsi',
            KeySchema: [
              { AttributeName: 'pk', KeyType: 'HASH' },
              { AttributeName: 'l', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType },
          },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      });
      // Its index KEYS_ONLY, read with Select ALL_ATTRIBUTES: dynalite reads the rows too.
      await viaTcp('CreateTable', lsiTable('KEYS_ONLY'));
      await new Promise((r) => setTimeout(r, 50));
      queries.push(
        { TableName: 'lll', IndexName: 'lsi', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': str('p') }, Select: 'ALL_ATTRIBUTES', ReturnConsumedCapacity: 'INDEXES' },
        { TableName: 'lll', IndexName: 'lsi', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': str('p') }, ConsistentRead: true, Select: 'ALL_ATTRIBUTES' },
      );
      await write('PutItem', { TableName: 'lll', Item: { pk: str('p'), sk: str('a'), l: str('1'), v: str('one') } });
      await check('lsi put');
      await write('UpdateItem', { TableName: 'lll', Key: { pk: str('p'), sk: str('a') }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': str('two') } });
      await check('lsi row attribute only');
      await write('PutItem', { TableName: 'lll', Item: { pk: str('p'), sk: str('b'), v: str('not in the lsi') } });
      await check('row outside the lsi');
      await write('UpdateTable', { TableName: 'lll', BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 } });
      await check('update table');
      await write('DeleteTable', { TableName: 'lll' });
      await check('deleted');
      await new Promise((r) => setTimeout(r, 50));
      await check('gone');
      await viaTcp('CreateTable', lsiTable('ALL'));
      await check('created again (ALL)');
      await new Promise((r) => setTimeout(r, 50));
      await write('PutItem', { TableName: 'lll', Item: { pk: str('p'), sk: str('c'), l: str('0'), v: str('three') } });
      await check('created again, a row');
      // Most of those answers came from memory.
      expect((await db.queryCache()).hits).toBeGreaterThan(100);
    } finally {
      await db.close();
    }
  });
});
