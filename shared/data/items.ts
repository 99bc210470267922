import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.ts';
import { config } from '../config.ts';
import { nowMs, nowSeconds } from '../clock.ts';
import { sleep } from '../retry.ts';
import { eachAtMost } from '../concurrency.ts';
import { outsideDeadline } from '../deadline.ts';
import { Conflict } from '../domain/errors.ts';
import { OLD_CODE_SETTLE_SECONDS } from '../domain/deploys.ts';
import { nfc } from '../domain/nfc.ts';
import type { ChangeKey, IdPlan, ItemChanges, ItemListQuery, ItemPatch, ItemRecord, ItemStore, ItemWithVector, JsonObject, NewItem, Page } from '../domain/types.ts';
import type { TableRef } from './client.ts';
import { idsFor } from './counters.ts';
import { CategoryRekey, Counter, Item, sortId, Tombstone } from './entities.ts';
import { CHANGE_FIELDS } from './table-schema.ts';
import type { Change, Condition, Expr } from './expressions.ts';
import {
  applied,
  countUpTo,
  forEachPartitionPage,
  getRow,
  getRows,
  isConditionFailure,
  isNew,
  isStored,
  put,
  putAll,
  putMissing,
  queryPage,
  FILTERED_LIST_READ,
  queryFilteredUpTo,
  queryUpTo,
  refine,
  remove,
  stripKeys,
  update,
  type QueryInput,
  type Row,
} from './ops.ts';

/*
 * Items (the Item entity of entities.ts): by id, by category, by change time (the search
 * delta, with the tombstones of deleted items) and, while their embedding is behind their
 * content, in the sparse embedPending index.
 */
const { byCategory, changedSince, changeKeys, embedPending } = Item.indexes;
/** How often the sweep queued an item's embedding again (`deferEmbedding`); gone once it embeds or its content changes. */
const EMBED_REQUEUES = 'embed_requeues';

/**
 * How long a deleted item's tombstone is kept: 7 days, and at least as long as a create's retry
 * under its Idempotency-Key can come (the key's life and an hour), which finds it and does not
 * write the item again (until 2026-12-04, 7 days whatever the key's life).
 */
const tombstoneSeconds = () => Math.max(7 * 86_400, config().idempotencyTtlSeconds + 3600);

/**
 * A change's stamp (its gsi2 key, in seconds) is taken before it is written: before id
 * allocation, a consistent read, SDK retries. Readers of the change index look again
 * `skewSeconds` (2) before the previous read began, so a change whose commit came later than
 * that after its stamp would be passed for good (by a delta read, or by an index build that
 * started meanwhile). Every write therefore checks, once it returns, how long after its stamp
 * it committed; past STAMP_LAG_MS it stamps its rows again (only rows still at its stamp), and
 * again until a stamp lands in time. So every change is committed at most a second after its
 * stamp, whatever the write cost, leaving a second of the readers' margin for index propagation
 * and clock skew. A new stamp is the time now plus as long as the last stamping took: a
 * stamp later than the commit is as good as one on time (readers read every change after where
 * they read before, less the margin, never up to a time they pass for good), whereas a stamp of
 * the time now never landed in time while each write took over a second (the local stack under
 * a flood of 1 MB imports: single creates looped until the function's timeout, answering 503 for
 * rows they had written).
 */
const STAMP_LAG_MS = 1000;

/**
 * An item's category in the category index (a string `metadata.category`; other values are kept
 * and filter nothing): in Unicode NFC (`nfc`), so that "Café" with a composed é and with e and a
 * combining accent (U+0301) is one key, as search's filters compare them; as it is up to 256
 * characters, longer ones by their SHA-256 (a key of the index holds at most 2,048 bytes), which
 * a listing's `category` is looked up by alike. A list is in the index under none of its elements
 * (a row is one key of it), so a listing's `category` never lists such an item, where
 * recommendations' `category` and search's filters match its elements (docs/api.md says so).
 * Until 2026-12-08 the key was the category as sent: such rows are read beside (`categoryReads`)
 * until the maintenance pass has re-keyed them (`indexCategoriesInNfc`). Only the key: the item's
 * `metadata.category` stays as sent.
 */
