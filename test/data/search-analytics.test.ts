import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { statusOf } from '../../shared/http/error-mapping.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import { controlDepsOf } from '../../shared/control/deps.ts';
import { SearchFold } from '../../shared/data/entities.ts';
import { dynamoExposureStore } from '../../shared/data/experiments.ts';
import { searchBody } from '../../shared/schemas/search.ts';
import { serveSearch } from '../../shared/search/core-search.ts';
import { dynamoSearchLogStore } from '../../shared/data/search-analytics.ts';
import { dayOf } from '../../shared/clock.ts';
import { attributeSearchEvents, FOLD_LAG_SECONDS, foldSearchCounts, type SearchLogStore } from '../../shared/search/analytics.ts';
import { storedEvent } from '../helpers/fixtures.ts';
import { interceptSigned, testTable, updateFailingOnce, type TestTable } from '../helpers/table.ts';

let db: TestTable;
let store: SearchLogStore;
/** A fold with time enough for every minute due. */
const fold = (tenant: string, upTo: number, budgetMs = 60_000) => store.fold(tenant, upTo, budgetMs);
beforeAll(async () => {
  db = await testTable();
  store = dynamoSearchLogStore(db.table);
});
afterAll(() => db.close());

/** A minute's start (folds go a minute at a time), far from today so that nothing else is counted. */
const T0 = 1_800_000_000;
const DAY1 = dayOf(T0);
const DAY2 = dayOf(T0 + 86_400);

/** Records a search as the search function does: its row, then the mark of one without results. */
async function searched(tenant: string, requestId: string, query: string, servedAt: number, found = true) {
  const s = { requestId, query, day: dayOf(servedAt), servedAt };
  await store.record(tenant, s);
  if (!found) await store.noResults(tenant, s);
  return s;
}

/** The report's counts of one query over the days, or undefined. */
async function countsOf(tenant: string, query: string, from = DAY1, to = DAY2) {
  const { byQuery, complete } = await store.counts(tenant, from, to, 1_000);
  expect(complete).toBe(true);
  return byQuery.get(query);
}

/** Every query's searches and no_results over both days. */
async function report(tenant: string) {
  const { byQuery } = await store.counts(tenant, DAY1, DAY2, 1_000);
  return Object.fromEntries([...byQuery].map(([q, c]) => [q, [c.searches, c.no_results]]).sort());
}

const forgetFold = (tenant: string) => db.table.doc.send(new DeleteCommand({ TableName: db.table.tableName, Key: SearchFold.key({ tenant }) }));

