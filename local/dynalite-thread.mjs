// dynalite in its own thread, as DynamoDB is its own service: the API's event loop never
// serves database work, and the database never waits for the API.
//
// Besides its TCP port, the thread answers requests posted on MessagePorts (the local stack's
// own threads connect that way, see dynamo-port.ts): the same request, signed the same way and
// handled by dynalite's same request handler, without the socket and HTTP parsing on each side.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';
import { lookUp, queryCacheStats, watchTables } from './dynalite-query-cache.mjs';
import { cacheTableDescriptions } from './table-descriptions.mjs';
import './dynalite-indexes.mjs';
import './dynalite-key-sizes.mjs';
import { answerTransactions } from './dynalite-transactions.mjs';

/*
 * dynalite reads a Query or Scan through a stream over a LevelDB iterator that it never closes:
 * its stream's destroy calls `iterator.return()`, which abstract-level iterators do not have, and
 * an iterator at its end stays open too. Each one stays attached to the database until it closes,
 * pinning a LevelDB snapshot, so compaction can never drop what was deleted or overwritten since:
 * after a bulk import (100,000 items created, then embedded) a Query that runs past the end of its
 * range skips every such entry one by one (the search delta read, 0 rows: ≈ 25 ms; the latest
 * change, reverse Limit 1: 65–105 ms, against under 1 ms after reopening), and memory grows with
 * every Query. Here the stream closes its iterator when it ends or is destroyed.
 */
const require = createRequire(import.meta.url);
const { ClassicLevel } = require(require.resolve('classic-level', { paths: [dirname(require.resolve('dynalite'))] }));
let openIterators = 0;
const open = ClassicLevel.prototype._open;
ClassicLevel.prototype._open = function (options) {
  // Counted for the `stats` message, whoever opens them.
  const values = this.values.bind(this);
  this.values = (valueOptions) => {
    const iterator = values(valueOptions);
    openIterators++;
    const close = iterator.close.bind(iterator);
    let counted = true;
    iterator.close = () => {
      if (counted) openIterators--;
      counted = false;
      return close();
    };
    return iterator;
  };
  // dynalite has set its own createValueStream on the instance by now (right after constructing it).
  this.createValueStream = (streamOptions) => {
    const iterator = this.values(streamOptions);
    return new Readable({
      objectMode: true,
      read() {
        iterator.next().then(
          (value) => this.push(value === undefined ? null : value),
          (err) => this.destroy(err),
        );
      },
      destroy(err, callback) {
        iterator.close().then(
          () => callback(err),
          () => callback(err),
        );
      },
    });
  };
  // Why it could not open (a full disk, a corrupted file) said first: the requests it fails
  // then end the thread with only "Database is not open" (their error's cause is lost between
  // threads).
  return open.call(this, options).catch((e) => {
    parentPort.postMessage({ failure: `LevelDB could not open ${this.location}: ${e instanceof Error ? e.message : String(e)}` });
    throw e;
  });
};

/*
 * dynalite reads the table's description from LevelDB (and decodes it) on every request. Here the
 * descriptions it reads are kept in memory until that table's entry is written or deleted.
 */
const db = require(join(dirname(require.resolve('dynalite')), 'db'));
const createStore = db.create;
db.create = (options) => {
  const store = createStore(options);
  cacheTableDescriptions(store.tableDb);
  watchTables(store);
  return store;
};

const server = dynalite({ ...(workerData.path ? { path: workerData.path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
answerTransactions(server);
const handle = server.listeners('request')[0];
server.on('error', (e) => parentPort.postMessage({ error: String(e) }));
server.listen(workerData.port ?? 0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'close') server.close(() => parentPort.postMessage({ closed: true }));
  else if (m?.type === 'connect') serve(m.port);
  else if (m === 'stats') parentPort.postMessage({ stats: { openIterators, queryCache: queryCacheStats() } });
});

/**
 * One request as dynalite's handler reads it (method, url, lower-case headers, body events); a
 * Query asked before with nothing it read written since is answered from memory
 * (dynalite-query-cache.mjs).
 */
function serve(port) {
  port.on('message', ({ id, method, path, headers, body }) => {
    const cached = lookUp(method, path, headers, body);
    if (cached?.answer) {
      port.postMessage({ id, ...cached.answer });
      return;
    }
    const req = new EventEmitter();
    Object.assign(req, { method, url: path, headers });
    const out = {};
    const res = {
      statusCode: 200,
      setHeader: (name, value) => {
        out[name.toLowerCase()] = String(value);
      },
      end: (data) => {
        const answer = data === undefined ? '' : String(data);
        cached?.keep(res.statusCode, out, answer);
        port.postMessage({ id, status: res.statusCode, headers: out, body: answer });
      },
    };
    try {
      handle(req, res);
      if (body) req.emit('data', Buffer.from(body));
      req.emit('end');
    } catch (e) {
      port.postMessage({ id, error: String(e) });
    }
  });
}
