// Key sizes in UTF-8 bytes in dynalite, as DynamoDB counts them (imported for its effect by every
// place that starts dynalite: dynamo.ts, dynalite-thread.mjs).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const db = require(join(dirname(require.resolve('dynalite')), 'db'));

/*
 * DynamoDB takes a string partition key of at most 2,048 bytes and a sort key of at most 1,024, in
 * UTF-8, in the table's key and in each secondary index's. dynalite compares a string key's length
 * in UTF-16 code units, so it took keys of four-byte characters up to four times too long that
 * DynamoDB refuses (a user's erasure marker keyed by a user id of 256 emoji was stored locally and
 * refused on AWS, where every recommendation naming the user answered 500: fixed on 2026-12-07),
 * and index keys it did not check at all. Here every key a write or a read names (dynalite's
 * `validateItem` and `validateKey`, which its item actions and the local transactions call), and
 * every row an update leaves (`updateIndexes`), is also counted in bytes, and refused with
 * DynamoDB's ValidationException.
 */
const MOST = { HASH: 2048, RANGE: 1024 };

/** DynamoDB's message for a key attribute over its size, or undefined. */
function oversize(value, keyType, index) {
  const text = value?.S;
  if (typeof text !== 'string') return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  const most = MOST[keyType];
  if (bytes <= most) return undefined;
  if (index)
    return `One or more parameter values were invalid: Size of ${keyType === 'HASH' ? 'hashkey' : 'rangekey'} of index ${index} (${bytes} bytes) has exceeded the maximum size limit of ${most} bytes`;
  return keyType === 'HASH'
    ? 'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes'
    : 'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes';
}

/** The first key of `schema` (a KeySchema) that `item` holds over its size: a ValidationException, or null. */
function keysOf(item, schema, index) {
  for (const { AttributeName, KeyType } of schema ?? []) {
    const message = oversize(item?.[AttributeName], KeyType, index);
    if (message) return db.validationError(message);
  }
  return null;
}

const validateKey = db.validateKey;
db.validateKey = (dataKey, table, keySchema) => validateKey(dataKey, table, keySchema) ?? keysOf(dataKey, keySchema ?? table.KeySchema);

/** The first index key of `item` (a row as written) over its size: a ValidationException, or null. */
export function oversizeIndexKey(item, table) {
  for (const ix of [...(table.GlobalSecondaryIndexes ?? []), ...(table.LocalSecondaryIndexes ?? [])]) {
    const inIndex = keysOf(item, ix.KeySchema, ix.IndexName);
    if (inIndex) return inIndex;
  }
  return null;
}

const validateItem = db.validateItem;
db.validateItem = (dataItem, table) => validateItem(dataItem, table) ?? keysOf(dataItem, table.KeySchema) ?? oversizeIndexKey(dataItem, table);

/*
 * An UpdateItem that sets an index key (a SET of gsi1pk) names only the table's key, which
 * `validateKey` checks: the row it leaves is checked here, before its index entries and the row
 * are written (dynalite's updateItem writes the row only once `updateIndexes` answers without an
 * error), as DynamoDB refuses such an update. A put's row was checked by `validateItem` already; a
 * delete leaves none. The local transactions check their rows themselves before writing any
 * (dynalite-transactions.mjs `apply`): their writes are worked out against the table without its
 * indexes.
 */
const updateIndexes = db.updateIndexes;
db.updateIndexes = (store, table, existingItem, item, cb) => {
  const invalid = item ? oversizeIndexKey(item, table) : null;
  if (invalid) return process.nextTick(cb, invalid);
  return updateIndexes(store, table, existingItem, item, cb);
};
