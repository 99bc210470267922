import { BatchWriteCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { TableRef } from './client.ts';

export type Row = Record<string, unknown>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
export async function queryUpTo(t: TableRef, input: Omit<QueryCommandInput, 'TableName'>, want: number): Promise<Row[]> {
  const out: Row[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const limit = input.FilterExpression ? Math.max(want * 2, 50) : want - out.length;
    const page = await t.doc.send(
      new QueryCommand({
        ...input,
        TableName: t.tableName,
        ...(Number.isFinite(limit) ? { Limit: limit } : {}),
        ExclusiveStartKey: start,
      }),
    );
    for (const row of page.Items ?? []) {
      out.push(row);
      if (out.length >= want) return out;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** Counts a query's matches in COUNT pages (nothing returned or unmarshalled), stopping at `upTo`. */
export async function countUpTo(t: TableRef, input: Omit<QueryCommandInput, 'TableName' | 'Select' | 'Limit' | 'ExclusiveStartKey'>, upTo = Infinity): Promise<number> {
  let n = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await t.doc.send(
      new QueryCommand({ ...input, TableName: t.tableName, Select: 'COUNT', ...(Number.isFinite(upTo) ? { Limit: Math.max(1, upTo - n) } : {}), ExclusiveStartKey: start }),
    );
    n += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start && n < upTo);
  return n;
}

/**
 * Reads a whole partition a page (up to 1,000 rows) at a time, for maintenance work (index
 * builds, training). `fn` returning false stops the read; resolves to false then.
 */
export async function forEachPartitionPage(t: TableRef, pk: string, fn: (rows: Row[]) => void | boolean): Promise<boolean> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await t.doc.send(
      new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ExclusiveStartKey: start, Limit: 1000 }),
    );
    if (fn(page.Items ?? []) === false) return false;
    start = page.LastEvaluatedKey;
  } while (start);
  return true;
}

/** Merges ascending queries over several partitions (write shards) by a numeric sort attribute. */
export async function mergeShards(
  t: TableRef,
  inputs: Omit<QueryCommandInput, 'TableName'>[],
  want: number,
  order: (row: Row) => number,
): Promise<Row[]> {
  const pages = await Promise.all(inputs.map((input) => queryUpTo(t, input, want)));
  return pages.flat().sort((a, b) => order(a) - order(b)).slice(0, want);
}

export const isConditionFailure = (e: unknown): boolean =>
  e instanceof ConditionalCheckFailedException || (e instanceof Error && e.name === 'ConditionalCheckFailedException');

/** Strips the storage attributes off a row. */
export function stripKeys(row: Row): Row {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, gsi3pk: _e, gsi3sk: _f, ttl: _ttl, ...rest } = row;
  return rest;
}
