import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeadlinePassed, deadlineSignal, withinDeadline } from '../../shared/deadline.ts';
import { getRow, put, putAll, update } from '../../shared/data/ops.ts';
import type { ApiContext } from '../../shared/http/types.ts';
import { apiEvent } from '../helpers/api-event.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * A handler's writes stop at its deadline: middy answers 503 at the time limit while the domain
 * call goes on (locally for real, on Lambda at the next thaw), and a write of it landing after a
 * client's retry took over and changed the item would undo the change.
 */

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
  // Config for the handler chain; these handlers make no call of their own to the container's table.
  process.env.TABLE_NAME ??= 'unit';
});
afterAll(() => db.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const row = (id: string, v = 1) => ({ pk: 'DEADLINE', sk: id, v });
/** Resolves once the current call's deadline has passed (its signal aborted): waited for, not slept for past a short deadline. */
const passed = () =>
  new Promise<void>((resolve) => {
    const signal = deadlineSignal() as AbortSignal;
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
const stored = async (id: string) => (await getRow(db.table, { pk: 'DEADLINE', sk: id }, { consistent: true }))?.v;

describe('a deadline', () => {
  it('aborts its signal when it passes, for what runs within it only', async () => {
    expect(deadlineSignal()).toBeUndefined();
    let seen: AbortSignal | undefined;
    await withinDeadline(30, async () => {
      await sleep(5);
      seen = deadlineSignal();
      expect(seen?.aborted).toBe(false);
    });
    expect(deadlineSignal()).toBeUndefined();
    await sleep(60);
    // Cleared once its call ended in time: never aborted.
    expect(seen?.aborted).toBe(false);
    const late = withinDeadline(20, async () => {
      await sleep(50);
      return deadlineSignal();
    });
    const s = await late;
    expect(s?.aborted).toBe(true);
    expect(s?.reason).toBeInstanceOf(DeadlinePassed);
  });

  it('takes 20 table reads at once without a "possible memory leak" warning (an erasure runs 16), each leaving no listener behind', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      await put(db.table, row('many'));
      const { read, left } = await withinDeadline(10_000, async () => {
        const read = await Promise.all(Array.from({ length: 20 }, () => getRow(db.table, { pk: 'DEADLINE', sk: 'many' })));
        await sleep(20);
        return { read, left: getEventListeners(deadlineSignal() as AbortSignal, 'abort').length };
      });
      expect(left).toBe(0);
      expect(read.every((r) => r?.v === 1)).toBe(true);
      await sleep(10);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('refuses the table calls made after it passed, signed and through the SDK, and lets those before it land', async () => {
    // A deadline the first write is sure to beat on a loaded machine (was 100 ms, then a 200 ms sleep past it).
    const work = withinDeadline(2_000, async () => {
      await putAll(db.table, [row('before')]);
      await passed();
      const refused: string[] = [];
      for (const [name, call] of [
        ['BatchWriteItem', () => putAll(db.table, [row('after-batch')])],
        ['UpdateItem', () => update(db.table, { pk: 'DEADLINE', sk: 'before' }, { set: { v: 2 } })],
        ['PutItem (SDK)', () => put(db.table, row('after-put'))],
        ['GetItem', () => getRow(db.table, { pk: 'DEADLINE', sk: 'before' })],
      ] as const) {
        await call().then(
          () => undefined,
          (e: unknown) => e instanceof DeadlinePassed && refused.push(name),
        );
      }
      return refused;
    });
    expect(await work).toEqual(['BatchWriteItem', 'UpdateItem', 'PutItem (SDK)', 'GetItem']);
    expect(await stored('before')).toBe(1);
    expect(await stored('after-batch')).toBeUndefined();
    expect(await stored('after-put')).toBeUndefined();
  });

  it('cuts an SDK call in flight at the deadline (a table that never answers): it ends as the timeout, its connection closed', async () => {
    const { createServer } = await import('node:http');
    const { makeTable, closeTable } = await import('../../shared/data/client.ts');
    // Takes each request and never answers it.
    const held: { closed: boolean }[] = [];
    const server = createServer((req) => {
      const one = { closed: false };
      held.push(one);
      req.socket.once('close', () => {
        one.closed = true;
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const stuck = makeTable('deadline-stub', `http://127.0.0.1:${port}`, 'us-east-1');
    try {
      const call = withinDeadline(100, () => put(stuck, row('never-answered'))).then(
        () => 'written',
        (e: unknown) => e,
      );
      // Until 2026-12-07 the attempt was given no signal: still waiting for its answer long after.
      const ended = await Promise.race([call, sleep(5_000).then(() => 'still in flight')]);
      expect(ended).toBeInstanceOf(DeadlinePassed);
      // One attempt sent (none after the deadline), its connection cut.
      await vi.waitFor(() => expect(held).toEqual([{ closed: true }]), { timeout: 5_000 });
    } finally {
      closeTable(stuck);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('cuts no SDK call that runs outside the deadline (outsideDeadline, as group commits and take-backs run) or under none, and leaves no listener on the signal', async () => {
    // Review of 0b5b9f7f: the SDK handler takes the deadline's signal only where the call runs within it.
    const { createServer } = await import('node:http');
    const { makeTable, closeTable } = await import('../../shared/data/client.ts');
    const { outsideDeadline } = await import('../../shared/deadline.ts');
    // Answers each PutItem after 300 ms (past a 50 ms deadline).
    const server = createServer((_req, res) => {
      _req.resume();
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{}'), 300);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const slow = makeTable('deadline-slow', `http://127.0.0.1:${port}`, 'us-east-1');
    try {
      let signal: AbortSignal | undefined;
      const ended = await withinDeadline(50, async () => {
        signal = deadlineSignal();
        const outside = outsideDeadline(() => put(slow, row('outside'))).then(
          () => 'written',
          (e: unknown) => e,
        );
        const within = put(slow, row('within')).then(
          () => 'written',
          (e: unknown) => e,
        );
        return Promise.all([outside, within]);
      });
      expect(ended[0]).toBe('written');
      expect(ended[1]).toBeInstanceOf(DeadlinePassed);
      expect(signal?.aborted).toBe(true);
      expect(getEventListeners(signal as AbortSignal, 'abort')).toHaveLength(0);
      // Under no deadline (maintenance, background work): written, however long it takes.
      expect(await put(slow, row('none')).then(() => 'written')).toBe('written');
      // A call that ends within its deadline leaves no listener on it either.
      const inTime = await withinDeadline(5_000, async () => {
        await put(slow, row('in-time'));
        return getEventListeners(deadlineSignal() as AbortSignal, 'abort').length;
      });
      expect(inTime).toBe(0);
    } finally {
      closeTable(slow);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("is a handler's time limit: what its domain call would write after the 503 is never written", async () => {
    const { httpHandler } = await import('../../shared/http/handler.ts');
    let done: (v: unknown) => void = () => {};
    const finished = new Promise((r) => (done = r));
    let answered: () => void = () => {};
    const afterAnswer = new Promise<void>((r) => (answered = r));
    const handler = httpHandler('core', undefined, {}, async () => {
      await putAll(db.table, [row('first-chunk')]);
      // A backoff, a slow chunk: past the limit, until after the 503 (waited for: was a 300 ms sleep past a 150 ms limit).
      await afterAnswer;
      try {
        await putAll(db.table, [row('late-chunk')]);
        done('written');
      } catch (e) {
        done(e);
      }
      return { status: 201, body: {} };
    });
    const started = Date.now();
    const context = { awsRequestId: '9f1c2a3b-0000-4000-8000-000000000002', getRemainingTimeInMillis: () => Math.max(0, 2_000 - (Date.now() - started)) } as unknown as ApiContext;
    const res = await handler(apiEvent('POST', '/v1/items', '/v1/items', { body: '{}', headers: { 'content-type': 'application/json' } }), context);
    answered();
    expect(res.statusCode).toBe(503);
    // Was 'written', after the answer.
    expect(await finished).toBeInstanceOf(DeadlinePassed);
    expect(await stored('first-chunk')).toBe(1);
    expect(await stored('late-chunk')).toBeUndefined();
  });

  it('refusing a call in the few ms before middy answers, is answered as the timeout it is (503), not a 500', async () => {
    const { httpHandler } = await import('../../shared/http/handler.ts');
    const handler = httpHandler('core', undefined, {}, async () => {
      throw new DeadlinePassed();
    });
    const context = { awsRequestId: '9f1c2a3b-0000-4000-8000-000000000003', getRemainingTimeInMillis: () => 5_000 } as unknown as ApiContext;
    const res = await handler(apiEvent('POST', '/v1/items', '/v1/items', { body: '{}', headers: { 'content-type': 'application/json' } }), context);
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body as string).error).toMatchObject({ type: 'api_error', code: 'timeout' });
  });
});