describe('search analytics: searches folded into counters', () => {
  it('counts every search in a report before, during and after its fold, each once', async () => {
    const T = `fold-${db.engine}`;
    const first = await searched(T, 'r1', 'red shoe', T0 + 5);
    await searched(T, 'r2', 'red shoe', T0 + 50);
    await searched(T, 'r3', 'blue hat', T0 + 70, false);
    await searched(T, 'r4', 'red shoe', T0 + 130);
    await searched(T, 'r5', 'red shoe', T0 + 86_400 + 10, false);
    const all = { 'blue hat': [1, 1], 'red shoe': [4, 1] };
    // Nothing folded: the report reads the searches' rows.
    expect(await report(T)).toEqual(all);

    // Folding the first two minutes: one addition per day and query of each minute.
    expect(await fold(T, T0 + 120 + 59)).toEqual({ searches: 3, queries: 2, foldedTo: T0 + 120 });
    expect(await report(T)).toEqual(all);
    // Again over the same minutes: nothing more.
    expect(await fold(T, T0 + 120)).toEqual({ searches: 0, queries: 0, foldedTo: T0 + 120 });
    expect(await report(T)).toEqual(all);

    // Two folds at once over every minute (as two maintenance passes may overlap): each search once.
    const both = await Promise.all([fold(T, T0 + 86_400 + 60), fold(T, T0 + 86_400 + 60)]);
    expect(both.map((f) => f.foldedTo)).toEqual([T0 + 86_400 + 60, T0 + 86_400 + 60]);
    expect(await report(T)).toEqual(all);
    expect(await countsOf(T, 'red shoe', DAY2, DAY2)).toMatchObject({ searches: 1, no_results: 1 });

    // A fold that stopped before recording how far it got (its row lost here) starts over from the
    // first minute: the counters, which hold it already, take nothing twice, and the report does not
    // count their searches again from the rows either.
    await forgetFold(T);
    expect(await report(T)).toEqual(all);
    expect((await fold(T, T0 + 86_400 + 60)).queries).toBe(0);
    expect(await report(T)).toEqual(all);

    // A search later in a folded day is counted from its row until its minute is folded.
    await searched(T, 'r6', 'red shoe', T0 + 86_400 + 200);
    expect((await countsOf(T, 'red shoe'))?.searches).toBe(5);
    expect(await fold(T, T0 + 86_400 + 300)).toMatchObject({ searches: 1, queries: 1 });
    expect((await countsOf(T, 'red shoe'))?.searches).toBe(5);

    // Events attributed to a folded search count beside its searches.
    expect(await store.attribute(T, first, { id: 1, type: 'click', created: T0 + 6 })).toBe(true);
    expect(await store.attribute(T, first, { id: 1, type: 'click', created: T0 + 6 })).toBe(false);
    expect(await countsOf(T, 'red shoe')).toEqual({ searches: 5, no_results: 1, events: { click: 1 }, searches_with: { click: 1 } });
    // The range counts its own days only.
    expect((await countsOf(T, 'red shoe', DAY1, DAY1))?.searches).toBe(3);
  });

  it('catches up a backlog a minute at a time when its time is short, and all at once when not', async () => {
    const T = `backlog-${db.engine}`;
    for (let m = 0; m < 5; m++) for (let k = 0; k < 3; k++) await searched(T, `b${m}-${k}`, `q${k}`, T0 + m * 60 + k);
    // No time left: one minute a call (never none), each call further on.
    const folded: (number | undefined)[] = [];
    for (let n = 0; n < 3; n++) folded.push((await fold(T, T0 + 300, 0)).foldedTo);
    expect(folded).toEqual([T0 + 60, T0 + 120, T0 + 180]);
    // Time enough: the rest of the backlog in one call.
    expect(await fold(T, T0 + 300)).toEqual({ searches: 6, queries: 6, foldedTo: T0 + 300 });
    expect(await report(T)).toEqual({ q0: [5, 0], q1: [5, 0], q2: [5, 0] });
  });

  it('reads the counters consistently: a report right after a fold does not miss the minute it folded', async () => {
    const T = `replica-${db.engine}`;
    for (let k = 0; k < 5; k++) await searched(T, `c${k}`, 'lamp', T0 + 10 + k);
    // A replica that lags: an eventually consistent Query answers what it answered before the fold.
    const before = new Map<string, unknown>();
    const signed: TableRef['signed'] = {
      ...db.table.signed,
      query: async (input) => {
        const key = JSON.stringify(input);
        if (!input.ConsistentRead && before.has(key)) return before.get(key) as Awaited<ReturnType<TableRef['signed']['query']>>;
        const out = await db.table.signed.query(input);
        before.set(key, out);
        return out;
      },
    };
    const lagging = dynamoSearchLogStore({ ...db.table, signed });
    const lampOf = async () => (await lagging.counts(T, DAY1, DAY1, 1_000)).byQuery.get('lamp')?.searches;
    expect(await lampOf()).toBe(5);
    await fold(T, T0 + 60);
    expect(await lampOf()).toBe(5);
  });

  it('reads a busy minute in small pages, one at a time, and counts each of its searches once', async () => {
    const T = `busy-${db.engine}`;
    const n = 1_200;
    await Promise.all(Array.from({ length: n }, (_, k) => store.record(T, { requestId: `m${k}`, query: `q${k % 3}`, day: DAY1, servedAt: T0 + (k % 60) })));
    // The rows of every page the fold is answered, and how many of its reads are in flight at once.
    const pages: number[] = [];
    let reading = 0;
    let mostAtOnce = 0;
    const signed: TableRef['signed'] = {
      ...db.table.signed,
      query: async (input) => {
        // The probes for the next minute with a search (a row each) are not counted.
        if (input.Limit === 1) return db.table.signed.query(input);
        mostAtOnce = Math.max(mostAtOnce, ++reading);
        const out = await db.table.signed.query(input).finally(() => reading--);
        pages.push(out.Items?.length ?? 0);
        return out;
      },
    };
    const paged = dynamoSearchLogStore({ ...db.table, signed });
    expect(await paged.fold(T, T0 + 60, 60_000)).toEqual({ searches: n, queries: 3, foldedTo: T0 + 60 });
    // No page holds more than 100 rows (a shard holds about 150 here, so some pages are full),
    // and the shards are read one after another.
    expect(Math.max(...pages)).toBe(100);
    expect(mostAtOnce).toBe(1);
    expect(await report(T)).toEqual({ q0: [400, 0], q1: [400, 0], q2: [400, 0] });
  });

  it('folds only what no search can still be written to, and passes over minutes without searches', async () => {
    const T = `lag-${db.engine}`;
    await searched(T, 'a1', 'tent', T0 + 10);
    await searched(T, 'a2', 'tent', T0 + 7 * 86_400);
    // The maintenance pass folds up to FOLD_LAG_SECONDS ago: the minute of the second search is
    // not over that long yet.
    const now = T0 + 7 * 86_400 + 30;
    expect(await foldSearchCounts(store, T, now)).toEqual({ searches: 1, queries: 1, foldedTo: T0 + 60 });
    expect(await foldSearchCounts(store, T, T0 + 7 * 86_400 + 60 + FOLD_LAG_SECONDS)).toEqual({ searches: 1, queries: 1, foldedTo: T0 + 7 * 86_400 + 60 });
    const { byQuery } = await store.counts(T, DAY1, dayOf(T0 + 7 * 86_400), 1_000);
    expect(byQuery.get('tent')?.searches).toBe(2);
    // A tenant without searches folds nothing and writes nothing.
    expect(await foldSearchCounts(store, `none-${db.engine}`, now)).toEqual({ searches: 0, queries: 0, foldedTo: undefined });
  });
});

