// Keeps the table descriptions dynalite reads in memory (see dynalite-thread.mjs).

/**
 * Wraps dynalite's table store (a LevelDB sublevel with callback get/put/del/batch) so that the
 * descriptions it reads stay in memory until that table's entry is written or deleted, which
 * every change of a table (create, update, delete, and their status changes) does. A read that
 * overlapped a write of the same table is answered but not kept: it may hold the value from
 * before the write (a table read as CREATING while its ACTIVE status was written would stay
 * CREATING forever).
 */
export function cacheTableDescriptions(tableDb) {
  const tables = new Map();
  /** Per table, how many writes began or ended: a read keeps its value only if none did meanwhile. */
  const writes = new Map();
  const touch = (name) => {
    tables.delete(name);
    writes.set(name, (writes.get(name) ?? 0) + 1);
  };
  const { get, put, del, batch } = tableDb;
  tableDb.get = (name, callback) => {
    const table = tables.get(name);
    if (table) return process.nextTick(callback, null, table);
    const before = writes.get(name) ?? 0;
    get.call(tableDb, name, (err, value) => {
      if (!err && value && typeof value === 'object' && (writes.get(name) ?? 0) === before) tables.set(name, value);
      callback(err, value);
    });
  };
  tableDb.put = (name, value, callback) => {
    touch(name);
    put.call(tableDb, name, value, (err) => {
      touch(name);
      callback?.(err);
    });
  };
  tableDb.del = (name, callback) => {
    touch(name);
    del.call(tableDb, name, (err) => {
      touch(name);
      callback?.(err);
    });
  };
  tableDb.batch = (operations, callback) => {
    for (const op of operations) touch(op.key);
    batch.call(tableDb, operations, (err) => {
      for (const op of operations) touch(op.key);
      callback?.(err);
    });
  };
  return tableDb;
}
