import { DynamoDBClient, GetItemCommand, TransactWriteItemsCommand, type TransactWriteItemsCommandInput } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable, startDynalite, type LocalDynamo } from '../../local/dynamo.ts';

// TransactWriteItems in the local stand-in (local/dynalite-transactions.mjs) with its
// ClientRequestToken, which the SDK sets once per call and sends again with each retry: DynamoDB
// answers a retry of a transaction that succeeded with success and writes nothing again, for 10
// minutes. A retry (a write timed out on the port, local/dynamo-port.ts; a 5xx) applied it twice.

let db: LocalDynamo;
let client: DynamoDBClient;
const TABLE = 'transactions-test';

beforeAll(async () => {
  db = await startDynalite();
  await ensureTable(db.endpoint, TABLE);
  client = new DynamoDBClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});

afterAll(async () => {
  client.destroy();
  await db.close();
});

/** A control record created once (its condition) and a counter added to, as one transaction. */
const transaction = (token: string, pk: string): TransactWriteItemsCommandInput => ({
  ClientRequestToken: token,
  TransactItems: [
    { Put: { TableName: TABLE, Item: { pk: { S: pk }, sk: { S: 'record' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
    { Update: { TableName: TABLE, Key: { pk: { S: pk }, sk: { S: 'counter' } }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': { N: '1' } } } },
  ],
});

const counter = async (pk: string) => (await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk }, sk: { S: 'counter' } } }))).Item?.n?.N;

describe('a TransactWriteItems sent again with its ClientRequestToken', () => {
  it('answers success and writes nothing again (until this fix its condition failed on its own first write, and an ADD counted twice)', async () => {
    await client.send(new TransactWriteItemsCommand(transaction('token-1', 'a')));
    await expect(client.send(new TransactWriteItemsCommand(transaction('token-1', 'a')))).resolves.toBeDefined();
    expect(await counter('a')).toBe('1');
  });

  it('is refused with IdempotentParameterMismatchException when the token comes with other writes', async () => {
    await client.send(new TransactWriteItemsCommand(transaction('token-2', 'b')));
    await expect(client.send(new TransactWriteItemsCommand(transaction('token-2', 'c')))).rejects.toMatchObject({ name: 'IdempotentParameterMismatchException' });
    expect(await counter('c')).toBeUndefined();
  });

  it('runs again under a new token, as a new transaction (its condition fails)', async () => {
    await client.send(new TransactWriteItemsCommand(transaction('token-3', 'd')));
    await expect(client.send(new TransactWriteItemsCommand(transaction('token-4', 'd')))).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    expect(await counter('d')).toBe('1');
  });
});