describe('search analytics: events attributed to searches', () => {
  /** An event as ingest stores it, naming a search by its request_id, ingested at `created`. */
  const event = (id: number, requestId: string, created: number) => storedEvent(id, requestId, created);

  it('counts an event ingested within a day (86,400 s) of its search, and not one later', async () => {
    const T = `attr-${db.engine}`;
    await searched(T, 'r1', 'green lamp', T0 + 10);
    expect(await attributeSearchEvents(store, T, [event(1, 'r1', T0 + 10 + 86_400)])).toBe(1);
    expect(await attributeSearchEvents(store, T, [event(2, 'r1', T0 + 10 + 86_401)])).toBe(0);
    expect(await countsOf(T, 'green lamp')).toMatchObject({ searches: 1, events: { click: 1 }, searches_with: { click: 1 } });
  });

  it('counts up to a bound of events for one search and no more, so that its row never outgrows what DynamoDB stores', async () => {
    const T = `attr-cap-${db.engine}`;
    const cap = 30;
    const capped = dynamoSearchLogStore(db.table, { eventsPerRequest: cap });
    await searched(T, 'cached', 'guest page', T0 + 10);
    // A cached results page: everyone's clicks name its request_id.
    const clicks = Array.from({ length: cap + 5 }, (_, k) => event(1 + k, 'cached', T0 + 20));
    expect(await attributeSearchEvents(capped, T, clicks)).toBe(cap);
    expect(await attributeSearchEvents(capped, T, [event(999, 'cached', T0 + 30)])).toBe(0);
    expect(await countsOf(T, 'guest page')).toMatchObject({ searches: 1, events: { click: cap }, searches_with: { click: 1 } });
  });

  it("counts no more than the bound when the events come in ingests at once, each having read the search's row under it (ops.ts countEventOnce: the mark's condition holds the bound)", async () => {
    const T = `attr-cap-at-once-${db.engine}`;
    const cap = 3;
    const capped = dynamoSearchLogStore(db.table, { eventsPerRequest: cap });
    await searched(T, 'cached', 'shared page', T0 + 10);
    const clicks = Array.from({ length: 12 }, (_, k) => event(1 + k, 'cached', T0 + 20));
    const counted = await Promise.all(clicks.map((c) => attributeSearchEvents(capped, T, [c])));
    expect(counted.reduce((a, b) => a + b, 0)).toBe(cap);
    expect(await countsOf(T, 'shared page')).toMatchObject({ searches: 1, events: { click: cap }, searches_with: { click: 1 } });
  });
});

