import { BatchWriteCommand, PutCommand, UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { TableRef } from './client.ts';

export type Row = Record<string, unknown>;

/** Query input in plain values (as lib-dynamodb takes it), without the table. */
export type QueryInput = Omit<QueryCommandInput, 'TableName'>;

const toAttrs = (row: Row): Record<string, AttributeValue> => marshall(row, { removeUndefinedValues: true, convertClassInstanceToMap: false });

/** One GetItem through the read client; the row in plain values, or undefined. */
export async function getRow(t: TableRef, key: Row, options: { consistent?: boolean; projection?: string } = {}): Promise<Row | undefined> {
  const out = await t.reads.getItem({
    TableName: t.tableName,
    Key: toAttrs(key),
    ...(options.consistent ? { ConsistentRead: true } : {}),
    ...(options.projection ? { ProjectionExpression: options.projection } : {}),
  });
  return out.Item ? unmarshall(out.Item) : undefined;
}

/** One Query page through the read client, in plain values. */
export async function queryPage(t: TableRef, input: QueryInput): Promise<{ items: Row[]; count: number; lastKey: Row | undefined }> {
  const { ExpressionAttributeValues: values, ExclusiveStartKey: start, ...rest } = input;
  const out = await t.reads.query({
    ...rest,
    TableName: t.tableName,
    ...(values ? { ExpressionAttributeValues: toAttrs(values) } : {}),
    ...(start ? { ExclusiveStartKey: toAttrs(start) } : {}),
  });
  return { items: (out.Items ?? []).map((i) => unmarshall(i)), count: out.Count ?? 0, lastKey: out.LastEvaluatedKey ? unmarshall(out.LastEvaluatedKey) : undefined };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Writes each row that is not stored yet (a conditional PutItem each, 25 at a time) and answers,
 * in order, the row as stored: the one written, or the one already there (or, for a row `gone`
 * says was removed since, the row as given, not written). A retry of a create
 * writes what its failed attempt did not, and leaves what it did (and anything done to it since).
 */
export async function putMissing(t: TableRef, rows: Row[], key: (row: Row) => Row, gone?: (row: Row) => Promise<boolean>): Promise<Row[]> {
  const out: Row[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i += 25) {
    await Promise.all(
      rows.slice(i, i + 25).map(async (row, k) => {
        // Written and removed since (`gone`): not written again.
        if (gone && (await gone(row))) {
          out[i + k] = row;
          return;
        }
        const written = await applied(() => t.doc.send(new PutCommand({ TableName: t.tableName, Item: row, ConditionExpression: 'attribute_not_exists(pk)' })));
        out[i + k] = written ? row : ((await getRow(t, key(row), { consistent: true })) ?? row);
      }),
    );
  }
  return out;
}

/**
 * Writes every row, 25 per BatchWriteItem, chunks in parallel, retrying unprocessed
 * items with backoff. Resolves only when every row is stored; throws otherwise.
 */
export async function putAll(t: TableRef, rows: Row[]): Promise<void> {
  const chunks: Row[][] = [];
  for (let i = 0; i < rows.length; i += 25) chunks.push(rows.slice(i, i + 25));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending = chunk.map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt >= 10) throw new Error(`BatchWriteItem left ${pending.length} items unprocessed after ${attempt} attempts`);
        if (attempt > 0) await sleep(Math.min(1000, 25 * 2 ** attempt));
        const out = await t.doc.send(new BatchWriteCommand({ RequestItems: { [t.tableName]: pending } }));
        pending = (out.UnprocessedItems?.[t.tableName] ?? []).flatMap((r) =>
          r.PutRequest?.Item ? [{ PutRequest: { Item: r.PutRequest.Item } }] : [],
        );
      }
    }),
  );
}

/**
 * Queries ascending until `want` rows passed the filter or the partition is exhausted (every
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
 * Reads a whole partition a page (up to 1,000 rows) at a time, for maintenance work (index
 * builds, training). `fn` returning false stops the read; resolves to false then.
 */
export async function forEachPartitionPage(t: TableRef, pk: string, fn: (rows: Row[]) => void | boolean, opts: { consistent?: boolean } = {}): Promise<boolean> {
  let start: Row | undefined;
  do {
    const page = await queryPage(t, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ExclusiveStartKey: start, Limit: 1000, ...(opts.consistent ? { ConsistentRead: true } : {}) });
    if (fn(page.items) === false) return false;
    start = page.lastKey;
  } while (start);
  return true;
}

/** Merges ascending queries over several partitions (write shards) by a numeric sort attribute. */
export async function mergeShards(
  t: TableRef,
  inputs: QueryInput[],
  want: number,
  order: (row: Row) => number,
): Promise<Row[]> {
  const pages = await Promise.all(inputs.map((input) => queryUpTo(t, input, want)));
  return pages.flat().sort((a, b) => order(a) - order(b)).slice(0, want);
}

export const isConditionFailure = (e: unknown): boolean =>
  e instanceof ConditionalCheckFailedException || (e instanceof Error && e.name === 'ConditionalCheckFailedException');

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

/** Strips the storage attributes off a row. */
export function stripKeys(row: Row): Row {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, gsi3pk: _e, gsi3sk: _f, ttl: _ttl, ...rest } = row;
  return rest;
}

/**
 * Records an attributed event on the row of the request it names (an experiment exposure, a
 * search), once: its id on the row is the guard, so a retried ingest counts nothing new.
 * `counted`: it counted now (false when it had before, or the row is gone); `first`: it is the
 * row's first event under `firstAttr` (the row keeps that event's time there).
 */
export async function markEventOnce(t: TableRef, key: Row, event: { id: number; type: string; created: number }, firstAttr: string): Promise<{ counted: boolean; first: boolean }> {
  let first = false;
  const counted = await applied(async () => {
    const out = await t.doc.send(
      new UpdateCommand({
        TableName: t.tableName,
        Key: key,
        UpdateExpression: 'SET #e = :type, #f = if_not_exists(#f, :now)',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#e)',
        ExpressionAttributeNames: { '#e': `event:${event.id}`, '#f': firstAttr },
        ExpressionAttributeValues: { ':type': event.type, ':now': event.created },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    first = out.Attributes?.[firstAttr] === undefined;
  });
  return { counted, first };
}

/**
 * The `ADD` clause of counter additions (zeros left out) with its names and values, to go in an
 * UpdateItem; undefined when there is nothing to add.
 */
export function additions(counts: Record<string, number>): { clause: string; names: Record<string, string>; values: Record<string, number> } | undefined {
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  const parts = Object.entries(counts)
    .filter(([, n]) => n !== 0)
    .map(([name, n], k) => {
      names[`#a${k}`] = name;
      values[`:a${k}`] = n;
      return `#a${k} :a${k}`;
    });
  return parts.length ? { clause: `ADD ${parts.join(', ')}`, names, values } : undefined;
}
