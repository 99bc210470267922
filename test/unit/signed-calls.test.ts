import { ConditionalCheckFailedException, DynamoDBClient, DynamoDBServiceException, GetItemCommand, ProvisionedThroughputExceededException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { HttpRequest, HttpResponse } from '@smithy/types';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { dropLocalTransport, makeTable, useLocalTransport, type LocalTransport } from '../../shared/data/client.ts';
import { signedCalls } from '../../shared/data/signed.ts';
import { DeadlinePassed, deadlineSignal, withinDeadline } from '../../shared/deadline.ts';
import { sleep } from '../../shared/retry.ts';
import { serveLoopback } from '../helpers/loopback.ts';
import { credentials, region, verifySignature } from '../helpers/sigv4.ts';

/**
 * A DynamoDB stand-in over real HTTP: it checks each request's SigV4 signature and its clock as
 * DynamoDB does, records it, and answers from a script (default: an empty 200).
 */
type Answer = { status: number; body: unknown } | 'reset';
let server: Awaited<ReturnType<typeof serveLoopback>>;
let base = '';
let script: Answer[] = [];
let serverClockOffset = 0;
const seen: { target: string; body: unknown; problem?: string }[] = [];
/** Called as each request arrives (before it is answered). */
let onRequest: (() => void) | undefined;

beforeAll(async () => {
  server = await serveLoopback((req, body, res) => {
    const now = Date.now() + serverClockOffset;
    const sent = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(String(req.headers['x-amz-date']));
    const sentAt = sent ? Date.UTC(+sent[1]!, +sent[2]! - 1, +sent[3]!, +sent[4]!, +sent[5]!, +sent[6]!) : NaN;
    const problem = verifySignature(req, body, 'dynamodb') ?? (Math.abs(sentAt - now) > 300_000 ? 'signature expired' : undefined);
    seen.push({ target: String(req.headers['x-amz-target']), body: JSON.parse(body.toString() || 'null'), ...(problem ? { problem } : {}) });
    onRequest?.();
    const reply = (status: number, b: unknown) => res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', date: new Date(now).toUTCString() }).end(JSON.stringify(b));
    if (problem) return void reply(400, { __type: 'com.amazon.coral.service#InvalidSignatureException', message: problem });
    const answer = script.shift() ?? { status: 200, body: {} };
    if (answer === 'reset') return void req.socket.destroy();
    reply(answer.status, answer.body);
  });
  base = server.base;
});
afterAll(() => server.close());
beforeEach(() => {
  seen.length = 0;
  script = [];
  serverClockOffset = 0;
  onRequest = undefined;
});

const clientFor = (extra: { secretAccessKey?: string } = {}) => {
  const requestHandler = new NodeHttpHandler();
  const client = new DynamoDBClient({ region, endpoint: base, credentials: { ...credentials, ...extra }, maxAttempts: 3, requestHandler });
  return { client, calls: signedCalls(client, requestHandler, base) };
};
const throttled = { status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'slow down' } };

describe('the DynamoDB stand-in checks signatures like AWS', () => {
  it('accepts the SDK client and rejects a wrong secret', async () => {
    await clientFor().client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }));
    expect(seen).toEqual([{ target: 'DynamoDB_20120810.GetItem', body: { TableName: 't', Key: { pk: { S: 'a' } } } }]);
    await expect(clientFor({ secretAccessKey: 'nope' }).client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }))).rejects.toThrow('signature mismatch');
  });
});

