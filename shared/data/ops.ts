import { DeleteCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException, TransactionCanceledException, TransactionConflictException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { withRetry } from '../retry.ts';
import { LeftUnprocessed, onlyForNow } from './busy.ts';
import type { TableRef } from './client.ts';
import type { QueryInput } from './entity.ts';
import { Expr, type Change, type Condition } from './expressions.ts';
import { TABLE_SCHEMA } from './table-schema.ts';

export type Row = Record<string, unknown>;
export type { QueryInput };

const toAttrs = (row: Row): Record<string, AttributeValue> => marshall(row, { removeUndefinedValues: true, convertClassInstanceToMap: false });

/** One GetItem through the read client; the row in plain values, or undefined. */
export async function getRow(t: TableRef, key: Row, options: { consistent?: boolean; projection?: string } = {}): Promise<Row | undefined> {
  const out = await t.signed.getItem({
    TableName: t.tableName,
    Key: toAttrs(key),
    ...(options.consistent ? { ConsistentRead: true } : {}),
    ...(options.projection ? { ProjectionExpression: options.projection } : {}),
  });
  return out.Item ? unmarshall(out.Item) : undefined;
}

/** How a row's key names it among a BatchGetItem's answers (which come in no particular order). */
const keyOf = (row: Row) => JSON.stringify([row[TABLE_SCHEMA.partitionKey], row[TABLE_SCHEMA.sortKey]]);

/**
 * Rows by key, in the keys' order (undefined where none), up to 100 keys to a BatchGetItem (its
 * limit), chunks in parallel, each sent again with the keys DynamoDB left unprocessed (as
 * `batchWrite` does). One round trip where a GetItem a key would be as many. Eventually
 * consistent unless `consistent`, as `getRow`.
 */
export async function getRows(t: TableRef, keys: readonly Row[], options: { consistent?: boolean } = {}): Promise<(Row | undefined)[]> {
  const found = new Map<string, Row>();
  const chunks: Row[][] = [];
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending = [...new Map(chunk.map((k) => [keyOf(k), toAttrs(k)])).values()];
      await withRetry(BATCH_RETRY, async (n) => {
        const out = await t.signed.batchGetItem({ RequestItems: { [t.tableName]: { Keys: pending, ...(options.consistent ? { ConsistentRead: true } : {}) } } });
        for (const item of out.Responses?.[t.tableName] ?? []) {
          const row = unmarshall(item);
          found.set(keyOf(row), row);
        }
        pending = out.UnprocessedKeys?.[t.tableName]?.Keys ?? [];
        return pending.length === 0 ? { value: undefined } : { failure: new LeftUnprocessed(`BatchGetItem left ${pending.length} keys unprocessed after ${n} attempts`), retryable: true };
      });
    }),
  );
  return keys.map((k) => found.get(keyOf(k)));
}

/** One Query page through the read client, in plain values. */
export async function queryPage(t: TableRef, input: QueryInput): Promise<{ items: Row[]; count: number; scanned: number; lastKey: Row | undefined }> {
  const { ExpressionAttributeValues: values, ExclusiveStartKey: start, ...rest } = input;
  const out = await t.signed.query({
    ...rest,
    TableName: t.tableName,
    ...(values ? { ExpressionAttributeValues: toAttrs(values) } : {}),
    ...(start ? { ExclusiveStartKey: toAttrs(start) } : {}),
  });
  return {
    items: (out.Items ?? []).map((i) => unmarshall(i)),
    count: out.Count ?? 0,
    scanned: out.ScannedCount ?? out.Count ?? 0,
    lastKey: out.LastEvaluatedKey ? unmarshall(out.LastEvaluatedKey) : undefined,
  };
}

/** DynamoDB's most requests in one BatchWriteItem: the rows `putAll` and `deleteAll` write in one, and `putMissing` writes at once. */
export const WRITE_BATCH = 25;

