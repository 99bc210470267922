import type { SynonymSet, SynonymStore } from '../search/synonyms.ts';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { sortId, SynonymSet as Synonyms } from './entities.ts';
import { applied, countUpTo, getRow, isStored, put, queryPage, queryUpTo, remove, stripKeys, type Row } from './ops.ts';

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

export function dynamoSynonymStore(t: TableRef): SynonymStore {
  return {
    nextId: (tenant) => allocateIds(t, tenant, 'synonym', 1),

    async put(tenant, s) {
      await put(t, { ...key(tenant, s.id), ...s });
    },

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

    count: (tenant, upTo) => countUpTo(t, { ...ofTenant(tenant), ConsistentRead: true }, upTo),

    countBefore: (tenant, id, upTo) => countUpTo(t, { ...Synonyms.indexes.primary.query({ tenant }, { lt: sortId(id) }), ConsistentRead: true }, upTo),

    replace: (tenant, s) => applied(() => put(t, { ...key(tenant, s.id), ...s }, isStored)),

    remove: (tenant, id) => applied(() => remove(t, key(tenant, id), isStored)),
  };
}