describe('serving reads as plain signed requests', () => {
  it('sends what the SDK would, signed, and answers in its shapes (binary values as bytes)', async () => {
    const { calls } = clientFor();
    const bin = Buffer.from([1, 2, 250]).toString('base64');
    script = [
      { status: 200, body: { Item: { pk: { S: 'a' }, n: { N: '1.5' }, b: { B: bin }, bs: { BS: [bin] }, m: { M: { l: { L: [{ B: bin }, { BOOL: true }] } } } } } },
      { status: 200, body: { Items: [{ pk: { S: 'a' }, sk: { S: '1' } }], Count: 1, ScannedCount: 1, LastEvaluatedKey: { pk: { S: 'a' }, sk: { S: '1' } } } },
    ];
    const got = await calls.getItem({ TableName: 't', Key: { pk: { S: 'a' } }, ConsistentRead: true });
    const bytes = new Uint8Array([1, 2, 250]);
    expect(got.Item).toEqual({ pk: { S: 'a' }, n: { N: '1.5' }, b: { B: bytes }, bs: { BS: [bytes] }, m: { M: { l: { L: [{ B: bytes }, { BOOL: true }] } } } });
    const page = await calls.query({ TableName: 't', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } }, Limit: 1 });
    expect(page).toEqual({ Items: [{ pk: { S: 'a' }, sk: { S: '1' } }], Count: 1, ScannedCount: 1, LastEvaluatedKey: { pk: { S: 'a' }, sk: { S: '1' } } });
    expect(seen).toEqual([
      { target: 'DynamoDB_20120810.GetItem', body: { TableName: 't', Key: { pk: { S: 'a' } }, ConsistentRead: true } },
      { target: 'DynamoDB_20120810.Query', body: { TableName: 't', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } }, Limit: 1 } },
    ]);
  });

  it('retries throttling, server errors and dropped connections, then gives up with the SDK exception', async () => {
    const { calls } = clientFor();
    script = [throttled, 'reset', { status: 200, body: { Item: { pk: { S: 'a' } } } }];
    expect((await calls.getItem({ TableName: 't', Key: { pk: { S: 'a' } } })).Item).toEqual({ pk: { S: 'a' } });
    expect(seen).toHaveLength(3);
    seen.length = 0;
    script = [throttled, { status: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'oops' } }, throttled];
    const e = await calls.getItem({ TableName: 't', Key: { pk: { S: 'a' } } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ProvisionedThroughputExceededException);
    expect(e).toMatchObject({ message: 'slow down', $metadata: { httpStatusCode: 400 } });
    expect(seen).toHaveLength(3);
  });

  it('does not retry a client error, and names it as the SDK does', async () => {
    const { calls } = clientFor();
    script = [{ status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'no table' } }];
    await expect(calls.query({ TableName: 'gone', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } } })).rejects.toBeInstanceOf(ResourceNotFoundException);
    script = [{ status: 400, body: { __type: 'com.amazon.coral.validate#ValidationException', message: 'bad key' } }];
    const e = await calls.getItem({ TableName: 't', Key: {} }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DynamoDBServiceException);
    expect(e).toMatchObject({ name: 'ValidationException', message: 'bad key', $fault: 'client' });
    expect(seen).toHaveLength(2);
    // A wrong secret is not a clock problem: refused once, not retried.
    await expect(clientFor({ secretAccessKey: 'nope' }).calls.getItem({ TableName: 't', Key: {} })).rejects.toMatchObject({ name: 'InvalidSignatureException' });
    expect(seen).toHaveLength(3);
  });

  it("signs with DynamoDB's clock once told this host's is over 5 minutes off", async () => {
    const { calls } = clientFor();
    serverClockOffset = 3_600_000;
    await calls.getItem({ TableName: 't', Key: {} });
    expect(seen.map((s) => s.problem)).toEqual(['signature expired', undefined]);
    await calls.getItem({ TableName: 't', Key: {} });
    expect(seen.map((s) => s.problem)).toEqual(['signature expired', undefined, undefined]);
  });

  it("reaches the region's endpoint from the client's own rules when none is configured", async () => {
    const sent: HttpRequest[] = [];
    const capture = {
      handle: async (r: HttpRequest) => {
        sent.push(r);
        return { response: { statusCode: 200, headers: {}, body: new TextEncoder().encode('{}') } as HttpResponse };
      },
    };
    const client = new DynamoDBClient({ region: 'cn-north-1', credentials });
    await signedCalls(client, capture, undefined).getItem({ TableName: 't', Key: {} });
    expect(sent[0]).toMatchObject({ protocol: 'https:', hostname: 'dynamodb.cn-north-1.amazonaws.com.cn', path: '/', method: 'POST' });
    expect(sent[0]?.headers.authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/cn-north-1\/dynamodb\/aws4_request/);
  });
});