/**
 * Writes each row that is not stored yet (a conditional PutItem each, 25 at a time) and answers,
 * in order, the row as stored: the one written, or the one already there (or, for a row `gone`
 * says was removed since, the row as given, not written). A retry of a create
 * writes what its failed attempt did not, and leaves what it did (and anything done to it since).
 * `written` is called with each row this call wrote.
 */
export async function putMissing(t: TableRef, rows: Row[], key: (row: Row) => Row, gone?: (row: Row) => Promise<boolean>, written?: (row: Row) => void): Promise<Row[]> {
  const out: Row[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i += WRITE_BATCH) {
    await Promise.all(
      rows.slice(i, i + WRITE_BATCH).map(async (row, k) => {
        // Written and removed since (`gone`): not written again.
        if (gone && (await gone(row))) {
          out[i + k] = row;
          return;
        }
        if (await applied(() => put(t, row, isNew))) {
          out[i + k] = row;
          written?.(row);
        } else out[i + k] = (await getRow(t, key(row), { consistent: true })) ?? row;
      }),
    );
  }
  return out;
}

/**
 * Writes every row, 25 per BatchWriteItem, chunks in parallel, retrying unprocessed
 * items with backoff. Resolves only when every row is stored; throws otherwise, once every
 * chunk has settled. `onWritten` hears how many rows each BatchWriteItem stored as it answers,
 * so a caller that counts what it wrote counts the rows of a write that failed part way too.
 */
export async function putAll(t: TableRef, rows: Row[], onWritten?: (n: number) => void): Promise<void> {
  const chunks: Row[][] = [];
  for (let i = 0; i < rows.length; i += WRITE_BATCH) chunks.push(rows.slice(i, i + WRITE_BATCH));
  const settled = await Promise.allSettled(
    chunks.map((chunk) =>
      batchWrite(
        t,
        chunk.map((Item) => ({ PutRequest: { Item } })),
        'items',
        onWritten,
      ),
    ),
  );
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
}

/** Deletes rows by key, 25 to a BatchWriteItem (one after another), retrying what DynamoDB leaves unprocessed. */
export async function deleteAll(t: TableRef, keyList: Row[]): Promise<void> {
  for (let i = 0; i < keyList.length; i += WRITE_BATCH)
    await batchWrite(
      t,
      keyList.slice(i, i + WRITE_BATCH).map((Key) => ({ DeleteRequest: { Key } })),
      'deletes',
    );
}

type WriteRequest = { PutRequest: { Item: Row } } | { DeleteRequest: { Key: Row } };
type Marshalled = Record<string, AttributeValue>;
type WireRequest = { PutRequest: { Item: Marshalled } } | { DeleteRequest: { Key: Marshalled } };

/** Unprocessed items of a BatchWriteItem are sent again: up to 10 attempts, 50 ms doubling to 1 s apart. */
const BATCH_RETRY = { attempts: 10, baseMs: 25, maxMs: 1000, jitter: 'none' } as const;
/** A cancelled transaction's: BATCH_RETRY's, each delay drawn at random (two transactions cancelled by each other's hold would otherwise meet again). */
const TRANSACTION_RETRY = { ...BATCH_RETRY, jitter: 'full' } as const;

/**
 * One BatchWriteItem of up to 25 requests, sent again with what it left unprocessed until none is
 * left; `onWritten` hears how many each answer applied.
 */
async function batchWrite(t: TableRef, requests: WriteRequest[], noun: string, onWritten?: (n: number) => void): Promise<void> {
  let pending = requests.map((r): WireRequest => ('PutRequest' in r ? { PutRequest: { Item: toAttrs(r.PutRequest.Item) } } : { DeleteRequest: { Key: toAttrs(r.DeleteRequest.Key) } }));
  await withRetry(BATCH_RETRY, async (n) => {
    const out = await t.signed.batchWriteItem({ RequestItems: { [t.tableName]: pending } });
    const sent = pending.length;
    pending = (out.UnprocessedItems?.[t.tableName] ?? []).flatMap((r): WireRequest[] =>
      r.PutRequest?.Item ? [{ PutRequest: { Item: r.PutRequest.Item } }] : r.DeleteRequest?.Key ? [{ DeleteRequest: { Key: r.DeleteRequest.Key } }] : [],
    );
    onWritten?.(sent - pending.length);
    return pending.length === 0 ? { value: undefined } : { failure: new LeftUnprocessed(`BatchWriteItem left ${pending.length} ${noun} unprocessed after ${n} attempts`), retryable: true };
  });
}

