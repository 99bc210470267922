// dynalite in its own thread, as DynamoDB is its own service: the API's event loop never
// serves database work, and the database never waits for the API.
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';

const server = dynalite({ ...(workerData.path ? { path: workerData.path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.on('error', (e) => parentPort.postMessage({ error: String(e) }));
server.listen(workerData.port ?? 0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'close') server.close(() => parentPort.postMessage({ closed: true }));
});
