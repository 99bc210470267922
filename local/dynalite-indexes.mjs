// Secondary-index entries that move in one step in dynalite, as in DynamoDB Local (imported for
// its effect by every place that starts dynalite: dynamo.ts, dynalite-thread.mjs).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const db = require(join(dirname(require.resolve('dynalite')), 'db'));

/*
 * An update that changes an item's key in a secondary index moves its entry there. dynalite
 * deletes the old entry, then puts the new one, each a write of its own, so a Query in between
 * finds the item at neither key: an item whose embedding is being saved was missing from a
 * listing of the catalog's changes, and so from a search. AWS's DynamoDB Local never shows that
 * (test/data/items.test.ts runs on both). Here each index's puts and deletes for one write go in
 * one batch, which the store applies at once. The order between indexes, and the item's own row
 * after them, are dynalite's as before.
 */
db.updateIndexes = (store, table, existingItem, item, cb) => {
  const batches = new Map();
  for (const type of ['Local', 'Global']) {
    const { puts, deletes } = db.getIndexActions(table[`${type}SecondaryIndexes`] || [], existingItem, item, table);
    const opsOf = (index) => {
      const sub = store.getIndexDb(type, table.TableName, index);
      if (!batches.has(sub)) batches.set(sub, []);
      return batches.get(sub);
    };
    for (const a of puts) opsOf(a.index).push({ type: 'put', key: a.key, value: a.item });
    for (const a of deletes) opsOf(a.index).push({ type: 'del', key: a.key });
  }
  let left = batches.size;
  if (left === 0) return cb();
  let failed = false;
  for (const [sub, ops] of batches)
    sub.batch(ops, (err) => {
      if (failed) return;
      if (err) {
        failed = true;
        cb(err);
      } else if (--left === 0) cb();
    });
};
