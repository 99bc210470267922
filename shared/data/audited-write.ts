import type { AuditEntry } from '../domain/console-records.ts';
import type { TableRef } from './client.ts';
import { AuditEntry as Audit } from './entities.ts';
import { put, remove, transact, type TransactWrite, update } from './ops.ts';

/**
 * A record's write (put, update or removal), with its audit trail entry in one transaction when there is one (both
 * written or neither, as a control record's: a change that failed and is sent again is written
 * then, with its one entry). The record's write comes first, so its condition failing is told
 * apart (`transact`). Synonym sets, credentials and the control records (console.ts, which also
 * takes back an entry with a write that undoes its change) write through it.
 */
export function writtenWithEntry(t: TableRef, tenant: string, write: TransactWrite, entry: AuditEntry | undefined): Promise<unknown> {
  if (entry) return transact(t, [write, { put: { ...Audit.key({ tenant, resource: entry.resource, id: entry.id }), ...entry } }]);
  if ('put' in write) return put(t, write.put, write.when);
  if ('update' in write) return update(t, write.update, write.change, write.when ? { when: write.when } : {});
  return remove(t, write.remove, write.when);
}
