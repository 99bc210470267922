import type { SynonymSet, SynonymStore } from '../search/synonyms.ts';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { writtenWithEntry } from './audited-write.ts';
import { sortId, SynonymSet as Synonyms, SynonymSlot } from './entities.ts';
import { Conflict } from '../domain/errors.ts';
import { withRetry, type RetryPolicy } from '../retry.ts';
import { applied, getRow, isStored, queryPage, queryUpTo, stripKeys, type Row, type TransactWrite } from './ops.ts';
import { placesOf } from './places.ts';
import { removedRecords } from './removed.ts';

/** Changes of one set that keep losing to others try again after a growing random pause (as the control records' do). */
const CHANGE_RACES: RetryPolicy = { attempts: 32, baseMs: 2, maxMs: 100, jitter: 'full' };

const ofTenant = (tenant: string, after?: number) => Synonyms.indexes.primary.query({ tenant }, after !== undefined ? { gt: sortId(after) } : undefined);
const key = (tenant: string, id: number) => Synonyms.key({ tenant, id });

/** A tenant's synonym sets: one partition, in id order; search reads it whole (one Query). */
const fromRow = (r: Row): SynonymSet => {
  const x = stripKeys(r);
  return {
    id: Number(x.id),
    type: x.type === 'one_way' ? 'one_way' : 'two_way',
    input: typeof x.input === 'string' ? x.input : null,
    synonyms: Array.isArray(x.synonyms) ? x.synonyms.map(String) : [],
    created: Number(x.created),
    updated_at: Number(x.updated_at),
  };
};

/** Every synonym set of a tenant: what search applies (one Query; the search function's bundle carries only this). */
export async function synonymSetsOf(t: TableRef, tenant: string): Promise<SynonymSet[]> {
  return (await queryUpTo(t, ofTenant(tenant), Infinity)).map(fromRow);
}

/** A tenant's sets within MAX_SYNONYM_SETS: each holds one of the tenant's places (shared/data/places.ts). */
const synonymPlaces = (t: TableRef) =>
  placesOf(t, {
    records: (tenant) => ofTenant(tenant),
    recordKey: key,
    places: (tenant) => SynonymSlot.indexes.primary.query({ tenant }),
    placeKey: (tenant, slot) => SynonymSlot.key({ tenant, slot }),
  });

export function dynamoSynonymStore(t: TableRef): SynonymStore {
  const places = synonymPlaces(t);
  const removed = removedRecords(t, 'synonym');
  return {
    nextId: (tenant) => allocateIds(t, tenant, 'synonym', 1),
    // The control records' counter (shared/data/console.ts): one trail, its ids in the order taken.
    auditId: (tenant) => allocateIds(t, tenant, 'audit', 1),

    create: (tenant, s, cap, entry) => places.create(tenant, s.id, cap, async () => void (await writtenWithEntry(t, tenant, { put: { ...key(tenant, s.id), ...s } }, entry))),

    async get(tenant, id) {
      const r = await getRow(t, key(tenant, id), { consistent: true });
      return r ? fromRow(r) : undefined;
    },

    async page(tenant, q) {
      const page = await queryPage(t, { ...ofTenant(tenant, q.after), Limit: q.limit + 1, ConsistentRead: true });
      const rows = page.items.map(fromRow);
      return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
    },

    all: (tenant) => synonymSetsOf(t, tenant),

    // Each change is conditional on the set's revision as read (`rev`, absent before its first
    // change): a change made meanwhile is read again, never overwritten with the fields it did not set.
    change: (tenant, id, next, audit) =>
      withRetry<SynonymSet | undefined>(CHANGE_RACES, async () => {
        const row = await getRow(t, key(tenant, id), { consistent: true });
        if (!row) return { value: undefined };
        const rev = typeof row.rev === 'number' ? row.rev : undefined;
        const cur = fromRow(row);
        const s = next(cur);
        // No change (the set as it is): nothing written, no audit entry.
        if (s === cur) return { value: cur };
        const entry = await audit?.('update', cur, s);
        const write: TransactWrite = { put: { ...key(tenant, id), ...s, rev: (rev ?? 0) + 1 }, when: (x) => x.and(isStored(x), ...x.fields({ rev })) };
        const stored = await applied(() => writtenWithEntry(t, tenant, write, entry));
        return stored ? { value: s } : { failure: new Conflict('changed_meanwhile', `Synonym set ${id} kept changing meanwhile; retry.`), retryable: true };
      }),

    // Kept as it is first (`removed`), for a retry of the create that stored it; deleted only if
    // still that revision, so what is kept is what was deleted (a change landing between them is
    // read again).
    remove: (tenant, id, audit) =>
      withRetry<boolean>(CHANGE_RACES, async () => {
        const row = await getRow(t, key(tenant, id), { consistent: true });
        if (!row) return { value: false };
        const rev = typeof row.rev === 'number' ? row.rev : undefined;
        await removed.keep(tenant, id, row);
        const entry = await audit?.('delete', fromRow(row), null);
        const write: TransactWrite = { remove: key(tenant, id), when: (x) => x.and(isStored(x), ...x.fields({ rev })) };
        if (!(await applied(() => writtenWithEntry(t, tenant, write, entry)))) {
          return { failure: new Conflict('changed_meanwhile', `Synonym set ${id} kept changing meanwhile; retry.`), retryable: true };
        }
        await places.release(tenant, id);
        return { value: true };
      }),

    async removed(tenant, id) {
      const r = await removed.get(tenant, id);
      return r ? fromRow(r) : undefined;
    },
  };
}
