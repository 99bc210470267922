import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compile, matchPath } from '../shared/http/route-match.ts';
import { notFoundHandlers, routeKey, routes, type Route } from '../shared/routes.ts';
import { startApiPool, type ApiPool } from './api-pool.ts';
import { isConsoleFile, isPlatformPath, serveConsole } from './console-static.ts';
import type { AccessEntry } from './access-log.ts';
import { lambdaContext, readBody, requestUrl, tenantOf, toApiGatewayEvent, writeResult, type LambdaHttpHandler } from './http-adapter.ts';
import { asFunction } from './grants.ts';
import { StartupError } from './lock.ts';

/** Imports a handler module under functions/ (what Lambda would load). */
export async function loadHandler(module: string): Promise<LambdaHttpHandler> {
  const mod = (await import(new URL(`../functions/${module}.ts`, import.meta.url).href)) as { handler?: LambdaHttpHandler };
  if (typeof mod.handler !== 'function') throw new Error(`functions/${module}.ts exports no handler`);
  return mod.handler;
}

export interface LocalServer {
  server: Server;
  port: number;
  /**
   * From now on, runs the handlers in `size` worker threads (see api-pool.ts) instead of this
   * thread; they take a snapshot of process.env, so call it once the environment is final.
   */
  useThreads(size: number): Promise<void>;
  close(): Promise<void>;
}

/** A request's path without its query (the access log leaves query strings out). */
function pathOf(url: string | undefined): string {
  try {
    return requestUrl(url).pathname;
  } catch {
    return (url ?? '/').split('?')[0] as string;
  }
}

/** Why the port could not be bound, in a sentence that says what to do. */
function listenError(e: NodeJS.ErrnoException, host: string, port: number): Error {
  switch (e.code) {
    case 'EADDRINUSE':
      return new StartupError(`Port ${port} on ${host} is already in use (another server?). Stop what holds it, or pick another port: PORT=0 picks a free one.`);
    case 'EACCES':
      return new StartupError(`Port ${port} on ${host} needs privileges this process lacks. Use a port above 1023, or PORT=0 for a free one.`);
    case 'EADDRNOTAVAIL':
      return new StartupError(`HOST ${host} is not an address of this machine; use 127.0.0.1 (the default) or 0.0.0.0.`);
    default:
      return e;
  }
}

/** The status and message of what Node's HTTP parser refuses, by its error's code (as Node's default answer; else 400). */
const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Request Entity Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/**
 * The local stand-in for API Gateway: one port serves the Core API (/v1), the Platform API
 * (/api) and the token endpoint (/oauth2/token), invoking the same handler modules Lambda runs.
 */
