// TransactWriteItems in dynalite, which has no transactions (installed on each dynalite server by
// the places that start one: dynamo.ts, dynalite-thread.mjs). The control records' changes write
// their audit entries in one transaction with them (shared/data/console.ts), as on DynamoDB.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { oversizeIndexKey } from './dynalite-key-sizes.mjs';

const require = createRequire(import.meta.url);
const root = dirname(require.resolve('dynalite'));
const db = require(join(root, 'db'));
const validations = require(join(root, 'validations'));
const actions = {
  Put: { run: require(join(root, 'actions', 'putItem')), check: require(join(root, 'validations', 'putItem')) },
  Update: { run: require(join(root, 'actions', 'updateItem')), check: require(join(root, 'validations', 'updateItem')) },
  Delete: { run: require(join(root, 'actions', 'deleteItem')), check: require(join(root, 'validations', 'deleteItem')) },
};
const crc32 = require(require.resolve('buffer-crc32', { paths: [root] }));

/*
 * The store of each dynalite server, kept as dynalite creates it (its server is made right after).
 * dynalite-indexes.mjs wraps db.create too; whichever runs first, the store is the one served.
 */
let created;
const create = db.create;
db.create = (options) => {
  created = create(options);
  return created;
};

const TARGET = 'DynamoDB_20120810.TransactWriteItems';

/**
 * Answers TransactWriteItems on `server` (made by dynalite() just before): its other requests go
 * to dynalite's own handler. Each write of a transaction is dynalite's own PutItem, UpdateItem or
 * DeleteItem, worked out under the locks of every key written (taken in key order, so two
 * transactions never wait on each other's); when every condition holds, the rows and their index
 * entries are written in one LevelDB batch (dynalite-indexes.mjs groups the writes made in one
 * turn of the event loop), else nothing is, and the answer is DynamoDB's TransactionCanceledException
 * with a reason per write (`ConditionalCheckFailed` where its condition failed, `None` elsewhere).
 */
export function answerTransactions(server) {
  const store = created;
  const tokens = new Map();
  const [handle] = server.listeners('request');
  server.removeAllListeners('request');
  server.on('request', (req, res) => {
    if (req.headers['x-amz-target'] !== TARGET) return handle(req, res);
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let data;
      try {
        data = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        return send(res, 400, { __type: 'com.amazon.coral.service#SerializationException' });
      }
      const token = typeof data?.ClientRequestToken === 'string' ? data.ClientRequestToken : undefined;
      const known = token === undefined ? undefined : sameToken(tokens, token, data);
      if (known) return send(res, 400, known);
      if (known === null) return send(res, 200, {});
      transact(store, data, (err, out) => {
        if (token !== undefined) endToken(tokens, token, !err);
        if (err?.statusCode) return send(res, err.statusCode, err.body);
        if (err) return send(res, 500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: String(err) });
        send(res, 200, out);
      });
    });
  });
}

/**
 * DynamoDB's idempotency window: a TransactWriteItems that succeeded is answered success, and
 * written no more, when its ClientRequestToken comes again within 10 minutes of its end. The SDK
 * sets one token per call and sends it again with each retry (a write timed out on the port,
 * dynamo-port.ts; a 5xx): until 2026-12-07 each retry was run again, its conditions failing on
 * its own first write and its ADDs counted twice.
 */
const IDEMPOTENCY_MS = 10 * 60_000;

/**
 * What a transaction under `token` gets before it runs: undefined (run it; its token is now
 * in progress), null (it succeeded before: success, nothing written), or DynamoDB's error body
 * (the token came with other writes, or its first call is still running).
 */
function sameToken(tokens, token, data) {
  const now = Date.now();
  for (const [t, e] of tokens) if (e.until !== undefined && e.until < now) tokens.delete(t);
  const { ClientRequestToken: _, ...rest } = data;
  const params = createHash('sha256').update(JSON.stringify(rest)).digest('hex');
  const known = tokens.get(token);
  if (!known) {
    // In progress (no `until`) until it ends.
    tokens.set(token, { params, until: undefined });
    return undefined;
  }
  if (known.params !== params) {
    return { __type: 'com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException', message: 'Request token is already used by a different request' };
  }
  // Sent again while its first call runs: DynamoDB's answer, which the SDK retries.
  if (known.until === undefined) return { __type: 'com.amazonaws.dynamodb.v20120810#TransactionInProgressException', message: 'Transaction is in progress' };
  return null;
}

/** The transaction under `token` ended: a success is kept for the idempotency window; a failure is run again when sent again. */
function endToken(tokens, token, succeeded) {
  if (succeeded) tokens.set(token, { ...tokens.get(token), until: Date.now() + IDEMPOTENCY_MS });
  else tokens.delete(token);
}

function send(res, status, data) {
  const body = JSON.stringify(data);
  res.statusCode = status;
  res.setHeader('x-amz-crc32', crc32.unsigned(body));
  res.setHeader('Content-Type', 'application/x-amz-json-1.0');
  res.setHeader('Content-Length', Buffer.byteLength(body, 'utf8'));
  res.end(body);
}

