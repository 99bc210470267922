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
    }
    return sub;
  };
  return store;
};

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
  store.db.batch(ops, (err) => {
    ended();
    if (err) return cb(err);
    if (written) written.set(key, item ?? null);
    cb();
  });
};