describe("the serving path's writes as plain signed requests", () => {
  it('sends BatchWriteItem with bytes as base64, and hands back what is left unprocessed with bytes', async () => {
    const { calls } = clientFor();
    const bytes = new Uint8Array([1, 2, 250]);
    const b64 = Buffer.from(bytes).toString('base64');
    script = [{ status: 200, body: { UnprocessedItems: { t: [{ PutRequest: { Item: { pk: { S: 'b' }, v: { B: b64 } } } }, { DeleteRequest: { Key: { pk: { S: 'c' } } } }] } } }];
    const out = await calls.batchWriteItem({
      RequestItems: { t: [{ PutRequest: { Item: { pk: { S: 'a' }, v: { B: bytes }, buf: { B: Buffer.from(bytes) } } } }, { PutRequest: { Item: { pk: { S: 'b' }, v: { B: bytes } } } }] },
    });
    expect(seen).toEqual([
      {
        target: 'DynamoDB_20120810.BatchWriteItem',
        body: { RequestItems: { t: [{ PutRequest: { Item: { pk: { S: 'a' }, v: { B: b64 }, buf: { B: b64 } } } }, { PutRequest: { Item: { pk: { S: 'b' }, v: { B: b64 } } } }] } },
      },
    ]);
    expect(out.UnprocessedItems).toEqual({ t: [{ PutRequest: { Item: { pk: { S: 'b' }, v: { B: bytes } } } }, { DeleteRequest: { Key: { pk: { S: 'c' } } } }] });
  });

  it("answers UpdateItem's attributes, and a failed condition as the SDK's exception, not retried", async () => {
    const { calls } = clientFor();
    script = [{ status: 200, body: { Attributes: { n: { N: '3' } } } }];
    const input = {
      TableName: 't',
      Key: { pk: { S: 'a' } },
      UpdateExpression: 'ADD #n :one',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':one': { N: '1' } },
      ReturnValues: 'UPDATED_NEW' as const,
    };
    expect((await calls.updateItem(input)).Attributes).toEqual({ n: { N: '3' } });
    expect(seen).toEqual([{ target: 'DynamoDB_20120810.UpdateItem', body: input }]);
    script = [{ status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'The conditional request failed' } }];
    const e = await calls.updateItem({ ...input, ConditionExpression: 'attribute_exists(pk)' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConditionalCheckFailedException);
    expect(seen).toHaveLength(2);
  });

  it('retries a write that met an ongoing transaction on its item (TransactionConflictException), as it would the throttle', async () => {
    // A control record's change is written in one TransactWriteItems with its audit entry
    // (shared/data/console.ts); a plain UpdateItem of that record meanwhile (a segment's deletion
    // mark, an experiment's start cleared, a size estimate) is refused by DynamoDB with this
    // exception, which neither the SDK nor a condition check takes as retryable: it was a 500.
    const { calls } = clientFor();
    const conflict = { status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException', message: 'Transaction is ongoing for the item' } };
    script = [conflict, { status: 200, body: { Attributes: { n: { N: '1' } } } }];
    const input = {
      TableName: 't',
      Key: { pk: { S: 'a' } },
      UpdateExpression: 'SET #n = :n',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':n': { N: '1' } },
      ReturnValues: 'ALL_NEW' as const,
    };
    expect((await calls.updateItem(input)).Attributes).toEqual({ n: { N: '1' } });
    expect(seen).toHaveLength(2);
  });

  it('stops at an aborted signal instead of retrying', async () => {
    const { calls } = clientFor();
    const stop = new AbortController();
    script = [throttled, throttled];
    onRequest = () => stop.abort();
    const e = await calls
      .updateItem({ TableName: 't', Key: { pk: { S: 'a' } }, UpdateExpression: 'SET x = :x', ExpressionAttributeValues: { ':x': { N: '1' } } }, stop.signal)
      .catch((x: unknown) => x);
    expect(e).toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(1);
    await expect(calls.updateItem({ TableName: 't', Key: { pk: { S: 'a' } }, UpdateExpression: 'SET x = :x', ExpressionAttributeValues: { ':x': { N: '1' } } }, stop.signal)).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(seen).toHaveLength(1);
  });

  it('ends with the deadline, not the throttle, when a throttle is answered as the request deadline passes', async () => {
    const { client } = clientFor();
    let sent = 0;
    // An answer that comes back 60 ms after it was sent, the abort not heeded (as when the answer was already in).
    const answerLate = (body: unknown) => ({
      handle: async () => {
        sent++;
        await sleep(60);
        return { response: { statusCode: 400, headers: {}, body: JSON.stringify(body) } };
      },
    });
    const throttle = signedCalls(client, answerLate(throttled.body), base);
    await expect(withinDeadline(20, () => throttle.getItem({ TableName: 't', Key: { pk: { S: 'a' } } }))).rejects.toBeInstanceOf(DeadlinePassed);
    expect(sent).toBe(1);
    // A definite answer arriving so stands: a failed condition is no throttle to retry.
    const failedCondition = answerLate({ __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'no' });
    const update = { TableName: 't', Key: { pk: { S: 'a' } }, UpdateExpression: 'SET x = :x', ExpressionAttributeValues: { ':x': { N: '1' } } };
    await expect(withinDeadline(20, () => signedCalls(client, failedCondition, base).updateItem(update))).rejects.toBeInstanceOf(ConditionalCheckFailedException);
  });
});

