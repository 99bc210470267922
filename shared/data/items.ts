import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../errors.ts';
import type {
  ChangeKey, IdPlan, ItemChanges, ItemListQuery, ItemPatch, ItemRecord, ItemStore, ItemWithVector, JsonObject, NewItem, Page,
} from '../domain/types.ts';
import type { TableRef } from './client.ts';
import { idsFor } from './counters.ts';
import { keys } from './keys.ts';
import { applied, countUpTo, forEachPartitionPage, getRow, isConditionFailure, putAll, putMissing, queryUpTo, stripKeys, type Row } from './ops.ts';

/*
 * Item rows hold, beside the resource fields: `content_version` (bumped by every change of
 * name/description/metadata), `embedded_version` and `embedding` (Float32 bytes) once embedded.
 * Index keys: gsi1 = category; gsi2 = change time (search delta); gsi3 = embedding pending.
 */

const TOMBSTONE_TTL_SECONDS = 7 * 86_400;

/**
 * A change's stamp (its gsi2 key, in seconds) is taken before it is written: before id
 * allocation, a consistent read, SDK retries. Readers of the change index look again
 * `skewSeconds` (2) before the previous read began, so a change whose commit came later than
 * that after its stamp would be passed for good (by a delta read, or by an index build that
 * started meanwhile). Every write therefore checks, once it returns, how long after its stamp
 * it committed; past STAMP_LAG_MS it stamps its rows again with the time now (only rows still
 * at its stamp), and again until a stamp lands in time. So every change is committed at most a
 * second after its stamp, whatever the write cost, leaving a second of the readers' margin
 * for index propagation and clock skew.
 */
const STAMP_LAG_MS = 1000;
const nowSeconds = () => Math.floor(Date.now() / 1000);

const categoryOf = (metadata: JsonObject | undefined): string | undefined => {
  const c = metadata?.category;
  return typeof c === 'string' && c.length > 0 ? c : undefined;
};

const CONTENT_FIELDS = ['name', 'description', 'metadata'] as const;

/** The query of a tenant's item changes (the gsi2 change index) after a time, or after a cursor. */
const changesAfter = (tenant: string, since: number, after?: string) => ({
  IndexName: 'gsi2',
  KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk > :after',
  ExpressionAttributeValues: { ':pk': keys.itemChangesPk(tenant), ':after': after ?? keys.itemChangeAfter(since) },
});

function vectorBytes(v: Float32Array): Uint8Array {
  return new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
}

