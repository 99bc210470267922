// dynalite in its own thread, as DynamoDB is its own service: the API's event loop never
// serves database work, and the database never waits for the API.
//
// Besides its TCP port, the thread answers requests posted on MessagePorts (the local stack's
// own threads connect that way, see dynamo-port.ts): the same request, signed the same way and
// handled by dynalite's same request handler, without the socket and HTTP parsing on each side.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';

// dynalite's LevelDB (its own copy of classic-level): the instance it opens, for compaction below.
const require = createRequire(import.meta.url);
const { ClassicLevel } = require(require.resolve('classic-level', { paths: [dirname(require.resolve('dynalite'))] }));
let level;
const open = ClassicLevel.prototype._open;
ClassicLevel.prototype._open = function (options) {
  level = this;
  return open.call(this, options);
};

const server = dynalite({ ...(workerData.path ? { path: workerData.path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
const handle = server.listeners('request')[0];
server.removeListener('request', handle);
server.on('request', (req, res) => {
  noteRequest(req.headers);
  handle(req, res);
});
server.on('error', (e) => parentPort.postMessage({ error: String(e) }));
server.listen(workerData.port ?? 0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'close') {
    clearInterval(compactionCheck);
    // LevelDB closes once a compaction under way has finished.
    void Promise.resolve(compaction).finally(() => server.close(() => parentPort.postMessage({ closed: true })));
  } else if (m?.type === 'connect') serve(m.port);
});

/*
 * LevelDB keeps a deleted key as a tombstone until a compaction reaches it, and an iterator
 * skips tombstones one by one, past the end of its range, until it finds a live key. A bulk
 * import leaves runs of them (100,000 item creates and embedding updates remove as many entries of
 * the sparse embedding-pending index and move as many change-log entries), and a Query that
 * runs off the end of its range into such a run then costs tens of milliseconds (the search
 * delta read: ≈ 30 ms instead of < 1 ms after 100,000 items) until LevelDB compacts it, which
 * reopening did. So once many writes have come in and then none for a moment, the whole key
 * range is compacted. DynamoDB has no such phase.
 */
const compactAfterWrites = workerData.compactAfterWrites ?? 20_000;
const compactIdleMs = workerData.compactIdleMs ?? 3000;
const WRITE = /\.(PutItem|UpdateItem|DeleteItem|BatchWriteItem)$/;
let writes = 0;
let lastWriteAt = 0;
let compaction;

function noteRequest(headers) {
  const op = WRITE.exec(headers['x-amz-target'] ?? '')?.[1];
  if (!op) return;
  writes += op === 'BatchWriteItem' ? 25 : 1;
  lastWriteAt = Date.now();
}

const compactionCheck = setInterval(() => {
  if (!level || compaction || writes < compactAfterWrites || Date.now() - lastWriteAt < compactIdleMs) return;
  writes = 0;
  const started = Date.now();
  compaction = level
    .compactRange('\u0000', '\uffff')
    .then(
      () => parentPort.postMessage({ compacted: Date.now() - started }),
      (e) => parentPort.postMessage({ compactionFailed: String(e) }),
    )
    .finally(() => (compaction = undefined));
}, Math.min(1000, compactIdleMs));
compactionCheck.unref();

/** One request as dynalite's handler reads it (method, url, lower-case headers, body events). */
function serve(port) {
  port.on('message', ({ id, method, path, headers, body }) => {
    noteRequest(headers);
    const req = new EventEmitter();
    Object.assign(req, { method, url: path, headers });
    const out = {};
    const res = {
      statusCode: 200,
      setHeader: (name, value) => {
        out[name.toLowerCase()] = String(value);
      },
      end: (data) => port.postMessage({ id, status: res.statusCode, headers: out, body: data === undefined ? '' : String(data) }),
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
