import type { PassCursor as Cursor } from '../maintenance.ts';
import type { TableRef } from './client.ts';
import { PassCursor } from './entities.ts';
import { getRow, put } from './ops.ts';

/** The maintenance pass's cursor: one row (a consistent read, a plain put: the last pass's word wins). */
export function dynamoPassCursor(t: TableRef): Cursor {
  return {
    get: async () => {
      const row = await getRow(t, PassCursor.key({}), { consistent: true });
      return typeof row?.next === 'string' ? row.next : undefined;
    },
    set: (next: string) => put(t, { ...PassCursor.keys({}), next }),
  };
}