describe('an event whose counters could not be added', () => {
  it("counts when the ingest is retried: its mark on the search's row is written with its counts or not at all (ops.ts countEventOnce)", async () => {
    const T = 'lost-event';
    const store = dynamoSearchLogStore(db.table);
    const flaky = dynamoSearchLogStore(updateFailingOnce(db.table, '#SRCHAGG#'));
    await store.record(T, { requestId: 'r1', query: 'red shoe', day: DAY1, servedAt: T0 + 10 });
    const ev = [storedEvent(1, 'r1', T0 + 20)];
    // The ingest fails (500) at the counts' write; the client retries under its Idempotency-Key.
    await expect(attributeSearchEvents(flaky, T, ev)).rejects.toThrow('throttled');
    await attributeSearchEvents(flaky, T, ev);
    await attributeSearchEvents(flaky, T, ev);
    const { byQuery } = await store.counts(T, DAY1, DAY1, 1_000);
    expect(byQuery.get('red shoe')).toMatchObject({ events: { click: 1 }, searches_with: { click: 1 } });
  });
});

describe('events of one search ingested at once', () => {
  it("each count once, and the search once for having one, however their transactions meet on the search's row (ops.ts countEventOnce tries again from a new read)", async () => {
    const T = 'at-once';
    await store.record(T, { requestId: 'r1', query: 'tent', day: DAY1, servedAt: T0 + 10 });
    // Separate ingests (one event each, a click and a purchase apart), all at once, then one of them again.
    const events = Array.from({ length: 12 }, (_, i) => storedEvent(100 + i, 'r1', T0 + 20 + i, { type: i % 3 === 0 ? 'purchase' : 'click' }));
    await Promise.all(events.map((e) => attributeSearchEvents(dynamoSearchLogStore(db.table), T, [e])));
    await attributeSearchEvents(store, T, events);
    const { byQuery } = await store.counts(T, DAY1, DAY1, 1_000);
    expect(byQuery.get('tent')).toMatchObject({ events: { click: 8, purchase: 4 }, searches_with: { click: 1, purchase: 1 } });
  });
});

describe("an event whose search's row keeps changing under its every try", () => {
  it('is answered 503 to retry, not a 500, having written nothing, and counts once on the retry (ops.ts countEventOnce)', async () => {
    const T = 'kept-changing';
    await store.record(T, { requestId: 'r1', query: 'lamp', day: DAY1, servedAt: T0 + 10 });
    // Every transaction of the event meets another on the search's row (events of a cached page ingested at once).
    const doc = new Proxy(db.table.doc, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== 'send') return typeof v === 'function' ? v.bind(target) : v;
        return async (command: unknown, options?: unknown) => {
          if (command instanceof TransactWriteCommand) {
            throw new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }] });
          }
          return (v as (c: unknown, o?: unknown) => Promise<unknown>).call(target, command, options);
        };
      },
    }) as TableRef['doc'];
    const busy = dynamoSearchLogStore({ ...db.table, doc });
    const ev = [storedEvent(1, 'r1', T0 + 20)];
    const failure = await attributeSearchEvents(busy, T, ev).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(statusOf(failure)).toBe(503);
    await attributeSearchEvents(store, T, ev);
    const { byQuery } = await store.counts(T, DAY1, DAY1, 1_000);
    expect(byQuery.get('lamp')).toMatchObject({ events: { click: 1 }, searches_with: { click: 1 } });
  }, 30_000);
});