const categoryKey = (category: string): string => keyOf(nfc(category));
const HASHED = '#sha256:';
/** A spelling's key: as it is up to 256 characters, longer ones by their SHA-256. */
const keyOf = (spelling: string): string => (spelling.length <= 256 ? spelling : `${HASHED}${createHash('sha256').update(spelling).digest('hex')}`);
/** Whether a key may be a long category's digest, or the very text of a category (`ownRows`). */
const isDigestKey = (key: string): boolean => key.length === HASHED.length + 64 && key.startsWith(HASHED) && /^[0-9a-f]+$/.test(key.slice(HASHED.length));

/**
 * The partitions a listing's `category` reads, each with the filter that keeps its own rows: its
 * NFC's key, first, and the keys of rows written before the index was keyed in NFC and not re-keyed
 * yet, under the category as asked for and under its NFD (the spellings a client sends). A stored
 * spelling that is neither (composed in part) is found once the maintenance pass re-keyed it.
 */
function categoryReads(category: string): { key: string; own: Condition | undefined }[] {
  const spelled = [nfc(category), category, category.normalize('NFD')];
  const seen = new Set<string>();
  const reads: { key: string; own: Condition | undefined }[] = [];
  for (const spelling of spelled) {
    const key = keyOf(spelling);
    if (seen.has(key)) continue;
    seen.add(key);
    reads.push({ key, own: ownRows(key, spelling.length <= 256) });
  }
  return reads;
}

/**
 * The rows of a partition that are of its category. A digest's text is a category too: a long
 * category's partition leaves out the items whose category is that text (`literal` false), and the
 * text's partition keeps only those (`literal`). Any other key is one category's alone.
 */
function ownRows(key: string, literal: boolean): Condition | undefined {
  if (!isDigestKey(key)) return undefined;
  return (x) => `${x.path('metadata.category')} ${literal ? '=' : '<>'} ${x.value(key)}`;
}

const categoryOf = (metadata: unknown): string | undefined => {
  const c = typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) ? (metadata as JsonObject).category : undefined;
  return typeof c === 'string' && c.length > 0 ? categoryKey(c) : undefined;
};

/** Rows a re-keying step reads a page (`indexCategoriesInNfc`). */
const REKEY_PAGE = 1000;

/** Where a tenant's re-keying stands (the CategoryRekey row). */
interface RekeyState {
  since: number;
  from: number;
  after: number;
  upTo: number | undefined;
  recheck: number | undefined;
}

const CONTENT_FIELDS = ['name', 'description', 'metadata'] as const;

/**
 * How long a create retried under its ids that finds an item it wrote deleted meanwhile (a
 * tombstone there now, none when it looked) waits for the delete to remove the row: a delete
 * that found this write removes it itself within a write or two.
 */
const DELETE_SETTLE_MS = 200;

/**
 * The query of a tenant's item changes after a time, or after a cursor, and before a time when
 * `before` is given: in the change index (gsi2, whole items), or in its slim copy (gsi4, the
 * change fields only: the same keys). With `before`, the range is inclusive at the cursor: the
 * reader drops the cursor's own row (no key equals a time's prefix, so the times are exact).
 */
const changesAfter = (
  tenant: string,
  since: number,
  { after, before, index = changedSince }: { after?: string | undefined; before?: number | undefined; index?: typeof changedSince | typeof changeKeys } = {},
) => {
  const from = after ?? index.skPrefix({ changed_at: since });
  return index.query({ tenant }, before === undefined ? { gt: from } : { between: [from, index.skPrefix({ changed_at: before })] });
};

/** A change's `ChangeKey.state`: its key plus what tells two states of one item apart within the same second. */
const changeState = (r: Row): string => [r[changedSince.skAttr], r.active, r.content_version, r.embedded_version, r.deleted_at].map(String).join('|');

function vectorBytes(v: Float32Array): Uint8Array {
  return new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
}

