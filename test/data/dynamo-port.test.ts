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
