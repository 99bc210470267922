import { nowSeconds } from '../clock.ts';
import { config } from '../config.ts';
import type { TableRef } from './client.ts';
import { RemovedRecord } from './entities.ts';
import { getRow, put, stripKeys, type Row } from './ops.ts';

/**
 * Deleted records of a kind, kept for the retries of their creates (entities.ts `RemovedRecord`):
 * a create retried under its Idempotency-Key after its first attempt stored the record, and the
 * record was deleted since, answers the record as it was instead of storing it again.
 */
export interface RemovedRecords {
  /** Keeps what `row` (a stored record, keys and all) holds, before it is deleted. */
  keep(tenant: string, id: number, row: Row): Promise<void>;
  /** The record kept for `id`, as `keep` was given it without its keys; undefined when none is (or no longer). */
  get(tenant: string, id: number): Promise<Row | undefined>;
}

/** How long a deleted record is kept: an Idempotency-Key's life (a retry comes within it) and an hour. */
const keepSeconds = () => config().idempotencyTtlSeconds + 3600;

export function removedRecords(t: TableRef, kind: string): RemovedRecords {
  return {
    async keep(tenant, id, row) {
      const now = nowSeconds();
      await put(t, { ...RemovedRecord.key({ tenant, kind, id }), record: stripKeys(row), removed_at: now, ttl: now + keepSeconds() });
    },
    async get(tenant, id) {
      const row = await getRow(t, RemovedRecord.key({ tenant, kind, id }), { consistent: true });
      return row?.record as Row | undefined;
    },
  };
}