function vectorOf(raw: unknown): Float32Array | null {
  if (!(raw instanceof Uint8Array) || raw.byteLength % 4 !== 0) return null;
  // Bytes that own their whole buffer (as decoded from the wire) are read in place; a view into
  // a larger buffer is copied, so the vector does not keep the rest of it alive.
  if (raw.byteOffset === 0 && raw.buffer.byteLength === raw.byteLength) return new Float32Array(raw.buffer);
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

/**
 * The attribute holding when (ms) the item's first vector of `dims` numbers was saved
 * (`ItemWithVector.first_embedded_ms`). One per width: a vector of another width (an older
 * embedding model's) is none to search, and until 2026-12-07 its time, kept in one
 * `first_embedded_ms` of every width, counted as a vector the item had when it was embedded anew at
 * the build's width, and later pages of a search scored it with one where the first had not.
 */
const firstEmbeddedAttr = (dims: number) => `first_embedded_ms_${dims}`;

const withVector = (row: Row): ItemWithVector => {
  const vector = vectorOf(row.embedding);
  const first = vector ? row[firstEmbeddedAttr(vector.length)] : undefined;
  return {
    ...fromRow(row),
    vector,
    ...(row.embedded_ms !== undefined ? { embedded_ms: Number(row.embedded_ms) } : {}),
    ...(first !== undefined ? { first_embedded_ms: Number(first) } : {}),
  };
};

export function dynamoItemStore(t: TableRef): ItemStore {
  function toRow(tenant: string, item: ItemRecord): Row {
    const category = categoryOf(item.metadata);
    return {
      ...Item.keys({ tenant, id: item.id, category, changed_at: item.updated_at, pending_since: item.updated_at }),
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
  async function settle(rows: { key: Row; id: number }[], at: number): Promise<void> {
    let stamp = at;
    let pending = rows;
    // How long the last stamping took (none yet): the next stamp allows as much.
    let took = 0;
    while (pending.length > 0 && nowMs() - stamp * 1000 > STAMP_LAG_MS) {
      const started = nowMs();
      const next = Math.max(stamp + 1, Math.ceil((started + took) / 1000));
      const prev = stamp;
      const moved = await Promise.all(
        pending.map(async (r) => {
          const was = changedSince.sk({ changed_at: prev, id: r.id });
          const to = changedSince.sk({ changed_at: next, id: r.id });
          // Only a row still at the old stamp: a later change stamped it itself.
          const ok = await applied(() => update(t, r.key, { set: { [changedSince.skAttr]: to } }, { when: (x) => x.eq(changedSince.skAttr, was) }));
          return ok ? r : undefined;
        }),
      );
      pending = moved.filter((r): r is { key: Row; id: number } => r !== undefined);
      took = nowMs() - started;
      stamp = next;
    }
  }

  /**
   * Tenants whose category index is keyed in NFC throughout (`indexCategoriesInNfc` done), as seen here.
   * Bound: the tenants, one each (a Set, not an `Lru`: the maintenance pass visits every tenant in
   * turn, and a bound below their number would let each go before its next visit; docs/architecture.md).
   */
  const keyedInNfc = new Set<string>();
  const rekeyDone = async (tenant: string) => (await getRow(t, CategoryRekey.key({ tenant })))?.done === true;

  /** Deletes an item: false when there was none (or another delete removed it first). */
  async function removeItem(tenant: string, id: number, now: number): Promise<boolean> {
    const key = Item.key({ tenant, id });
    // Strongly consistent: an item created a moment ago is found (an eventual read could answer 404 and leave it).
    if (!(await getRow(t, key, { consistent: true, projection: 'pk' }))) return false;
    // The tombstone first: search must never show an item that is already gone.
    await put(t, { ...Tombstone.keys({ tenant, id, changed_at: now }), id, deleted_at: now, ttl: now + tombstoneSeconds() });
    const removed = await applied(() => remove(t, key, isStored));
    // Settled once the row is gone, so that its change comes after the row's last: an index build
    // reads the rows, not the tombstones, and one that read the row while its removal was slow
    // must see the tombstone among the changes after it, as must a reader that applied a change
    // to the row made meanwhile (an update, an embedding). Until 2026-12-04 it was settled
    // before the removal, and such an item stayed searchable after its DELETE answered.
    await settle([{ key: Tombstone.key({ tenant, id }), id }], now);
    return removed;
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
      // The keys and ids of the rows this create writes, for `settle`.
      const rowKeys = () => records.map((r) => ({ key: Item.key({ tenant, id: r.id }), id: r.id }));
      if (ids?.reuse !== undefined) {
        // A retry under the ids its failed attempt reserved: writes what that attempt did not, and
        // answers what it did as stored (changed since, perhaps).
        const deleted = async (row: Row) => (await getRow(t, Tombstone.key({ tenant, id: Number(row.id) }), { consistent: true, projection: 'pk' })) !== undefined;
        const wrote: Row[] = [];
        const rows = await putMissing(
          t,
          records.map((r) => toRow(tenant, r)),
          (row) => Item.key({ tenant, id: Number(row.id) }),
          deleted,
          (row) => wrote.push(row),
        );
        const stored = rows.map(fromRow);
        // Each row from the stamp it holds: the failed attempt's rows hold that attempt's, which
        // it may have been cut off before moving on (until 2026-12-05 they kept it, behind what a
        // search delta had read, and the items it answered were not searchable until a build).
        const byStamp = new Map<number, { key: Row; id: number }[]>();
        for (const row of rows) {
          const sk = row[changedSince.skAttr];
          const at = sk === undefined ? now : Number(changedSince.parse(String(sk)).changed_at);
          let group = byStamp.get(at);
          if (!group) byStamp.set(at, (group = []));
          group.push({ key: Item.key({ tenant, id: Number(row.id) }), id: Number(row.id) });
        }
        await Promise.all([...byStamp].map(([at, group]) => settle(group, at)));
        // A delete between a row's look for its tombstone and its write removed the row the failed
        // attempt wrote, and this write stored it again: the item is deleted again (as it was until
        // 2026-12-03, it was back, the delete answered 200). A delete that found this write removes
        // the row itself; one still there once it had the time to is taken out here.
        const undeleted = (await Promise.all(wrote.map(async (row) => ((await deleted(row)) ? Number(row.id) : undefined)))).filter((id) => id !== undefined);
        if (undeleted.length) {
          await sleep(DELETE_SETTLE_MS);
          await Promise.all(undeleted.map((id) => removeItem(tenant, id, Math.max(now, nowSeconds()))));
        }
        return stored;
      }
      if (records.length === 1 && only) {
        // A single create can afford the guard that the freshly allocated id is unused.
        const written = await applied(() => put(t, toRow(tenant, only), isNew));
        // Not applied: the row is this create's own when it holds what it wrote (its put landed,
        // the answer was lost, and the SDK's retry found the row), another's only if the id was
        // handed out twice. Answered 409 item_exists for an item it had stored.
        const own = async () => {
          const row = await getRow(t, Item.key({ tenant, id: only.id }), { consistent: true });
          return row !== undefined && canonicalJson(fromRow(row)) === canonicalJson(only);
        };
        if (!written && !(await own())) throw new Conflict('item_exists', `An item with id ${only.id} already exists.`);
      } else {
        try {
          await putAll(
            t,
            records.map((r) => toRow(tenant, r)),
          );
        } catch (e) {
          // Failed part way: the rows that landed are stored items, answered 5xx. Each is made whole
          // as a created one is (its embedding is pending already, for the sweep): stamped again if
          // it landed late, outside the deadline (a restamp only ever moves a row's own stamp on),
          // else a search delta that read past its stamp never saw it: not searchable until a build
          // (until 2026-12-05).
          await outsideDeadline(() => settle(rowKeys(), now)).catch(() => {}); // the client hears the write's own failure
          throw e;
        }
      }
      await settle(rowKeys(), now);
      return records;
    },

    async get(tenant: string, id: number): Promise<ItemRecord | undefined> {
      // Consistent: a GET right after the 201 of a create, or the 200 of a change, reads it (an
      // eventual read could answer 404, or the item before the change, until 2026-12-05).
      const row = await getRow(t, Item.key({ tenant, id }), { consistent: true });
      return row ? fromRow(row) : undefined;
    },

    async getMany(tenant: string, ids: readonly number[], opts: { consistent?: boolean } = {}): Promise<(ItemRecord | undefined)[]> {
      const rows = await getRows(
        t,
        ids.map((id) => Item.key({ tenant, id })),
        { consistent: opts.consistent === true },
      );
      return rows.map((row) => (row ? fromRow(row) : undefined));
    },

    async update(tenant: string, id: number, patch: ItemPatch, now: number, opts: { sameContentAs?: number } = {}): Promise<ItemRecord | undefined> {
      const remove: string[] = [];
      const change: Required<Pick<Change, 'set' | 'remove' | 'add'>> = { set: { updated_at: now, ...changedSince.key({ tenant, changed_at: now, id }) }, remove, add: {} };
      for (const field of ['name', 'description', 'metadata', 'active'] as const) if (patch[field] !== undefined) change.set[field] = patch[field];
      const newContent = opts.sameContentAs === undefined && CONTENT_FIELDS.some((f) => patch[f] !== undefined);
      if (newContent) {
        // New content: the embedding is behind until the worker catches up.
        change.add.content_version = 1;
        Object.assign(change.set, { embedding_updated_at: null, ...embedPending.key({ tenant, pending_since: now, id }) });
        // New content may embed where the old did not: the sweep's deferrals start over.
        remove.push(EMBED_REQUEUES);
      }
      if (patch.metadata !== undefined) {
        // The category index follows the replacement metadata.
        const category = categoryOf(patch.metadata);
        if (category) Object.assign(change.set, byCategory.key({ tenant, category, id }));
        else remove.push(byCategory.pkAttr, byCategory.skAttr);
      }
      const cv = opts.sameContentAs;
      try {
        const row = await update(t, Item.key({ tenant, id }), newContent ? change : { set: change.set, remove: change.remove }, {
          // With `sameContentAs`: content as it is (the caller compared), no new version, if none came meanwhile.
          when: (x) => x.and(isStored(x), ...(cv === undefined ? [] : [cv === 1 ? x.or(x.absent('content_version'), x.eq('content_version', cv)) : x.eq('content_version', cv)])),
          returnValues: 'ALL_NEW',
        });
        if (!row) return undefined;
        await settle([{ key: Item.key({ tenant, id }), id }], now);
        return fromRow(row);
      } catch (e) {
        if (isConditionFailure(e)) return undefined;
        throw e;
      }
    },

    delete: removeItem,

    async list(tenant: string, q: ItemListQuery): Promise<Page<ItemRecord>> {
      const after = q.after !== undefined ? { gt: sortId(q.after) } : undefined;
      const { createdAfter: ca, createdBefore: cb } = q;
      const created: Condition[] = [...(ca !== undefined ? [(x: Expr) => x.cmp('created', '>=', ca)] : []), ...(cb !== undefined ? [(x: Expr) => x.cmp('created', '<=', cb)] : [])];
      const primary = Item.indexes.primary;
      type Read = { index: typeof byCategory | typeof primary; query: QueryInput; filters: Condition[] };
      const reads: Read[] =
        q.category === undefined
          ? [{ index: primary, query: primary.query({ tenant }, after), filters: created }]
          : categoryReads(q.category).map(({ key, own }) => ({ index: byCategory, query: byCategory.query({ tenant, category: key }, after), filters: own ? [...created, own] : created }));
      /**
       * One partition's rows from `after`, and `through`: the id up to which it was read whole, when it
       * may hold more (undefined: read to its end). Filtered, at most FILTERED_LIST_READ rows are read:
       * a page that did not fill by then ends where the read did (`next`), so a window that holds
       * nothing costs one bounded read, not the catalog.
       */
      const readOne = async ({ index, query, filters }: Read): Promise<{ rows: Row[]; through: number | undefined }> => {
        const idOf = (r: Row | undefined) => (r === undefined ? undefined : Number(index.parse(String(r[index.skAttr])).id));
        if (filters.length === 0) {
          const rows = await queryUpTo(t, query, q.limit + 1);
          return { rows, through: rows.length > q.limit ? idOf(rows.at(-1)) : undefined };
        }
        const { rows, stoppedAt } = await queryFilteredUpTo(t, refine(query, { filter: (x) => x.and(...filters.map((f) => f(x))) }), q.limit + 1, FILTERED_LIST_READ);
        return { rows, through: rows.length > q.limit ? idOf(rows.at(-1)) : idOf(stoppedAt) };
      };
      // A category's partitions of rows not yet re-keyed first, then its NFC's: a row re-keyed
      // between the reads is read in one of them at least (once: by id). Once the tenant's index is
      // seen re-keyed (by a listing that read the old keys, or this store's step: it stays so), its NFC's alone.
      const [main, ...legacy] = reads;
      const pending = legacy.length > 0 && !keyedInNfc.has(tenant);
      const [done, ...parts] = pending ? await Promise.all([rekeyDone(tenant), ...legacy.map(readOne)]) : [false];
      if (done) keyedInNfc.add(tenant);
      if (main) parts.push(await readOne(main));
      // Every partition is known up to the least id some partition was read through: past it, rows of
      // one could come after rows of another not read yet.
      const ends = parts.map((p) => p.through).filter((n) => n !== undefined);
      const through = ends.length > 0 ? Math.min(...ends) : undefined;
      const byId = new Map<number, Row>();
      for (const p of parts) for (const r of p.rows) if (through === undefined || Number(r.id) <= through) byId.set(Number(r.id), r);
      const rows = [...byId.values()].sort((a, b) => Number(a.id) - Number(b.id));
      if (rows.length > q.limit) return { rows: rows.slice(0, q.limit).map(fromRow), hasMore: true };
      return { rows: rows.map(fromRow), hasMore: through !== undefined, ...(through !== undefined ? { next: through } : {}) };
    },

    async deletedIn(tenant: string, from: number, to: number, upTo: number): Promise<number> {
      // Consistent: a delete writes its tombstone before it removes the row.
      return countUpTo(t, { ...Tombstone.indexes.primary.query({ tenant }, { between: [sortId(from), sortId(to)] }), ConsistentRead: true }, upTo);
    },

    async highestIdTaken(tenant: string): Promise<number> {
      return Number((await getRow(t, Counter.key({ tenant, counter: 'item' }), { consistent: true }))?.value ?? 0);
    },

    async latestIds(tenant: string, limit: number, below: number): Promise<{ id: number; created: number }[]> {
      const rows = await queryUpTo(
        t,
        { ...refine(Item.indexes.primary.query({ tenant }, { lt: sortId(below) }), { project: ['id', 'created'] }), ScanIndexForward: false, ConsistentRead: true },
        limit,
      );
      return rows.map((r) => ({ id: Number(r.id), created: Number(r.created) }));
    },

    async changedSince(tenant: string, since: number, limit: number, after?: string, before?: number): Promise<ItemChanges> {
      // `after` (a cursor from an earlier incomplete answer) is the last change's sort key; a
      // bounded range returns that row again, dropped here.
      const again = after !== undefined && before !== undefined ? 1 : 0;
      const found = await queryUpTo(t, changesAfter(tenant, since, { after, before }), limit + 1 + again);
      const rows = again && found[0]?.[changedSince.skAttr] === after ? found.slice(1) : found.slice(0, limit + 1);
      const items: ItemWithVector[] = [];
      const deleted: { id: number; at: number }[] = [];
      const page = rows.slice(0, limit);
      for (const r of page) {
        if (r.deleted_at !== undefined) deleted.push({ id: Number(r.id), at: Number(r.deleted_at) });
        else items.push(withVector(r));
      }
      const complete = rows.length <= limit;
      return { items, deleted, complete, states: page.map(changeState), ...(complete ? {} : { cursor: String(page[page.length - 1]?.[changedSince.skAttr]) }) };
    },

    async changeKeysSince(tenant: string, since: number, opts: { besideReads?: boolean } = {}): Promise<ChangeKey[]> {
      // The key plus what tells two states of one item apart within the same second, and the
      // item's id and change times: the fields gsi4 projects.
      const project = [changedSince.skAttr, ...CHANGE_FIELDS];
      const rows = await queryUpTo(t, refine(changesAfter(tenant, since, { index: opts.besideReads ? changedSince : changeKeys }), { project }), Infinity);
      return rows.map((r) => {
        const deleted = r.deleted_at !== undefined;
        return {
          state: changeState(r),
          cursor: String(r[changedSince.skAttr]),
          id: Number(r.id),
          deleted,
          at: deleted ? Number(r.deleted_at) : Math.max(Number(r.updated_at ?? 0), Number(r.embedding_updated_at ?? 0)),
        };
      });
    },

    countChangesSince: (tenant: string, since: number, upTo: number) => countUpTo(t, changesAfter(tenant, since, { index: changeKeys }), upTo),

    async changeSpanSince(tenant: string, since: number): Promise<{ first: number; last: number } | undefined> {
      const q = refine(changesAfter(tenant, since, { index: changeKeys }), { project: [changeKeys.skAttr] });
      const at = (row: Row | undefined) => (row === undefined ? undefined : Number(changeKeys.parse(String(row[changeKeys.skAttr])).changed_at));
      const [[first], [last]] = await Promise.all([queryUpTo(t, q, 1), queryUpTo(t, { ...q, ScanIndexForward: false }, 1)]);
      const [from, to] = [at(first), at(last)];
      return from === undefined || to === undefined ? undefined : { first: from, last: to };
    },

    async forEachPage(tenant: string, fn: (items: ItemWithVector[]) => void): Promise<void> {
      // Strongly consistent: an index build must hold every change committed before it began.
      await forEachPartitionPage(t, Item.indexes.primary.query({ tenant }), (rows) => fn(rows.map(withVector)), { consistent: true });
    },

    async getForEmbedding(tenant: string, id: number) {
      const row = await getRow(t, Item.key({ tenant, id }), { consistent: true });
      if (!row) return undefined;
      return { item: fromRow(row), contentVersion: Number(row.content_version ?? 1), embeddedVersion: Number(row.embedded_version ?? 0), dims: vectorOf(row.embedding)?.length ?? 0 };
    },

    async saveEmbedding(tenant: string, id: number, contentVersion: number, vector: Float32Array, now: number) {
      const ms = nowMs();
      const saved = await applied(() =>
        update(
          t,
          Item.key({ tenant, id }),
          {
            set: { embedding: vectorBytes(vector), embedded_version: contentVersion, embedding_updated_at: now, embedded_ms: ms, ...changedSince.key({ tenant, changed_at: now, id }) },
            // Kept from the first save at this width on: search's later pages tell by it an item
            // re-embedded since their first page that had a vector by then (`first_embedded_ms`).
            setIfAbsent: { [firstEmbeddedAttr(vector.length)]: ms },
            remove: [embedPending.pkAttr, embedPending.skAttr, EMBED_REQUEUES],
          },
          { when: (x) => x.and(isStored(x), x.eq('content_version', contentVersion)) },
        ),
      );
      if (!saved) return 'stale' as const;
      await settle([{ key: Item.key({ tenant, id }), id }], now);
      return 'saved' as const;
    },

    async pendingEmbeddings(tenant: string, olderThan: number, limit: number): Promise<{ id: number; since: number }[]> {
      const rows = await queryUpTo(t, embedPending.query({ tenant }, { lt: embedPending.skPrefix({ pending_since: olderThan }) }), limit);
      return rows.map((r) => {
        const { id, pending_since } = embedPending.parse(String(r[embedPending.skAttr]));
        return { id: Number(id), since: Number(pending_since) };
      });
    },

    async markEmbedPending(tenant: string, items: readonly { id: number; embeddedAt: number }[], now: number): Promise<number> {
      let marked = 0;
      await eachAtMost(items, 25, async ({ id, embeddedAt }) => {
        // Only the vector read: one saved since (at the provider's width) needs nothing. One already
        // waiting keeps its wait: the sweep's deferrals of an item that never embeds (until 2026-12-05
        // each build reset it to the build's time, and the doubling waits started over).
        const ok = await applied(() =>
          update(
            t,
            Item.key({ tenant, id }),
            { set: embedPending.key({ tenant, pending_since: now, id }) },
            { when: (x) => x.and(isStored(x), x.eq('embedding_updated_at', embeddedAt), x.absent(embedPending.pkAttr)) },
          ),
        );
        if (ok) marked++;
      });
      return marked;
    },

    async deferEmbedding(tenant: string, id: number, since: number, next: (requeues: number) => number): Promise<boolean> {
      const key = Item.key({ tenant, id });
      // Only while it waits since `since`: new content, or its vector, settled it meanwhile.
      const was = embedPending.sk({ pending_since: since, id });
      const at = (x: Expr) => x.eq(embedPending.skAttr, was);
      const counted = await update(t, key, { add: { [EMBED_REQUEUES]: 1 } }, { when: at, returnValues: 'UPDATED_NEW' }).catch((e: unknown) => {
        if (isConditionFailure(e)) return undefined;
        throw e;
      });
      if (!counted) return false;
      const to = embedPending.sk({ pending_since: next(Number(counted[EMBED_REQUEUES] ?? 1)), id });
      return applied(() => update(t, key, { set: { [embedPending.skAttr]: to } }, { when: at }));
    },

    // The index is sparse: only items waiting for an embedding are in it.
    pendingCount: (tenant: string) => countUpTo(t, embedPending.query({ tenant })),

    async indexCategoriesInNfc(tenant: string, now: number, maxRows: number, until = Number.POSITIVE_INFINITY): Promise<{ rekeyed: number; done: boolean }> {
      // Done stays done: once seen here, the step of each later pass (every tenant, every minute) reads nothing.
      if (keyedInNfc.has(tenant)) return { rekeyed: 0, done: true };
      const at = CategoryRekey.key({ tenant });
      const stored = await getRow(t, at, { consistent: true });
      if (stored?.done === true) {
        keyedInNfc.add(tenant);
        return { rekeyed: 0, done: true };
      }
      const num = (v: unknown) => (v === undefined || v === null ? undefined : Number(v));
      let s: RekeyState = stored
        ? { since: Number(stored.since), from: Number(stored.from), after: Number(stored.after ?? 0), upTo: num(stored.up_to), recheck: num(stored.recheck) }
        : { since: now, from: now, after: 0, upTo: undefined, recheck: undefined };
      if (now < s.from) return { rekeyed: 0, done: false };
      // A write of the code before may still land, keying a category as sent, until OLD_CODE_SETTLE_SECONDS
      // after the re-keying started: the ids a scan looked at before then are looked at again after it.
      const settled = s.since + OLD_CODE_SETTLE_SECONDS;
      // The ids looked at so far may have been written as sent since, by the code before: looked at again.
      if (s.from < settled && now >= settled && s.recheck === undefined) s.recheck = s.after;
      const save = (state: RekeyState, done = false) =>
        put(t, {
          ...at,
          since: state.since,
          from: state.from,
          after: state.after,
          ...(state.upTo !== undefined ? { up_to: state.upTo } : {}),
          ...(state.recheck !== undefined ? { recheck: state.recheck } : {}),
          ...(done ? { done: true } : {}),
        });
      let rekeyed = 0;
      let read = 0;
      let ended = false;
      while (!ended && read < maxRows) {
        // Past `until` (the maintenance pass's time for it), no further page: large items (a long description, metadata
        // and a vector: up to some 80 KB) fill a Query's 1 MB with a dozen or so, and 5,000 of them
        // take hundreds of Queries, which could outlive the pass's 60 s.
        if (read > 0 && performance.now() >= until) break;
        if (s.upTo !== undefined && s.after >= s.upTo) {
          ended = true;
          break;
        }
        const page = await queryPage(t, {
          ...refine(Item.indexes.primary.query({ tenant }, { gt: sortId(s.after) }), { project: ['id', 'metadata', byCategory.pkAttr] }),
          Limit: Math.min(REKEY_PAGE, maxRows - read),
        });
        read += page.scanned;
        const upTo = s.upTo;
        const rows = upTo === undefined ? page.items : page.items.filter((r) => Number(r.id) <= upTo);
        await eachAtMost(rows, 25, async (r) => {
          const category = categoryOf(r.metadata);
          const was = r[byCategory.pkAttr];
          if (category === undefined || was === byCategory.pk({ tenant, category })) return;
          const id = Number(r.id);
          // Only the index's key, and only while the row is keyed as read: a change meanwhile keyed it itself.
          const moved = await applied(() =>
            update(
              t,
              Item.key({ tenant, id }),
              { set: byCategory.key({ tenant, category, id }) },
              { when: (x) => (typeof was === 'string' ? x.eq(byCategory.pkAttr, was) : x.and(isStored(x), x.absent(byCategory.pkAttr))) },
            ),
          );
          if (moved) rekeyed++;
        });
        const last = page.items.at(-1);
        if (last !== undefined) s.after = Number(last.id);
        if (page.lastKey === undefined || rows.length < page.items.length || (upTo !== undefined && s.after >= upTo)) ended = true;
        if (!ended) await save(s);
      }
      if (!ended) return { rekeyed, done: false };
      if (s.from >= settled) {
        await save(s, true);
        keyedInNfc.add(tenant);
        return { rekeyed, done: true };
      }
      // A scan that started before the code that wrote keys as sent surely stopped: the ids it
      // looked at before then (all of them, when it ended before then) are looked at again.
      s = { since: s.since, from: Math.max(now, settled), after: 0, upTo: s.recheck, recheck: undefined };
      await save(s);
      return { rekeyed, done: false };
    },
  };
}
