import type { TableRef } from './client.ts';
import { Health } from './entities.ts';
import { getRow } from './ops.ts';

/**
 * The health check's read: one eventually consistent GetItem of a row that never exists (half a
 * read unit), which only answers when the table, the network path and the credentials all work.
 */
export async function pingTable(t: TableRef): Promise<void> {
  await getRow(t, Health.key({}));
}