/**
 * Queries (in the input's order) until `want` rows passed the filter or the partition is exhausted (every
 * match with `want` Infinity). DynamoDB applies Limit before FilterExpression, so a filtered
 * query may need several pages.
 */
export async function queryUpTo(t: TableRef, input: QueryInput, want: number): Promise<Row[]> {
  const out: Row[] = [];
  let start: Row | undefined;
  do {
    const limit = input.FilterExpression ? Math.max(want * 2, 50) : want - out.length;
    const page = await queryPage(t, { ...input, ...(Number.isFinite(limit) ? { Limit: limit } : {}), ExclusiveStartKey: start });
    for (const row of page.items) {
      out.push(row);
      if (out.length >= want) return out;
    }
    start = page.lastKey;
  } while (start);
  return out;
}

/**
 * Rows a filtered list (items in a `created` window or of a hashed category, events of a user and
 * type) reads at most, in pages of 500: past it the page ends where the read did, with `has_more`
 * and its cursor there. Until 2026-12-05 an item window that held nothing read the whole catalog
 * in one request (a million items, some 20,000 Queries: a 503), and a user's events of a type
 * the user's whole history.
 */
export const FILTERED_LIST_READ = { maxRows: 2000, pageSize: 500 } as const;

/**
 * A filtered list's read: up to `want` matches of `input` (a Query with a FilterExpression),
 * reading at most `maxRows` rows in pages of `pageSize`. `stoppedAt` is the key of the last row
 * read when the read stopped there before finding `want` (undefined when it found them, or the
 * partition ended, also exactly at the bound): a page that did not fill ends where the read did, so a filter that matches
 * little costs one bounded read, not the partition.
 */
export async function queryFilteredUpTo(t: TableRef, input: QueryInput, want: number, bound: { maxRows: number; pageSize: number }): Promise<{ rows: Row[]; stoppedAt: Row | undefined }> {
  const rows: Row[] = [];
  let start: Row | undefined;
  let read = 0;
  do {
    const page = await queryPage(t, { ...input, Limit: Math.min(bound.pageSize, bound.maxRows - read), ExclusiveStartKey: start });
    read += page.scanned;
    rows.push(...page.items);
    start = page.lastKey;
  } while (start && rows.length < want && read < bound.maxRows);
  if (rows.length >= want) return { rows: rows.slice(0, want), stoppedAt: undefined };
  // DynamoDB gives a LastEvaluatedKey whenever a page fills its Limit, also when that row was the
  // partition's last: one row more, read from there, tells whether anything lies past it (scanned
  // 0: the partition ended, so no cursor leads on to an empty page).
  if (start && read >= bound.maxRows && (await queryPage(t, { ...input, Limit: 1, ExclusiveStartKey: start })).scanned === 0) return { rows, stoppedAt: undefined };
  return { rows, stoppedAt: start };
}

/** Counts a query's matches in COUNT pages (nothing returned or unmarshalled), stopping at `upTo`. */
export async function countUpTo(t: TableRef, input: Omit<QueryInput, 'Select' | 'Limit' | 'ExclusiveStartKey'>, upTo = Infinity): Promise<number> {
  let n = 0;
  let start: Row | undefined;
  do {
    const page = await queryPage(t, { ...input, Select: 'COUNT', ...(Number.isFinite(upTo) ? { Limit: Math.max(1, upTo - n) } : {}), ExclusiveStartKey: start });
    n += page.count;
    start = page.lastKey;
  } while (start && n < upTo);
  return n;
}

