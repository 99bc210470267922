import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SynonymSet, SynonymStore } from '../search/synonyms.ts';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { keys } from './keys.ts';
import { applied, countUpTo, getRow, queryPage, queryUpTo, stripKeys, type Row } from './ops.ts';

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
  return (await queryUpTo(t, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.synonymPk(tenant) } }, Infinity)).map(fromRow);
}

export function dynamoSynonymStore(t: TableRef): SynonymStore {
  return {
    nextId: (tenant) => allocateIds(t, tenant, 'synonym', 1),

    async put(tenant, s) {
      await t.doc.send(new PutCommand({ TableName: t.tableName, Item: { ...keys.synonym(tenant, s.id), ...s } }));
    },

    async get(tenant, id) {
      const r = await getRow(t, keys.synonym(tenant, id), { consistent: true });
      return r ? fromRow(r) : undefined;
    },

    async page(tenant, q) {
      const page = await queryPage(t, {
        KeyConditionExpression: q.after !== undefined ? 'pk = :pk AND sk > :after' : 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.synonymPk(tenant), ...(q.after !== undefined ? { ':after': keys.sortId(q.after) } : {}) },
        Limit: q.limit + 1,
        ConsistentRead: true,
      });
      const rows = page.items.map(fromRow);
      return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
    },

    all: (tenant) => synonymSetsOf(t, tenant),

    count: (tenant, upTo) => countUpTo(t, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.synonymPk(tenant) }, ConsistentRead: true }, upTo),

    async replace(tenant, s) {
      return applied(() =>
        t.doc.send(new PutCommand({ TableName: t.tableName, Item: { ...keys.synonym(tenant, s.id), ...s }, ConditionExpression: 'attribute_exists(pk)' })),
      );
    },

    async remove(tenant, id) {
      return applied(() => t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: keys.synonym(tenant, id), ConditionExpression: 'attribute_exists(pk)' })));
    },
  };
}
