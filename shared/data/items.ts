import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../errors.ts';
import type { ItemListQuery, ItemPatch, ItemRecord, ItemStore, JsonObject, NewItem, Page } from '../domain/types.ts';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { keys } from './keys.ts';
import { isConditionFailure, putAll, queryUpTo, stripKeys, type Row } from './ops.ts';

const categoryOf = (metadata: JsonObject | undefined): string | undefined => {
  const c = metadata?.category;
  return typeof c === 'string' && c.length > 0 ? c : undefined;
};

function toRow(tenant: string, item: ItemRecord): Row {
  const category = categoryOf(item.metadata);
  return {
    ...keys.item(tenant, item.id),
    ...(category ? keys.itemCategory(tenant, category, item.id) : {}),
    ...item,
  };
}

function fromRow(row: Row): ItemRecord {
  const r = stripKeys(row) as unknown as ItemRecord;
  return {
    id: Number(r.id),
    name: r.name,
    ...(r.description !== undefined ? { description: r.description } : {}),
    metadata: r.metadata ?? {},
    active: r.active,
    created: Number(r.created),
    updated_at: Number(r.updated_at),
    embedding_updated_at: r.embedding_updated_at == null ? null : Number(r.embedding_updated_at),
  };
}

export function dynamoItemStore(t: TableRef): ItemStore {
  return {
    async create(tenant: string, items: NewItem[], now: number): Promise<ItemRecord[]> {
      const first = await allocateIds(t, tenant, 'item', items.length);
      const records: ItemRecord[] = items.map((n, i) => ({
        id: first + i,
        name: n.name,
        ...(n.description !== undefined ? { description: n.description } : {}),
        metadata: n.metadata ?? {},
        active: true,
        created: now,
        updated_at: now,
        embedding_updated_at: null,
      }));
      const [only] = records;
      if (records.length === 1 && only) {
        // A single create can afford the guard that the freshly allocated id is unused.
        try {
          await t.doc.send(
            new PutCommand({ TableName: t.tableName, Item: toRow(tenant, only), ConditionExpression: 'attribute_not_exists(pk)' }),
          );
        } catch (e) {
          if (isConditionFailure(e)) throw new ConflictError('item_exists', `An item with id ${only.id} already exists.`);
          throw e;
        }
      } else {
        await putAll(t, records.map((r) => toRow(tenant, r)));
      }
      return records;
    },

    async get(tenant: string, id: number): Promise<ItemRecord | undefined> {
      const out = await t.doc.send(new GetCommand({ TableName: t.tableName, Key: keys.item(tenant, id) }));
      return out.Item ? fromRow(out.Item) : undefined;
    },

    async update(tenant: string, id: number, patch: ItemPatch, now: number): Promise<ItemRecord | undefined> {
      const names: Record<string, string> = { '#updated_at': 'updated_at' };
      const values: Record<string, unknown> = { ':now': now };
      const sets = ['#updated_at = :now'];
      const removes: string[] = [];
      for (const field of ['name', 'description', 'metadata', 'active'] as const) {
        if (patch[field] === undefined) continue;
        names[`#${field}`] = field;
        values[`:${field}`] = patch[field];
        sets.push(`#${field} = :${field}`);
      }
      if (patch.metadata !== undefined) {
        // The category index follows the replacement metadata.
        const category = categoryOf(patch.metadata);
        names['#g1pk'] = 'gsi1pk';
        names['#g1sk'] = 'gsi1sk';
        if (category) {
          const k = keys.itemCategory(tenant, category, id);
          values[':g1pk'] = k.gsi1pk;
          values[':g1sk'] = k.gsi1sk;
          sets.push('#g1pk = :g1pk', '#g1sk = :g1sk');
        } else {
          removes.push('#g1pk', '#g1sk');
        }
      }
      try {
        const out = await t.doc.send(
          new UpdateCommand({
            TableName: t.tableName,
            Key: keys.item(tenant, id),
            UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        );
        return out.Attributes ? fromRow(out.Attributes) : undefined;
      } catch (e) {
        if (isConditionFailure(e)) return undefined;
        throw e;
      }
    },

    async delete(tenant: string, id: number): Promise<boolean> {
      try {
        await t.doc.send(
          new DeleteCommand({ TableName: t.tableName, Key: keys.item(tenant, id), ConditionExpression: 'attribute_exists(pk)' }),
        );
        return true;
      } catch (e) {
        if (isConditionFailure(e)) return false;
        throw e;
      }
    },

    async list(tenant: string, q: ItemListQuery): Promise<Page<ItemRecord>> {
      const byCategory = q.category !== undefined;
      const pkName = byCategory ? 'gsi1pk' : 'pk';
      const skName = byCategory ? 'gsi1sk' : 'sk';
      const values: Record<string, unknown> = {
        ':pk': byCategory ? keys.itemCategoryPk(tenant, q.category as string) : keys.itemPk(tenant),
      };
      let keyCond = `${pkName} = :pk`;
      if (q.after !== undefined) {
        keyCond += ` AND ${skName} > :after`;
        values[':after'] = keys.sortId(q.after);
      }
      const filters: string[] = [];
      const names: Record<string, string> = {};
      if (q.createdAfter !== undefined) {
        filters.push('#created >= :ca');
        values[':ca'] = q.createdAfter;
        names['#created'] = 'created';
      }
      if (q.createdBefore !== undefined) {
        filters.push('#created <= :cb');
        values[':cb'] = q.createdBefore;
        names['#created'] = 'created';
      }
      const rows = await queryUpTo(
        t,
        {
          ...(byCategory ? { IndexName: 'gsi1' } : {}),
          KeyConditionExpression: keyCond,
          ExpressionAttributeValues: values,
          ...(filters.length ? { FilterExpression: filters.join(' AND '), ExpressionAttributeNames: names } : {}),
        },
        q.limit + 1,
      );
      return { rows: rows.slice(0, q.limit).map(fromRow), hasMore: rows.length > q.limit };
    },
  };
}