export async function startHttpServer(opts: { host: string; port: number; jwksFile: string; accessLog?: ((e: AccessEntry) => void) | undefined }): Promise<LocalServer> {
  const modules = new Set<string>([...routes.map((r) => r.handler), ...Object.values(notFoundHandlers)]);
  const handlers = new Map<string, LambdaHttpHandler>();
  for (const m of modules) handlers.set(m, await loadHandler(m));
  const compiled = routes.map(compile);
  let pool: ApiPool | undefined;
  const handlerOf = (module: string) => (pool ? pool.handler(module) : (handlers.get(module) as LambdaHttpHandler));

  // Requests being handled: closing waits for them, so none loses its database mid-write.
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  const server = createServer(async (req, res) => {
    inFlight++;
    const started = performance.now();
    let tenant: string | undefined;
    let requestId: string | undefined;
    const log = opts.accessLog;
    // Once the response is sent (or the client went away).
    if (log)
      res.once('close', () => log({ time: new Date(), method: req.method ?? '-', path: pathOf(req.url), status: res.statusCode, ms: performance.now() - started, tenant, request_id: requestId }));
    try {
      let path: string;
      try {
        path = requestUrl(req.url).pathname;
      } catch {
        // A request target that is no URL (`http://[::1/api`, a port past 65535): a bad request, as
        // Node's parser answers other malformed targets (400, no body), not a crashed handler.
        res.writeHead(400, { connection: 'close' }).end();
        return;
      }
      if (req.method === 'GET' && path === '/.well-known/jwks.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(readFileSync(opts.jwksFile));
        return;
      }
      let body: Awaited<ReturnType<typeof readBody>>;
      try {
        body = await readBody(req);
      } catch (e) {
        // The client went away before all of its body arrived: no request to handle, nobody to answer.
        if (req.destroyed) return;
        throw e;
      }
      if (body === 'too_large') {
        // The rest of the body is never read: the connection ends with this answer, and says so
        // (until 2026-12-07 it said keep-alive, and a client's next request on it met a reset).
        res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ message: 'Request Entity Too Large' }));
        return;
      }
      let route: Route | undefined;
      let params: Record<string, string> | undefined;
      for (const c of compiled) {
        if (c.route.method !== req.method) continue;
        params = matchPath(c, path);
        if (params) {
          route = c.route;
          break;
        }
      }
      // The console web app (console/dist): files at /console/ that no console route takes.
      if (!route && (req.method === 'GET' || req.method === 'HEAD') && isConsoleFile(path)) {
        await serveConsole(req, res, path);
        return;
      }
      const module = route ? route.handler : isPlatformPath(path) ? notFoundHandlers.platform : notFoundHandlers.core;
      const event = toApiGatewayEvent(req, body, route ? routeKey(route) : '$default', route ? params : undefined);
      const context = lambdaContext(module.replace(/\//g, '-'));
      const result = await asFunction(module, () => handlerOf(module)(event, context));
      tenant = tenantOf(context);
      const id = result.headers?.['x-request-id'];
      requestId = typeof id === 'string' ? id : undefined;
      writeResult(res, result);
    } catch (e) {
      // What API Gateway answers when the integration itself fails.
      console.error(JSON.stringify({ level: 'ERROR', message: 'handler crashed', error: String(e) }));
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
    } finally {
      // Counted until its answer has left (handed to the OS) or its client has gone: a stop
      // closes the connections only then, so it does not cut off an answer the client is still reading.
      const done = () => {
        if (--inFlight === 0) drained?.();
      };
      if (res.writableFinished || res.destroyed) done();
      else res.once('close', done);
    }
  });
  server.keepAliveTimeout = 65_000;
  // A request the HTTP parser refuses before any handler sees it (headers over Node's 16 KiB: 431;
  // chunk extensions over its 16 KiB: 413; a request not whole within Node's request or headers
  // timeout: 408; anything else malformed: 400) is answered with a JSON body, as API Gateway
  // answers what it refuses itself (`{ "message": ... }`, the OpenAPI document's GatewayMessage),
  // where Node's default answer had none (until 2026-12-06). The statuses are Node's own: the
  // handler of 2026-12-06 answered every refusal but the 431 as 400, a timed-out request too.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const [status, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad Request'];
    const body = JSON.stringify({ message });
    socket.end(`HTTP/1.1 ${status} ${message}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(e, opts.host, opts.port)));
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    useThreads: async (size) => {
      pool = await startApiPool(size, [...modules]);
    },
    // Every call answers once the one close is done (a second call waiting on `drained` of its
    // own would leave the first to its 10 s timer).
    close: () => (closing ??= closeServer()),
  };

  async function closeServer(): Promise<void> {
    // No new connections; idle ones close now, the rest once their requests are answered
    // (at most 10 s), before the caller stops the database. A request whose client has gone
    // (its connection closed) is still answered before the handler threads end: its handler
    // may be half way through writes.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const settled = inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => (drained = r));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([settled, new Promise<void>((r) => (timer = setTimeout(r, 10_000)))]);
    clearTimeout(timer);
    server.closeAllConnections();
    await closed;
    await pool?.close();
  }
}
