import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { closeTable, makeTable, type TableRef } from '../../shared/data/client.ts';
import { storesFor, type Stores } from '../../shared/data/index.ts';
import { assertLocalEndpoint, ensureTable, startDynalite } from '../../local/dynamo.ts';

export interface TestTable {
  table: TableRef;
  stores: Stores;
  /** Which engine: `dynalite` (default) or the DDB_LABEL of DDB_ENDPOINT (DynamoDB Local in CI). */
  engine: string;
  close(): Promise<void>;
}

/**
 * A fresh table for data-layer tests: on DDB_ENDPOINT when set (AWS's DynamoDB Local),
 * else on an in-memory dynalite. Never anything but loopback.
 */
export async function testTable(): Promise<TestTable> {
  const external = process.env.DDB_ENDPOINT;
  const dyn = external ? undefined : await startDynalite();
  const endpoint = external ?? (dyn?.endpoint as string);
  assertLocalEndpoint(endpoint);
  const name = `t-${randomUUID()}`;
  await ensureTable(endpoint, name);
  const table = makeTable(name, endpoint, 'us-east-1');
  return {
    table,
    stores: storesFor(table),
    engine: external ? (process.env.DDB_LABEL ?? 'external') : 'dynalite',
    close: async () => {
      closeTable(table);
      await dyn?.close();
    },
  };
}

/**
 * `table` with one of its signed calls (`op`: 'updateItem', 'batchWriteItem', ...) passed through
 * `intercept`, which is given the call's params and the call itself (to make it, or to throw).
 */
export function interceptSigned<P>(table: TableRef, op: string, intercept: (params: P, call: () => Promise<unknown>) => Promise<unknown>): TableRef {
  const signed = new Proxy(table.signed, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== op) return typeof v === 'function' ? v.bind(target) : v;
      return (params: P, signal?: AbortSignal) => intercept(params, () => (v as (p: unknown, s?: AbortSignal) => Promise<unknown>).call(target, params, signal));
    },
  });
  return { ...table, signed };
}

/**
 * `table` whose next UpdateItem on a key whose partition key holds `pkPart`, alone or within a
 * TransactWriteItems (an attributed event's mark and counts, ops.ts countEventOnce), fails, once,
 * as a throttled write that the SDK gave up retrying would (then calls go through).
 */
export function updateFailingOnce(table: TableRef, pkPart: string): TableRef {
  let failed = false;
  const failOnce = (pks: unknown[], call: () => Promise<unknown>) => {
    if (!failed && pks.some((pk) => String(pk).includes(pkPart))) {
      failed = true;
      throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    }
    return call();
  };
  const signed = interceptSigned<{ Key: Record<string, { S?: string }> }>(table, 'updateItem', async (params, call) => failOnce([params.Key.pk?.S], call));
  const doc = new Proxy(table.doc, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'send') return typeof v === 'function' ? v.bind(target) : v;
      return async (command: unknown, options?: unknown) => {
        const send = () => (v as (c: unknown, o?: unknown) => Promise<unknown>).call(target, command, options);
        if (!(command instanceof TransactWriteCommand)) return send();
        return failOnce(
          (command.input.TransactItems ?? []).map((i) => i.Update?.Key?.pk),
          send,
        );
      };
    },
  }) as TableRef['doc'];
  return { ...signed, doc };
}