describe("an ingest's cost in search analytics", () => {
  it('is what docs/api.md says: a GetItem per distinct request_id, then per attributed event a consistent GetItem of its row and one TransactWriteItems of two writes', async () => {
    const T = 'ingest-cost';
    await store.record(T, { requestId: 'r1', query: 'desk', day: DAY1, servedAt: T0 + 10 });
    const reads: boolean[] = [];
    const transactions: number[] = [];
    const counted = interceptSigned<{ ConsistentRead?: boolean }>(db.table, 'getItem', async (params, call) => {
      reads.push(params.ConsistentRead === true);
      return call();
    });
    const doc = new Proxy(db.table.doc, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== 'send') return typeof v === 'function' ? v.bind(target) : v;
        return async (command: unknown, options?: unknown) => {
          if (command instanceof TransactWriteCommand) transactions.push(command.input.TransactItems?.length ?? 0);
          return (v as (c: unknown, o?: unknown) => Promise<unknown>).call(target, command, options);
        };
      },
    }) as TableRef['doc'];
    const measured = dynamoSearchLogStore({ ...counted, doc });
    await attributeSearchEvents(measured, T, [storedEvent(1, 'r1', T0 + 20), storedEvent(2, 'r1', T0 + 21, { type: 'purchase' })]);
    // The request's row read once for the batch, then once per event (each read consistent).
    expect(reads).toEqual([true, true, true]);
    expect(transactions).toEqual([2, 2]);
    const doc_ = readFileSync(join(import.meta.dirname, '../../docs/api.md'), 'utf8').replace(/\s+/g, ' ');
    expect(doc_).toContain(
      "Ingest reads each distinct request_id of a batch once (GetItem; the experiments' attribution does the same), then, per attributed event, its row again (a consistent GetItem; in an experiment the user's row too) and writes its mark and its counts in one TransactWriteItems (two writes, three with a user's first conversion; DynamoDB bills a transaction's writes twice).",
    );
  });
});

describe('a search that fails once recorded', () => {
  it('is not counted (it was not served; its retry is a search of its own)', async () => {
    const T = 'failed-search';
    const blobs = new FolderBlobStore(mkdtempSync(join(tmpdir(), 'failed-search-')));
    const embedder = {
      name: 'remote',
      dimensions: 256,
      embed: async (): Promise<Float32Array[]> => {
        throw new Error('embedding service down');
      },
    };
    const log = dynamoSearchLogStore(db.table);
    const traffic = { exposures: dynamoExposureStore(db.table), recorder: log, authorized: Promise.resolve() };
    const deps = { search: { items: db.stores.items, events: db.stores.events, blobs, embedder }, control: controlDepsOf(db.stores), synonymSets: async () => [], traffic };
    await expect(serveSearch(deps, T, searchBody.parse({ query: 'tent' }), '0b5f1c1e-0000-4000-8000-000000000001', T0)).rejects.toThrow('embedding service down');
    expect(await log.search(T, '0b5f1c1e-0000-4000-8000-000000000001')).toBeUndefined();
    const { byQuery } = await log.counts(T, DAY1, DAY1, 1000);
    expect(byQuery.get('tent')?.searches ?? 0).toBe(0);
  });
});

describe('search analytics: searches written together', () => {
  it('a search whose row DynamoDB refuses fails alone: the others of its group are written and answered', async () => {
    const T = `group-${db.engine}`;
    // A recorder of its own: its groups hold only these searches.
    const recorder = dynamoSearchLogStore(db.table);
    const search = (k: number, query = `q${k}`) => ({ requestId: `g${k}`, query, day: DAY1, servedAt: T0 + k });
    // Past DynamoDB's 400 KB an item: refused, and with it (until 2026-12-07) its whole BatchWriteItem and group.
    const tooLarge = 'x'.repeat(410_000);
    // The first is written at once; those recorded while it is under way are written together, in one BatchWriteItem.
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, k) => recorder.record(T, k === 5 ? search(k, tooLarge) : search(k))));
    expect(outcomes.map((o) => o.status)).toEqual(Array.from({ length: 10 }, (_, k) => (k === 5 ? 'rejected' : 'fulfilled')));
    for (let k = 0; k < 10; k++) expect((await recorder.search(T, `g${k}`))?.query, `g${k}`).toBe(k === 5 ? undefined : `q${k}`);
  });
});