describe("the SDK client's calls (client.ts) as the request deadline passes", () => {
  const endpoint = 'http://deadline.local:8000';
  const failedCondition = { __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'no' };
  /** A transport answering `body` (400) to every attempt, the attempt numbered `late` only once the request's deadline passed. */
  const transport = (body: unknown, late: number) => {
    let sent = 0;
    const handler: LocalTransport = {
      handle: async () => {
        if (++sent === late) {
          const deadline = deadlineSignal();
          if (!deadline) throw new Error('no deadline in the transport');
          if (!deadline.aborted) await new Promise((resolve) => deadline.addEventListener('abort', resolve, { once: true }));
        }
        return { response: { statusCode: 400, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Buffer.from(JSON.stringify(body)) } };
      },
    };
    return { handler, sent: () => sent };
  };
  const tableWith = (handler: LocalTransport) => {
    useLocalTransport(endpoint, handler);
    const t = makeTable('t', endpoint, 'eu-west-1');
    dropLocalTransport(endpoint, handler);
    return t;
  };
  // No backoff between the attempts (full jitter of 0).
  beforeEach(() => void vi.spyOn(Math, 'random').mockReturnValue(0));
  afterEach(() => vi.restoreAllMocks());

  it('end with the deadline, not the throttle, when the last attempt is throttled after the deadline passed', async () => {
    const { handler, sent } = transport(throttled.body, 5);
    const t = tableWith(handler);
    await expect(withinDeadline(200, () => t.doc.send(new GetCommand({ TableName: 't', Key: { pk: 'a' } })))).rejects.toBeInstanceOf(DeadlinePassed);
    expect(sent()).toBe(5);
  });

  it('end with the throttle when every attempt was throttled before the deadline', async () => {
    const { handler, sent } = transport(throttled.body, 0);
    const t = tableWith(handler);
    await expect(withinDeadline(10_000, () => t.doc.send(new GetCommand({ TableName: 't', Key: { pk: 'a' } })))).rejects.toBeInstanceOf(ProvisionedThroughputExceededException);
    expect(sent()).toBe(5);
  });

  it('end with a failed condition answered after the deadline passed, a definite answer', async () => {
    const { handler, sent } = transport(failedCondition, 1);
    const t = tableWith(handler);
    const put = new PutCommand({ TableName: 't', Item: { pk: 'a' }, ConditionExpression: 'attribute_not_exists(pk)' });
    await expect(withinDeadline(20, () => t.doc.send(put))).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(sent()).toBe(1);
  });
});
