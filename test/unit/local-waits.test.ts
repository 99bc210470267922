import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { SQSEvent } from 'aws-lambda';
import { BroadcastChannel, MessageChannel, type MessagePort } from 'node:worker_threads';
import { DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { HttpRequest } from '@smithy/types';
import { describe, expect, it, vi } from 'vitest';
import { startApiPool } from '../../local/api-pool.ts';
import { startDynaliteThread } from '../../local/dynamo.ts';
import { PortHttpHandler } from '../../local/dynamo-port.ts';
import { startHandlerThread, threadedHandler } from '../../local/threaded-handler.ts';

/** `p`'s outcome, or 'no answer' when it has none within `ms`. */
/** An SDK DynamoDB client whose requests go over `port` (PortHttpHandler, its reads' time limit `timeoutMs`). */
const portClient = (port: MessagePort, timeoutMs: number) =>
  new DynamoDBClient({
    endpoint: 'http://127.0.0.1:1',
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: new PortHttpHandler(port, { timeoutMs }),
  });
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'no answer'> => Promise.race([p, new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), ms))]);

describe('the local stack never waits for good on a thread that does not answer', () => {
  it('ends the dynalite thread when its server does not close within the time limit (a request still arriving on a connection), and says so', async () => {
    const db = await startDynaliteThread({ closeTimeoutMs: 300 });
    // A request whose body never comes: dynalite's server.close waits for its connection.
    const url = new URL(db.endpoint);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // Expect: 100-continue: the server's "100 Continue" shows it has read the request's head (its
    // connection no longer idle), waited for rather than a 100 ms sleep a loaded machine overran.
    const continued = new Promise<void>((resolve) => socket.on('data', (d) => String(d).startsWith('HTTP/1.1 100') && resolve()));
    socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n{');
    await continued;
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // Until 2026-12-07 the close waited for the thread's `closed` for good.
      expect(await within(db.close(), 5000)).toBeUndefined();
      expect(errors.mock.calls.flat().join('\n')).toMatch(/did not close within 300 ms.*it was ended/);
    } finally {
      errors.mockRestore();
      socket.destroy();
    }
  });

  it('stops waiting for the dynalite thread to close when the thread ends while it closes, and says it ended, not that it was ended late', async () => {
    // Found by a review (2026-12-07): the close raced only the thread's `closed` and the time limit,
    // so a thread that ended on its own held the close the whole limit (10 s), then said it had
    // not closed in time and was ended.
    const db = await startDynaliteThread({ closeTimeoutMs: 4000, threadScript: new URL('../helpers/dynalite-exits-on-close.mjs', import.meta.url) });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await within(db.close(), 2000)).toBeUndefined();
      const said = errors.mock.calls.flat().join('\n');
      expect(said).toMatch(/its thread ended while it closed: its thread exited \(code 3\)/);
      expect(said).not.toMatch(/did not close within/);
    } finally {
      errors.mockRestore();
    }
  });
});