/**
 * Reads a whole partition (`partition`, an entity's query) a page (up to 1,000 rows) at a time, for maintenance work (index
 * builds, training). `fn` returning false stops the read; resolves to false then.
 */
export async function forEachPartitionPage(t: TableRef, partition: QueryInput, fn: (rows: Row[]) => void | boolean, opts: { consistent?: boolean } = {}): Promise<boolean> {
  let start: Row | undefined;
  do {
    const page = await queryPage(t, { ...partition, ExclusiveStartKey: start, Limit: 1000, ...(opts.consistent ? { ConsistentRead: true } : {}) });
    if (fn(page.items) === false) return false;
    start = page.lastKey;
  } while (start);
  return true;
}

/** Merges ascending queries over several partitions (write shards) by a numeric sort attribute. */
export async function mergeShards(t: TableRef, inputs: QueryInput[], want: number, order: (row: Row) => number): Promise<Row[]> {
  const pages = await Promise.all(inputs.map((input) => queryUpTo(t, input, want)));
  return pages
    .flat()
    .sort((a, b) => order(a) - order(b))
    .slice(0, want);
}

export const isConditionFailure = (e: unknown): boolean => e instanceof ConditionalCheckFailedException || (e instanceof Error && e.name === 'ConditionalCheckFailedException');

/** Runs a conditional write: true when it was applied, false when its condition did not hold (any other error is thrown). */
export async function applied(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (e) {
    if (isConditionFailure(e)) return false;
    throw e;
  }
}

/** The storage attributes of a row: the table's and every index's keys, and the TTL. */
const STORAGE_ATTRIBUTES: ReadonlySet<string> = new Set([
  TABLE_SCHEMA.partitionKey,
  TABLE_SCHEMA.sortKey,
  TABLE_SCHEMA.ttlAttribute,
  ...TABLE_SCHEMA.indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
]);

/** Strips the storage attributes off a row. */
export function stripKeys(row: Row): Row {
  const out: Row = {};
  for (const k in row) if (!STORAGE_ATTRIBUTES.has(k)) out[k] = row[k];
  return out;
}

/** One UpdateItem of a change, under a condition if given; its ReturnValues' attributes. */
export async function update(
  t: TableRef,
  key: Row,
  change: Change,
  opts: { when?: Condition; returnValues?: 'UPDATED_OLD' | 'UPDATED_NEW' | 'ALL_NEW'; signal?: AbortSignal } = {},
): Promise<Row | undefined> {
  const x = new Expr();
  const UpdateExpression = x.update(change);
  const ConditionExpression = opts.when?.(x);
  const { ExpressionAttributeNames, ExpressionAttributeValues } = x.params();
  const out = await t.signed.updateItem(
    {
      TableName: t.tableName,
      Key: toAttrs(key),
      UpdateExpression,
      ...(ConditionExpression ? { ConditionExpression } : {}),
      ...(ExpressionAttributeNames ? { ExpressionAttributeNames } : {}),
      ...(ExpressionAttributeValues ? { ExpressionAttributeValues: toAttrs(ExpressionAttributeValues) } : {}),
      ...(opts.returnValues ? { ReturnValues: opts.returnValues } : {}),
    },
    opts.signal,
  );
  return out.Attributes ? unmarshall(out.Attributes) : undefined;
}

/** One PutItem, under a condition if given. */
export async function put(t: TableRef, row: Row, when?: Condition): Promise<void> {
  const x = new Expr();
  await t.doc.send(new PutCommand({ TableName: t.tableName, Item: row, ...(when ? { ConditionExpression: when(x), ...x.params() } : {}) }));
}

/** One DeleteItem, under a condition if given. */
export async function remove(t: TableRef, key: Row, when?: Condition): Promise<void> {
  const x = new Expr();
  await t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: key, ...(when ? { ConditionExpression: when(x), ...x.params() } : {}) }));
}