function vectorOf(raw: unknown): Float32Array | null {
  if (!(raw instanceof Uint8Array) || raw.byteLength % 4 !== 0) return null;
  return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
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

const withVector = (row: Row): ItemWithVector => ({ ...fromRow(row), vector: vectorOf(row.embedding) });

export function dynamoItemStore(t: TableRef): ItemStore {
  function toRow(tenant: string, item: ItemRecord): Row {
    const category = categoryOf(item.metadata);
    return {
      ...keys.item(tenant, item.id),
      ...(category ? keys.itemCategory(tenant, category, item.id) : {}),
      ...keys.itemChange(tenant, item.updated_at, item.id),
      ...keys.embedPending(tenant, item.updated_at, item.id),
      ...item,
      content_version: 1,
      embedded_version: 0,
    };
  }

  /**
   * After writing rows stamped `at` (their gsi2 change key): if the write committed more than
   * STAMP_LAG_MS after the stamp, stamps them again (see STAMP_LAG_MS). `rows` are the keys
   * and ids of the rows written.
   */
  async function settle(tenant: string, rows: { key: Row; id: number }[], at: number): Promise<void> {
    let stamp = at;
    let pending = rows;
    while (pending.length > 0 && Date.now() - stamp * 1000 > STAMP_LAG_MS) {
      const next = Math.max(stamp + 1, nowSeconds());
      const prev = stamp;
      const moved = await Promise.all(
        pending.map(async (r) => {
          const was = keys.itemChange(tenant, prev, r.id);
          const to = keys.itemChange(tenant, next, r.id);
          // Only a row still at the old stamp: a later change stamped it itself.
          const ok = await applied(() =>
            t.doc.send(
              new UpdateCommand({
                TableName: t.tableName,
                Key: r.key,
                UpdateExpression: 'SET #g2sk = :to',
                ConditionExpression: '#g2sk = :was',
                ExpressionAttributeNames: { '#g2sk': 'gsi2sk' },
                ExpressionAttributeValues: { ':to': to.gsi2sk, ':was': was.gsi2sk },
              }),
            ),
          );
          return ok ? r : undefined;
        }),
      );
      pending = moved.filter((r): r is { key: Row; id: number } => r !== undefined);
      stamp = next;
    }
  }

  return {
    async create(tenant: string, items: NewItem[], now: number, ids?: IdPlan): Promise<ItemRecord[]> {
      const first = await idsFor(t, tenant, 'item', items.length, ids);
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
      if (ids?.reuse !== undefined) {
        // A retry under the ids its failed attempt reserved: writes what that attempt did not, and
        // answers what it did as stored (changed since, perhaps).
        const deleted = async (row: Row) => (await getRow(t, keys.tombstone(tenant, Number(row.id)), { consistent: true, projection: 'pk' })) !== undefined;
        const stored = (await putMissing(t, records.map((r) => toRow(tenant, r)), (row) => keys.item(tenant, Number(row.id)), deleted)).map(fromRow);
        await settle(tenant, records.map((r) => ({ key: keys.item(tenant, r.id), id: r.id })), now);
        return stored;
      }
      if (records.length === 1 && only) {
        // A single create can afford the guard that the freshly allocated id is unused.
        const written = await applied(() => t.doc.send(new PutCommand({ TableName: t.tableName, Item: toRow(tenant, only), ConditionExpression: 'attribute_not_exists(pk)' })));
        if (!written) throw new ConflictError('item_exists', `An item with id ${only.id} already exists.`);
      } else {
        await putAll(t, records.map((r) => toRow(tenant, r)));
      }
      await settle(tenant, records.map((r) => ({ key: keys.item(tenant, r.id), id: r.id })), now);
      return records;
    },

    async get(tenant: string, id: number): Promise<ItemRecord | undefined> {
      const row = await getRow(t, keys.item(tenant, id));
      return row ? fromRow(row) : undefined;
    },

    async update(tenant: string, id: number, patch: ItemPatch, now: number, opts: { sameContentAs?: number } = {}): Promise<ItemRecord | undefined> {
      const names: Record<string, string> = { '#updated_at': 'updated_at', '#g2pk': 'gsi2pk', '#g2sk': 'gsi2sk' };
      const change = keys.itemChange(tenant, now, id);
      const values: Record<string, unknown> = { ':now': now, ':g2pk': change.gsi2pk, ':g2sk': change.gsi2sk };
      const sets = ['#updated_at = :now', '#g2pk = :g2pk', '#g2sk = :g2sk'];
      const removes: string[] = [];
      const adds: string[] = [];
      for (const field of ['name', 'description', 'metadata', 'active'] as const) {
        if (patch[field] === undefined) continue;
        names[`#${field}`] = field;
        values[`:${field}`] = patch[field];
        sets.push(`#${field} = :${field}`);
      }
      const conds = ['attribute_exists(pk)'];
      if (opts.sameContentAs !== undefined) {
        // Content as it is (the caller compared): no new version, if none came meanwhile.
        names['#cv'] = 'content_version';
        values[':cv'] = opts.sameContentAs;
        conds.push(opts.sameContentAs === 1 ? '(attribute_not_exists(#cv) OR #cv = :cv)' : '#cv = :cv');
      } else if (CONTENT_FIELDS.some((f) => patch[f] !== undefined)) {
        // New content: the embedding is behind until the worker catches up.
        const pending = keys.embedPending(tenant, now, id);
        Object.assign(names, { '#cv': 'content_version', '#eua': 'embedding_updated_at', '#g3pk': 'gsi3pk', '#g3sk': 'gsi3sk' });
        Object.assign(values, { ':one': 1, ':null': null, ':g3pk': pending.gsi3pk, ':g3sk': pending.gsi3sk });
        adds.push('#cv :one');
        sets.push('#eua = :null', '#g3pk = :g3pk', '#g3sk = :g3sk');
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
            UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}${adds.length ? ` ADD ${adds.join(', ')}` : ''}`,
            ConditionExpression: conds.join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        );
        if (!out.Attributes) return undefined;
        await settle(tenant, [{ key: keys.item(tenant, id), id }], now);
        return fromRow(out.Attributes);
      } catch (e) {
        if (isConditionFailure(e)) return undefined;
        throw e;
      }
    },

    async delete(tenant: string, id: number, now: number): Promise<boolean> {
      if (!(await getRow(t, keys.item(tenant, id), { projection: 'pk' }))) return false;
      // The tombstone first: search must never show an item that is already gone.
      await t.doc.send(
        new PutCommand({
          TableName: t.tableName,
          Item: { ...keys.tombstone(tenant, id), ...keys.itemChange(tenant, now, id), id, deleted_at: now, ttl: now + TOMBSTONE_TTL_SECONDS },
        }),
      );
      await settle(tenant, [{ key: keys.tombstone(tenant, id), id }], now);
      return applied(() => t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: keys.item(tenant, id), ConditionExpression: 'attribute_exists(pk)' })));
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

    async changedSince(tenant: string, since: number, limit: number, after?: string): Promise<ItemChanges> {
      // `after` (a cursor from an earlier incomplete answer) is the last change's sort key.
      const rows = await queryUpTo(t, changesAfter(tenant, since, after), limit + 1);
      const items: ItemWithVector[] = [];
      const deleted: { id: number; at: number }[] = [];
      const page = rows.slice(0, limit);
      for (const r of page) {
        if (r.deleted_at !== undefined) deleted.push({ id: Number(r.id), at: Number(r.deleted_at) });
        else items.push(withVector(r));
      }
      const complete = rows.length <= limit;
      return { items, deleted, complete, ...(complete ? {} : { cursor: String(page[page.length - 1]?.gsi2sk) }) };
    },

    async changeKeysSince(tenant: string, since: number): Promise<ChangeKey[]> {
      const rows = await queryUpTo(
        t,
        {
          ...changesAfter(tenant, since),
          // The key plus what tells two states of one item apart within the same second, and
          // the item's id and change times.
          ProjectionExpression: 'gsi2sk, #id, active, content_version, embedded_version, updated_at, embedding_updated_at, deleted_at',
          ExpressionAttributeNames: { '#id': 'id' },
        },
        Infinity,
      );
      return rows.map((r) => {
        const deleted = r.deleted_at !== undefined;
        return {
          state: [r.gsi2sk, r.active, r.content_version, r.embedded_version, r.deleted_at].map(String).join('|'),
          cursor: String(r.gsi2sk),
          id: Number(r.id),
          deleted,
          at: deleted ? Number(r.deleted_at) : Math.max(Number(r.updated_at ?? 0), Number(r.embedding_updated_at ?? 0)),
        };
      });
    },

    countChangesSince: (tenant: string, since: number, upTo: number) => countUpTo(t, changesAfter(tenant, since), upTo),

    async forEachPage(tenant: string, fn: (items: ItemWithVector[]) => void): Promise<void> {
      // Strongly consistent: an index build must hold every change committed before it began.
      await forEachPartitionPage(t, keys.itemPk(tenant), (rows) => fn(rows.map(withVector)), { consistent: true });
    },

    async getForEmbedding(tenant: string, id: number) {
      const row = await getRow(t, keys.item(tenant, id), { consistent: true });
      if (!row) return undefined;
      return { item: fromRow(row), contentVersion: Number(row.content_version ?? 1), embeddedVersion: Number(row.embedded_version ?? 0) };
    },

    async saveEmbedding(tenant: string, id: number, contentVersion: number, vector: Float32Array, now: number) {
      const change = keys.itemChange(tenant, now, id);
      const saved = await applied(() =>
        t.doc.send(
          new UpdateCommand({
            TableName: t.tableName,
            Key: keys.item(tenant, id),
            UpdateExpression: 'SET #e = :e, #ev = :cv, #eua = :now, #g2pk = :g2pk, #g2sk = :g2sk REMOVE #g3pk, #g3sk',
            ConditionExpression: 'attribute_exists(pk) AND #cv = :cv',
            ExpressionAttributeNames: {
              '#e': 'embedding', '#ev': 'embedded_version', '#eua': 'embedding_updated_at', '#cv': 'content_version',
              '#g2pk': 'gsi2pk', '#g2sk': 'gsi2sk', '#g3pk': 'gsi3pk', '#g3sk': 'gsi3sk',
            },
            ExpressionAttributeValues: { ':e': vectorBytes(vector), ':cv': contentVersion, ':now': now, ':g2pk': change.gsi2pk, ':g2sk': change.gsi2sk },
          }),
        ),
      );
      if (!saved) return 'stale' as const;
      await settle(tenant, [{ key: keys.item(tenant, id), id }], now);
      return 'saved' as const;
    },

    async pendingEmbeddings(tenant: string, olderThan: number, limit: number): Promise<number[]> {
      const rows = await queryUpTo(
        t,
        {
          IndexName: 'gsi3',
          KeyConditionExpression: 'gsi3pk = :pk AND gsi3sk < :before',
          ExpressionAttributeValues: { ':pk': keys.embedPendingPk(tenant), ':before': keys.embedPendingBefore(olderThan) },
        },
        limit,
      );
      return rows.map((r) => keys.embedPendingId(String(r.gsi3sk)));
    },

    // The index is sparse: only items waiting for an embedding are in it.
    pendingCount: (tenant: string) =>
      countUpTo(t, { IndexName: 'gsi3', KeyConditionExpression: 'gsi3pk = :pk', ExpressionAttributeValues: { ':pk': keys.embedPendingPk(tenant) } }),
  };
}