describe('a local DynamoDB request over a port the thread does not answer', () => {
  const getItem = (): HttpRequest => ({
    method: 'POST',
    protocol: 'http:',
    hostname: '127.0.0.1',
    path: '/',
    query: {},
    headers: { 'x-amz-target': 'DynamoDB_20120810.GetItem', 'content-type': 'application/x-amz-json-1.0' },
    body: '{"TableName":"t","Key":{"pk":{"S":"a"},"sk":{"S":"b"}}}',
  });

  it('fails as timed out after its time limit (until 2026-12-07 it waited for good), and a late answer is dropped', async () => {
    const { port1, port2 } = new MessageChannel();
    const asked: { id: number }[] = [];
    port2.on('message', (m: { id: number }) => asked.push(m));
    const handler = new PortHttpHandler(port1, { timeoutMs: 200 });
    try {
      const failure = await within(
        handler.handle(getItem()).then(
          () => 'answered',
          (e: unknown) => e,
        ),
        5000,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(failure).toMatchObject({ name: 'TimeoutError', message: 'local DynamoDB: no answer within 200 ms' });
      expect(asked).toHaveLength(1);
      // Its answer, come too late, goes to no one (nor to the next request).
      port2.postMessage({ id: asked[0]?.id, status: 200, headers: {}, body: '{}' });
      const next = handler.handle(getItem());
      await vi.waitFor(() => expect(asked).toHaveLength(2));
      port2.postMessage({ id: asked[1]?.id, status: 200, headers: {}, body: '{"Item":{}}' });
      expect(Buffer.from((await next).response.body as Uint8Array).toString()).toBe('{"Item":{}}');
    } finally {
      port1.close();
    }
  });

  it("lets the SDK's retries go on: an attempt not answered is sent again", async () => {
    const { port1, port2 } = new MessageChannel();
    let attempts = 0;
    // The first attempt is never answered; the second is.
    port2.on('message', (m: { id: number }) => {
      attempts += 1;
      if (attempts > 1) port2.postMessage({ id: m.id, status: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: '{"Item":{"pk":{"S":"a"}}}' });
    });
    const client = portClient(port1, 200);
    try {
      const got = await within(client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' }, sk: { S: 'b' } } })), 5000);
      expect(got).toMatchObject({ Item: { pk: { S: 'a' } } });
      expect(attempts).toBe(2);
    } finally {
      client.destroy();
      port1.close();
    }
  });

  it("does not fail a slow write at the reads' time limit, so the SDK does not send it again (an ADD counted twice): a write waits as long as on AWS", async () => {
    const { port1, port2 } = new MessageChannel();
    const asked: { id: number; headers: Record<string, string> }[] = [];
    // The thread is slow (a busy machine): each request is answered after 400 ms, past the 100 ms limit.
    port2.on('message', (m: { id: number; headers: Record<string, string> }) => {
      asked.push(m);
      setTimeout(() => port2.postMessage({ id: m.id, status: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: '{"Attributes":{"n":{"N":"1"}}}' }), 400);
    });
    const client = portClient(port1, 100);
    try {
      const counted = await within(
        client
          .send(
            new UpdateItemCommand({
              TableName: 't',
              Key: { pk: { S: 'a' }, sk: { S: 'b' } },
              UpdateExpression: 'ADD n :one',
              ExpressionAttributeValues: { ':one': { N: '1' } },
              ReturnValues: 'UPDATED_NEW',
            }),
          )
          .then(
            (r) => r.Attributes,
            (e: unknown) => e,
          ),
        5000,
      );
      // Until this fix the write failed at 100 ms as a TimeoutError and the SDK sent the ADD again (and again): each applied.
      expect(counted).toEqual({ n: { N: '1' } });
      expect(asked.map((m) => m.headers['x-amz-target'])).toEqual(['DynamoDB_20120810.UpdateItem']);
    } finally {
      client.destroy();
      port1.close();
    }
  });

  it('fails a write no one answers at the write time limit (what AWS waits: the client socket timeout)', async () => {
    const { port1 } = new MessageChannel();
    const handler = new PortHttpHandler(port1, { timeoutMs: 100, writeTimeoutMs: 600 });
    try {
      const write: HttpRequest = { ...getItem(), headers: { 'x-amz-target': 'DynamoDB_20120810.PutItem', 'content-type': 'application/x-amz-json-1.0' } };
      const started = Date.now();
      const failure = await within(
        handler.handle(write).then(
          () => 'answered',
          (e: unknown) => e,
        ),
        5000,
      );
      expect(failure).toMatchObject({ name: 'TimeoutError', message: 'local DynamoDB: no answer within 600 ms' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    } finally {
      port1.close();
    }
  });

  it('fails at once as aborted when its abort signal fires (a request deadline), as a socket request does', async () => {
    const { port1 } = new MessageChannel();
    const handler = new PortHttpHandler(port1);
    try {
      const abort = new AbortController();
      const call = handler.handle(getItem(), { abortSignal: abort.signal }).then(
        () => 'answered',
        (e: unknown) => e,
      );
      setTimeout(() => abort.abort(), 50);
      expect(await within(call, 2000)).toMatchObject({ name: 'AbortError' });
      // Already aborted: not sent.
      await expect(handler.handle(getItem(), { abortSignal: abort.signal })).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      port1.close();
    }
  });
});

describe('a handler thread that never says ready', () => {
  it('fails its start after the time limit, says so, and ends the thread (until 2026-12-07 the start waited for good; the limit leaves the thread time to post its loading)', async () => {
    const exited: number[] = [];
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const started = startHandlerThread(
        { entry: '../test/helpers/never-ready-thread.ts', name: 'never-ready' },
        // The thread, watched for its end once it says it is loading.
        { readyTimeoutMs: 2000, onOther: (_m, worker) => worker.once('exit', (code: number) => exited.push(code)) },
      ).then(
        () => 'started',
        (e: unknown) => e,
      );
      expect(await within(started, 10_000)).toMatchObject({ message: 'the never-ready thread did not say ready within 2000 ms; it was ended' });
      await vi.waitFor(() => expect(exited).toHaveLength(1));
      expect(errors.mock.calls.flat().join('\n')).toMatch(/never-ready thread did not say ready within 2000 ms/);
    } finally {
      errors.mockRestore();
    }
  });
});

describe('an API pool whose start fails in one of its threads', () => {
  it('ends the threads that did start (until 2026-12-07 they ran on, unreachable, and kept the process alive)', async () => {
    const channel = new BroadcastChannel('api-pool-test');
    const pongs: string[] = [];
    channel.onmessage = (m) => pongs.push(String((m as MessageEvent).data));
    try {
      await expect(startApiPool(2, ['../test/helpers/api-fails-in-api-1'])).rejects.toThrow(/does not load in api-1/);
      // Asked for 2 s (a thread left running may still be loading its modules).
      const pinging = setInterval(() => channel.postMessage('ping'), 100);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      clearInterval(pinging);
      expect(pongs).toEqual([]);
    } finally {
      channel.close();
    }
  });
});

describe('a local task process whose worker thread was ended while it ran', () => {
  /** The process's state letter in /proc (Z: exited, not reaped), or 'gone' once reaped. */
  const stateOf = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 1).trim()[0];
    } catch {
      return 'gone';
    }
  };

  it.runIf(process.platform === 'linux')('is reaped once it exits (until 2026-12-07 it stayed a zombie for as long as the stack ran)', async () => {
    const modulePath = fileURLToPath(new URL('../helpers/task-spawning-worker.ts', import.meta.url));
    const worker = await threadedHandler('workers/train', { modulePath });
    const answer = await worker.handler({ Records: [{ body: '500' } as SQSEvent['Records'][number]] }, {} as never);
    const pid = Number(answer?.batchItemFailures[0]?.itemIdentifier);
    expect(pid).toBeGreaterThan(0);
    // The thread that asked for it ends (as the training worker's at its time limit) while it runs.
    await worker.close();
    expect(stateOf(pid)).not.toBe('gone');
    await vi.waitFor(() => expect(stateOf(pid)).toBe('gone'), { timeout: 5000, interval: 100 });
  });

  it("does not hold a worker thread's `ready` on loading the training launcher: the thread says it in the turn its module loaded", async () => {
    // A module that ends its thread 1 ms after it loads (flaky-start-worker.ts): only a thread
    // that says ready in that same turn starts. Until this fix every handler thread imported
    // shared/recs/launcher.ts (0.5 to 1 s of modules here) after its handler, to give it the
    // main thread's spawner, and such a thread ended before it was ready.
    const modulePath = fileURLToPath(new URL('../helpers/flaky-start-worker.ts', import.meta.url));
    process.env.RECSEARCH_TEST_EXIT_AFTER_MS = '1';
    // The thread takes the environment as it is made (synchronously): its replacements start without it.
    const starting = threadedHandler('workers/embed', { modulePath });
    delete process.env.RECSEARCH_TEST_EXIT_AFTER_MS;
    const worker = await starting;
    await worker.close();
  });

  it('does not keep the process alive once its thread ended (as it did not when the thread held it): a closed stack exits while a task runs on', async () => {
    const processes = () => process.getActiveResourcesInfo().filter((r) => r === 'ProcessWrap').length;
    const before = processes();
    const modulePath = fileURLToPath(new URL('../helpers/task-spawning-worker.ts', import.meta.url));
    const worker = await threadedHandler('workers/train', { modulePath });
    const answer = await worker.handler({ Records: [{ body: '20000' } as SQSEvent['Records'][number]] }, {} as never);
    const pid = Number(answer?.batchItemFailures[0]?.itemIdentifier);
    expect(pid).toBeGreaterThan(0);
    await worker.close();
    try {
      // Until this fix the main thread held the task process's handle, and the process ran on for the task's 20 s.
      expect(processes()).toBe(before);
    } finally {
      process.kill(pid);
    }
  });
});
