// dynalite in its own thread, as DynamoDB is its own service: the API's event loop never
// serves database work, and the database never waits for the API.
//
// Besides its TCP port, the thread answers requests posted on MessagePorts (the local stack's
// own threads connect that way, see dynamo-port.ts): the same request, signed the same way and
// handled by dynalite's same request handler, without the socket and HTTP parsing on each side.
import { EventEmitter } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';

const server = dynalite({ ...(workerData.path ? { path: workerData.path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
const handle = server.listeners('request')[0];
server.on('error', (e) => parentPort.postMessage({ error: String(e) }));
server.listen(workerData.port ?? 0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'close') server.close(() => parentPort.postMessage({ closed: true }));
  else if (m?.type === 'connect') serve(m.port);
});

/** One request as dynalite's handler reads it (method, url, lower-case headers, body events). */
function serve(port) {
  port.on('message', ({ id, method, path, headers, body }) => {
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
