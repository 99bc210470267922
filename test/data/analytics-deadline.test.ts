/*
 * Search analytics at a request's deadline (shared/deadline.ts): what a request takes back of its
 * own writes is taken back after it too, and the writes many requests share (GroupCommit) are
 * refused by no one request's deadline. Found by a review of search analytics (2026-12-05).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import { dayOf } from '../../shared/clock.ts';
import { controlDepsOf } from '../../shared/control/deps.ts';
import { DeadlinePassed, deadlineSignal, outsideDeadline, withinDeadline } from '../../shared/deadline.ts';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { ExposureRecord } from '../../shared/control/exposures.ts';
import { dynamoExposureStore } from '../../shared/data/experiments.ts';
import { dynamoSearchLogStore, dynamoSearchRecorder } from '../../shared/data/search-analytics.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { searchBody } from '../../shared/schemas/search.ts';
import { serveSearch } from '../../shared/search/core-search.ts';
import { attributeSearchEvents } from '../../shared/search/analytics.ts';
import { storedEvent } from '../helpers/fixtures.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());
const T0 = 1_800_000_000;
const DAY1 = dayOf(T0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a search answered 503 at its deadline after it was recorded', () => {
  // A slow ranking step (the query embedding) that outlives the request's deadline, and then fails or ends.
  it.each([
    ['fails', true],
    ['ends, with no table call after it', false],
  ])('is taken out of analytics when ranking then %s (docs/api.md: "one that failed after that, a 5xx or 503, is taken out")', async (_, fails) => {
    const T = `deadline-search-${fails}`;
    const blobs = new FolderBlobStore(mkdtempSync(join(tmpdir(), 'deadline-search-')));
    const embedder = {
      name: 'remote',
      dimensions: 256,
      embed: async (texts: string[]): Promise<Float32Array[]> => {
        // Outlives the deadline, the search recorded (both waited for: was a 300 ms sleep past a
        // 150 ms deadline, the recording assumed to land within it).
        const deadline = deadlineSignal() as AbortSignal;
        await vi.waitFor(async () => expect(await outsideDeadline(() => log.search(T, id))).toBeDefined(), { timeout: 5_000, interval: 20 });
        if (!deadline.aborted) await new Promise((r) => deadline.addEventListener('abort', r, { once: true }));
        if (fails) throw new Error('embedding timed out');
        return texts.map(() => new Float32Array(256).fill(1 / 16));
      },
    };
    const log = dynamoSearchLogStore(db.table);
    const traffic = { exposures: dynamoExposureStore(db.table), recorder: log, authorized: Promise.resolve() };
    const deps = { search: { items: db.stores.items, events: db.stores.events, blobs, embedder }, control: controlDepsOf(db.stores), synonymSets: async () => [], traffic };
    const id = '0b5f1c1e-0000-4000-8000-0000000000d1';
    // In a context with a running experiment: the request is recorded in it too.
    await db.stores.console.put(T, 'context', { id: 1, name: 'home' });
    const variants = [{ name: 'a', endpoint_name: 'main', traffic_percent: 100 }];
    await db.stores.console.put(T, 'experiment', { id: 1, name: 'e1', context_id: 1, segment_id: null, variants, status: 'Running', attribution_window_seconds: 60, created: 1, updated_at: 1 });
    // The handler runs the domain call within its deadline (shared/http/handler.ts); middy answers 503 when it passes.
    await expect(withinDeadline(1_000, () => serveSearch(deps, T, searchBody.parse({ query: 'tent', context_id: '1', user_id: 'u' }), id, T0))).rejects.toThrow();
    // The take-backs run after the failure: polled for (was: checked after a 50 ms sleep), up to 5 s.
    await vi.waitFor(
      async () => {
        expect(await log.search(T, id)).toBeUndefined();
        const { byQuery } = await log.counts(T, DAY1, DAY1, 1000);
        expect(byQuery.get('tent')?.searches ?? 0).toBe(0);
        // Nor in its experiment (until 2026-12-05 it was, and its retry again).
        expect(await traffic.exposures.exposure(T, id)).toBeUndefined();
        expect((await traffic.exposures.totals(T, 1)).get(0)?.requests ?? 0).toBe(0);
      },
      { timeout: 5_000, interval: 50 },
    );
  });
});

describe('group commit of search rows', () => {
  it("writes a search's row even when another request whose deadline passed started the group's writes", async () => {
    const T = 'deadline-group';
    // A table whose BatchWriteItem takes 100 ms (a slow or throttled write).
    const signed: TableRef['signed'] = {
      ...db.table.signed,
      batchWriteItem: async (input) => {
        await sleep(100);
        return db.table.signed.batchWriteItem(input);
      },
    };
    const recorder = dynamoSearchRecorder({ ...db.table, signed });
    const log = dynamoSearchLogStore(db.table);
    // Request A (a slow search, answered 503 at its 50 ms deadline) records its search first: the
    // container's group of writes starts within A's call.
    const a = withinDeadline(50, async () => {
      await recorder.record(T, { requestId: 'a', query: 'slow', day: DAY1, servedAt: T0 + 1 }).catch(() => undefined);
      await sleep(200);
    }).catch(() => undefined);
    await sleep(10);
    // Request B, with plenty of time, records its search while A's write is under way.
    const b = await withinDeadline(10_000, () => recorder.record(T, { requestId: 'b', query: 'fast', day: DAY1, servedAt: T0 + 2 })).then(
      () => 'written',
      (e: unknown) => `failed: ${String(e)}`,
    );
    await a;
    expect(b).toBe('written');
    expect(await log.search(T, 'b')).toBeDefined();
  });
});

/**
 * The table of a store whose first write to a counters row (`counters`: a key's pk holds it), as
 * one UpdateItem or within a TransactWriteItems, is cut off at the ingest's deadline: DynamoDB
 * `applied` it (the answer lost to the deadline), or did not.
 */
