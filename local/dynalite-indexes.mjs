// Secondary-index entries that move in one step in dynalite, as in DynamoDB Local (imported for
// its effect by every place that starts dynalite: dynamo.ts, dynalite-thread.mjs).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { writeBegins } from './dynalite-query-cache.mjs';

const require = createRequire(import.meta.url);
const db = require(join(dirname(require.resolve('dynalite')), 'db'));

/*
 * One write, one LevelDB batch: an item's row and its secondary-index entries are written together,
 * as DynamoDB applies them. dynalite writes each index entry, then the row, as writes of their own:
 *   - an update that moves an item's key in an index deleted the old entry, then put the new one,
 *     so a Query in between found the item at neither key (an item whose embedding was being saved
 *     was missing from a listing of the catalog's changes, and so from a search; AWS's DynamoDB
 *     Local never shows that: test/data/items.test.ts runs on both);
 *   - a process that died between the entries and the row (kill -9, SIGTERM under load, a full
 *     disk) left entries with no row: "ghost" items that every listing and the index status
 *     counted, pending an embedding forever, which GET, PATCH and DELETE answered 404.
 * All sub-databases are key prefixes of one LevelDB (dynalite's `getSubDb`), so the entries and
 * the row go in one batch of the main database here, and the row's own write that dynalite then
 * makes (under the same item lock) is answered as done. A store whose item databases are not
 * wrapped here (one dynalite recreated) keeps writing its row itself, after the entries.
 */
const WRITTEN = Symbol('rows written with their index entries');

const subName = (type, table, index) => `index-${type.toLowerCase()}~${table}~${index}~`;

const create = db.create;
db.create = (options) => {
  const store = create(options);
  const getItemDb = store.getItemDb;
  store.getItemDb = (name) => {
    const sub = getItemDb(name);
    if (!sub[WRITTEN]) {
      // key -> the row written (null: deleted) by the batch of the write holding the key's lock.
      const written = new Map();
      sub[WRITTEN] = written;
      const { put, del } = sub;
      // A row dynalite writes itself moves the table's kept Query answers (dynalite-query-cache.mjs).
      const rowWrite = (write, cb) => {
        const ended = writeBegins(name);
        write((err) => {
          ended();
          cb(err);
        });
      };
      sub.put = (key, value, cb) => {
        if (written.has(key) && written.get(key) === value) {
          written.delete(key);
          return process.nextTick(cb);
        }
        rowWrite((done) => put(key, value, done), cb);
      };
      sub.del = (key, cb) => {
        if (written.has(key) && written.get(key) === null) {
          written.delete(key);
          return process.nextTick(cb);
        }
        rowWrite((done) => del(key, done), cb);
      };
      readsUnderLockInPlace(store, sub, `item-${name}~`);
    }
    return sub;
  };
  return store;
};

/*
 * A write's read of the row it replaces, in place. dynalite's PutItem, UpdateItem and DeleteItem
 * (a BatchWriteItem's puts and deletes too) read the row under its key's lock before writing it
 * (its old index entries, the condition, the old values). Through LevelDB's asynchronous get that
 * read is a round trip through libuv's thread pool: about 25 µs of this thread's CPU and 45 µs of
 * the process's for a row that is not there (a search's analytics row, always new), against 1 µs
 * read in place (`getSync`; classic-level 3 and memory-level, measured alone). Reads outside a
 * lock (GetItem, Query, Scan) keep dynalite's own path. The row read is the same: no other write
 * of the key can run under its lock, and the callback still comes after the call returns.
 */
function readsUnderLockInPlace(store, sub, prefix) {
  const main = store.db;
  if (!main.supports?.getSync) return;
  const { lock, get } = sub;
  let locked = 0;
  sub.lock = (key, exec) =>
    lock(key, (release) => {
      locked++;
      try {
        exec(release);
      } finally {
        locked--;
      }
    });
  sub.get = (key, cb) => {
    if (locked === 0) return get(key, cb);
    let value;
    try {
      value = main.getSync(prefix + key);
    } catch (e) {
      // As dynalite's get answers a closed database.
      return setImmediate(cb, e?.code === 'LEVEL_DATABASE_NOT_OPEN' ? new Error('Database is closed') : e);
    }
    process.nextTick(cb, null, value);
  };
}

db.updateIndexes = (store, table, existingItem, item, cb) => {
  if (!existingItem && !item) return cb();
  const ops = [];
  /** The indexes whose entries this write puts or deletes. */
  const indexes = new Set();
  for (const type of ['Local', 'Global']) {
    const { puts, deletes } = db.getIndexActions(table[`${type}SecondaryIndexes`] || [], existingItem, item, table);
    for (const a of deletes) {
      ops.push({ type: 'del', key: subName(type, table.TableName, a.index) + a.key });
      indexes.add(a.index);
    }
    for (const a of puts) {
      ops.push({ type: 'put', key: subName(type, table.TableName, a.index) + a.key, value: a.item });
      indexes.add(a.index);
    }
  }
  const itemDb = store.getItemDb(table.TableName);
  const written = itemDb[WRITTEN];
  const key = written ? db.createKey(item ?? existingItem, table) : undefined;
  // The row's key in the main database (dynalite's item sub-database prefix).
  const rowKey = `item-${table.TableName}~${key}`;
  if (written) ops.push(item ? { type: 'put', key: rowKey, value: item } : { type: 'del', key: rowKey });
  if (ops.length === 0) return cb();
  // Kept Query answers of the table's rows and of these indexes no longer hold, from now until
  // the batch is applied (dynalite-query-cache.mjs).
  const ended = writeBegins(table.TableName, [...indexes]);
  batchSoon(store.db, ops, (err) => {
    ended();
    if (err) return cb(err);
    if (written) written.set(key, item ?? null);
    cb();
  });
};

/*
 * The batches of the writes that reach this point in one turn of the event loop (a
 * BatchWriteItem's puts, whose reads are in place: readsUnderLockInPlace) applied as one LevelDB
 * batch at its end: one round trip through libuv's thread pool instead of one per write (about
 * 50 µs of the process's CPU each, measured alone). Each write's operations stay together and in
 * order, so each is applied whole, as before; writes of one key never meet in a batch (the second
 * waits for the first under the key's lock, which the first holds until its batch is applied).
 * Every write is told the batch's outcome.
 */
const pending = new Map();

function batchSoon(main, ops, done) {
  let group = pending.get(main);
  if (!group) {
    group = { ops: [], done: [] };
    pending.set(main, group);
    setImmediate(() => {
      pending.delete(main);
      const { ops: all, done: each } = group;
      const settle = (err) => {
        for (const d of each) d(err);
      };
      try {
        main.batch(all, settle);
      } catch (e) {
        settle(e);
      }
    });
  }
  for (const op of ops) group.ops.push(op);
  group.done.push(done);
}