/** Each write as its own request to dynalite (validated as one), or the validation's error. */
function parse(store, data) {
  const items = data?.TransactItems;
  if (!Array.isArray(items) || items.length === 0 || items.length > 100) throw db.validationError('TransactItems must hold 1 to 100 writes');
  return items.map((item) => {
    const [kind, ...more] = Object.keys(item ?? {});
    const action = actions[kind];
    if (!action || more.length) throw db.validationError(`Only Put, Update and Delete writes are answered here (got ${Object.keys(item ?? {}).join(', ')})`);
    const { ReturnValuesOnConditionCheckFailure: _, ...one } = item[kind];
    const checked = validations.checkTypes(one, action.check.types);
    validations.checkValidations(checked, action.check.types, action.check.custom, store);
    return { kind, action, data: checked };
  });
}

function transact(store, data, answer) {
  // Answered once: each write's table is looked up, and two naming a missing one both fail.
  let answered = false;
  const done = (err, out) => {
    if (answered) return;
    answered = true;
    answer(err, out);
  };
  let writes;
  try {
    writes = parse(store, data);
  } catch (e) {
    return done(e);
  }
  let pending = writes.length;
  const tables = new Map();
  for (const w of writes) {
    store.getTable(w.data.TableName, (err, table) => {
      if (err) return done(err);
      tables.set(w.data.TableName, table);
      if (--pending === 0) locked(store, writes, tables, done);
    });
  }
}

/** The writes' keys locked (in order), their outcome worked out, and applied when all hold. */
function locked(store, writes, tables, done) {
  for (const w of writes) {
    const table = tables.get(w.data.TableName);
    // The key checked as dynalite's own action checks it before it makes the key (createKey throws on a missing part).
    const invalid = w.kind === 'Put' ? db.validateItem(w.data.Item, table) : db.validateKey(w.data.Key, table);
    if (invalid) return done(invalid);
    w.itemDb = store.getItemDb(table.TableName);
    w.key = db.createKey(w.kind === 'Put' ? w.data.Item : w.data.Key, table);
    w.table = table;
  }
  const keys = writes.map((w) => `${w.table.TableName}\u0000${w.key}`);
  if (new Set(keys).size !== keys.length) return done(db.validationError('Transaction request cannot include multiple operations on one item'));
  const order = [...writes].sort((a, b) => (`${a.table.TableName}\u0000${a.key}` < `${b.table.TableName}\u0000${b.key}` ? -1 : 1));
  const releases = [];
  const release = (err, out) => {
    for (const r of releases.reverse()) r();
    done(err, out);
  };
  const take = (k) => {
    if (k === order.length) return outcome(writes, (err) => (err ? release(err) : apply(store, writes, release)));
    order[k].itemDb.lock(order[k].key, (free) => {
      releases.push(free(() => {}));
      take(k + 1);
    });
  };
  take(0);
}

/**
 * Each write worked out by dynalite's own action against a copy of its store that writes nothing:
 * the row it would leave (`after`, null when deleted) and the one it read (`before`). A condition
 * that failed is that write's reason; any other error is the answer.
 */
function outcome(writes, done) {
  let pending = writes.length;
  let failed;
  const reasons = writes.map(() => ({ Code: 'None' }));
  writes.forEach((w, n) => {
    const dry = {
      options: { maxItemSize: Number.POSITIVE_INFINITY },
      // The table without its indexes: their entries are written with the row (apply).
      getTable: (_name, cb) => cb(null, { ...w.table, LocalSecondaryIndexes: undefined, GlobalSecondaryIndexes: undefined }),
      getItemDb: () => ({
        // Locked already (the transaction holds the key).
        lock: (_key, exec) => exec((cb) => cb),
        get: (key, cb) =>
          w.itemDb.get(key, (err, row) => {
            w.before = err ? null : row;
            cb(err, row);
          }),
        put: (_key, row, cb) => {
          w.after = row;
          cb();
        },
        del: (_key, cb) => {
          w.after = null;
          cb();
        },
      }),
    };
    w.action.run(dry, w.data, (err) => {
      if (err?.body?.__type?.endsWith('#ConditionalCheckFailedException')) reasons[n] = { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' };
      else if (err) failed ??= err;
      if (--pending > 0) return;
      if (failed) return done(failed);
      if (reasons.every((r) => r.Code === 'None')) return done();
      const e = new Error('Transaction cancelled');
      e.statusCode = 400;
      e.body = {
        __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
        message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
        CancellationReasons: reasons,
      };
      done(e);
    });
  });
}

/** Every write's row and index entries, in one turn of the event loop: one LevelDB batch. */
function apply(store, writes, done) {
  for (const w of writes) {
    if (w.after !== null && db.itemSize(w.after) > store.options.maxItemSize) return done(db.validationError('Item size has exceeded the maximum allowed size'));
    // An update's row with an index key past its bytes (dynalite-key-sizes.mjs): refused before anything is written.
    const oversize = w.after ? oversizeIndexKey(w.after, w.table) : null;
    if (oversize) return done(oversize);
  }
  let pending = writes.length;
  let failed;
  for (const w of writes) {
    db.updateIndexes(store, w.table, w.before ?? null, w.after, (err) => {
      if (err) failed ??= err;
      const row = (cb) => (w.after === null ? w.itemDb.del(w.key, cb) : w.after === undefined ? cb() : w.itemDb.put(w.key, w.after, cb));
      row((err2) => {
        if (err2) failed ??= err2;
        if (--pending === 0) done(failed, failed ? undefined : {});
      });
    });
  }
}