function cutOffAtCounters(counters: string, appliedFirst: boolean): TableRef {
  let cut = false;
  const cutOff = async <T>(names: unknown, send: () => Promise<T>): Promise<T> => {
    if (cut || !JSON.stringify(names).includes(counters)) return send();
    cut = true;
    if (appliedFirst) await send();
    throw new DeadlinePassed();
  };
  const signed = new Proxy(db.table.signed, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'updateItem') return typeof v === 'function' ? v.bind(target) : v;
      return (params: { Key: unknown }, signal?: AbortSignal) => cutOff(params.Key, () => (v as (p: unknown, s?: AbortSignal) => Promise<unknown>).call(target, params, signal));
    },
  }) as TableRef['signed'];
  const doc = new Proxy(db.table.doc, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'send') return typeof v === 'function' ? v.bind(target) : v;
      return (command: { input: unknown }, options?: unknown) =>
        cutOff(command instanceof TransactWriteCommand ? command.input.TransactItems?.map((i) => i.Update?.Key) : undefined, () =>
          (v as (c: unknown, o?: unknown) => Promise<unknown>).call(target, command, options),
        );
    },
  }) as TableRef['doc'];
  return { ...db.table, signed, doc };
}

describe("an attributed event whose counts' write is cut off at the ingest's deadline", () => {
  // Until 2026-12-08 the mark and the counts were two writes, the mark taken back when the counts'
  // write failed: counts DynamoDB had applied lost their mark, and the retry counted them again.
  it.each([
    ['applied the counts', true],
    ['wrote nothing', false],
  ])('is counted exactly once in search analytics after the retry, when DynamoDB %s', async (_, appliedFirst) => {
    const T = `attr-cut-${appliedFirst}`;
    const store = dynamoSearchLogStore(db.table);
    const cut = dynamoSearchLogStore(cutOffAtCounters('#SRCHAGG#', appliedFirst));
    await store.record(T, { requestId: 'r1', query: 'red shoe', day: DAY1, servedAt: T0 + 10 });
    const ev = [storedEvent(1, 'r1', T0 + 20)];
    // The ingest is answered 503 at its deadline; the client retries it (and once more).
    await expect(attributeSearchEvents(cut, T, ev)).rejects.toThrow(DeadlinePassed);
    await attributeSearchEvents(store, T, ev);
    await attributeSearchEvents(store, T, ev);
    const { byQuery } = await store.counts(T, DAY1, DAY1, 1_000);
    expect(byQuery.get('red shoe')).toMatchObject({ events: { click: 1 }, searches_with: { click: 1 } });
  });

  it.each([
    ['applied the counts', true],
    ['wrote nothing', false],
  ])("is counted exactly once in its experiment's results after the retry, when DynamoDB %s", async (_, appliedFirst) => {
    const T = `attr-cut-exp-${appliedFirst}`;
    const store = dynamoExposureStore(db.table);
    const cut = dynamoExposureStore(cutOffAtCounters('#EXPAGG#', appliedFirst));
    await store.recordExposure(T, { requestId: 'x1', experimentId: 3, variant: 0, userId: 'u1', servedAt: T0 + 10, windowSeconds: 600 });
    const x = (await store.exposure(T, 'x1')) as ExposureRecord;
    const event = { id: 7, type: 'purchase', created: T0 + 20 };
    await expect(cut.attribute(T, x, event)).rejects.toThrow(DeadlinePassed);
    await store.attribute(T, x, event);
    await store.attribute(T, x, event);
    const v = (await store.totals(T, 3)).get(0);
    expect(v).toMatchObject({ requests: 1, users: 1, events: { purchase: 1 }, requestsWith: { purchase: 1 }, usersWith: { purchase: 1 } });
  });
});