/** One write of a transaction (`transact`): a put, an update or a delete, under a condition if given. */
export type TransactWrite = { put: Row; when?: Condition } | { update: Row; change: Change; when?: Condition } | { remove: Row; when?: Condition };

/**
 * Writes in one TransactWriteItems: all of them, or none. When the first write's condition failed,
 * or another write of its row under way cancelled the transaction (`TransactionConflict`: the row
 * is changing), it throws ConditionalCheckFailedException as that write alone would, so `applied`
 * tells it apart as it does a single write's. A transaction cancelled only for throttling or
 * another's hold on a later row wrote nothing: it is sent again (as the SDK does a throttled single
 * write, which it does not do for a cancelled transaction), up to TRANSACTION_RETRY's attempts. Any other
 * cancellation (the others' conditions, an item too large) is thrown as DynamoDB answered it.
 */
export async function transact(t: TableRef, writes: readonly [TransactWrite, ...TransactWrite[]]): Promise<void> {
  const item = (w: TransactWrite) => {
    const x = new Expr();
    const UpdateExpression = 'update' in w ? x.update(w.change) : undefined;
    const ConditionExpression = w.when?.(x);
    const cond = { TableName: t.tableName, ...(ConditionExpression ? { ConditionExpression } : {}) };
    if ('put' in w) return { Put: { ...cond, Item: w.put, ...x.params() } };
    if ('update' in w) return { Update: { ...cond, Key: w.update, UpdateExpression, ...x.params() } };
    return { Delete: { ...cond, Key: w.remove, ...x.params() } };
  };
  const TransactItems = writes.map(item);
  await withRetry(TRANSACTION_RETRY, async () => {
    try {
      await t.doc.send(new TransactWriteCommand({ TransactItems }));
      return { value: undefined };
    } catch (e) {
      const reasons =
        e instanceof TransactionCanceledException || (e instanceof Error && e.name === 'TransactionCanceledException') ? (e as TransactionCanceledException).CancellationReasons : undefined;
      if (!reasons) throw e;
      const first = reasons[0]?.Code;
      if (first === 'ConditionalCheckFailed' || first === 'TransactionConflict') throw new ConditionalCheckFailedException({ message: `The conditional request failed (${first})`, $metadata: {} });
      return { failure: e, retryable: onlyForNow(reasons) };
    }
  });
}

/**
 * A query with a filter and/or a projection added, their names and values beside the key
 * condition's (whose placeholders are `:pk`, `:after`, ...: no clash with the filter's).
 */
export function refine(q: QueryInput, opts: { filter?: Condition; project?: readonly string[] }): QueryInput {
  const x = new Expr();
  const filter = opts.filter?.(x);
  const projection = opts.project?.map((a) => x.name(a)).join(', ');
  const p = x.params();
  return {
    ...q,
    ...(filter ? { FilterExpression: filter } : {}),
    ...(projection ? { ProjectionExpression: projection } : {}),
    ...(p.ExpressionAttributeNames ? { ExpressionAttributeNames: { ...q.ExpressionAttributeNames, ...p.ExpressionAttributeNames } } : {}),
    ...(p.ExpressionAttributeValues ? { ExpressionAttributeValues: { ...q.ExpressionAttributeValues, ...p.ExpressionAttributeValues } } : {}),
  };
}

/** The condition of a create: no row under the key yet. */
export const isNew: Condition = (x) => x.absent(TABLE_SCHEMA.partitionKey);
/** The condition of a change of a row that must be there. */
export const isStored: Condition = (x) => x.exists(TABLE_SCHEMA.partitionKey);

/**
 * Events attributed to one served request at most: an experiment's exposure or a search's row
 * (each event is marked on it, so that a retried ingest counts it once). A response many people
 * are shown under one user id (a cached page for a shared guest id), or a cached search page,
 * gathers every click on it: at about 5,000 to 16,000 marks the row passed DynamoDB's 400 KB item
 * limit, and from then on every ingest holding an event that named the request failed (500) after
 * storing its events. Past this many, its events count for nothing. 1,000 marks of the longest
 * event type are under 90 KB.
 */
export const EVENTS_PER_REQUEST_MAX = 1_000;

/**
 * `countEventOnce`'s tries when a write of the same rows meanwhile refused its transaction (the
 * request's row or a row its counts read changed between its read and its write: clicks on one
 * cached page, ingested at once), each from a new read, TRANSACTION_RETRY's delays between them.
 */
const COUNT_EVENT_RETRY = TRANSACTION_RETRY;

/**
 * Records an attributed event on the row of the request it names (an experiment exposure, a
 * search), once, and what it counts for, in one TransactWriteItems: the event's id marked on the
 * row is the guard, so that a retried ingest counts nothing new, and the mark and the counts are
 * written together or not at all. Until 2026-12-08 the mark and the counts were two writes, the
 * mark taken back when the counts' write failed: a counts' write cut off at the request's deadline
 * (shared/deadline.ts) that DynamoDB had applied all the same lost its mark, and the ingest's
 * retry counted the event again.
 *
 * The row is read first (strongly consistent): `false` when the event is marked on it already,
 * the row is gone, or `cap` events are marked on it (each mark makes the row longer, and past
 * DynamoDB's 400 KB a write of it fails; the row counts its marks in `marked`). Else `counts` is
 * told whether the event is the row's first under `firstAttr` (the row keeps that event's time
 * there) and gives the writes of what it counts for; the mark's condition holds the row to what
 * was read, and a write refused by a change meanwhile (another event of the request, a row that
 * `counts` read) is tried again from the read (COUNT_EVENT_RETRY). `true`: it counted now.
 */
export async function countEventOnce(
  t: TableRef,
  key: Row,
  event: { id: number; type: string; created: number },
  firstAttr: string,
  cap: number | undefined,
  counts: (first: boolean) => Promise<readonly TransactWrite[]>,
): Promise<boolean> {
  const mark = `event:${event.id}`;
  const tries = withRetry<boolean>(COUNT_EVENT_RETRY, async () => {
    const row = await getRow(t, key, { consistent: true });
    if (!row || row[mark] !== undefined || (cap !== undefined && Number(row.marked ?? 0) >= cap)) return { value: false };
    const first = row[firstAttr] === undefined;
    const marking: TransactWrite = {
      update: key,
      change: { set: { [mark]: event.type }, setIfAbsent: { [firstAttr]: event.created }, ...(cap !== undefined ? { add: { marked: 1 } } : {}) },
      when: (x) => x.and(isStored(x), x.absent(mark), first ? x.absent(firstAttr) : x.exists(firstAttr), ...(cap !== undefined ? [x.or(x.absent('marked'), x.cmp('marked', '<', cap))] : [])),
    };
    try {
      await transact(t, [marking, ...(await counts(first))]);
      return { value: true };
    } catch (e) {
      if (isConditionFailure(e) || cancelledByCondition(e)) return { failure: e, retryable: true };
      throw e;
    }
  });
  // Every try refused by a change meanwhile (the request's row, or one its counts read, busy with
  // other events): nothing was written, and the ingest's retry counts the event. Thrown as the
  // conflict it is, a 503 to retry (busy.ts), not the condition failure (a 500, as if unexpected).
  return tries.catch((e: unknown) => {
    if (isConditionFailure(e) || cancelledByCondition(e)) throw new TransactionConflictException({ message: `The row of the request kept changing: event ${event.id} not counted yet`, $metadata: {} });
    throw e;
  });
}

/** Whether a TransactWriteItems was cancelled by a write's condition other than its first (`transact` throws the first's as ConditionalCheckFailedException). */
function cancelledByCondition(e: unknown): boolean {
  const reasons = e instanceof TransactionCanceledException || (e instanceof Error && e.name === 'TransactionCanceledException') ? (e as TransactionCanceledException).CancellationReasons : undefined;
  return (reasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed' || r.Code === 'TransactionConflict');
}
