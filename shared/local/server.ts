import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compile, matchPath } from '../http/route-match.ts';
import { notFoundHandlers, routeKey, routes, type Route } from '../routes.ts';
import { startApiPool, type ApiPool } from './api-pool.ts';
import { lambdaContext, readBody, toApiGatewayEvent, writeResult, type LambdaHttpHandler } from './http-adapter.ts';

/** Imports a handler module under functions/ (what Lambda would load). */
export async function loadHandler(module: string): Promise<LambdaHttpHandler> {
  const mod = (await import(new URL(`../../functions/${module}.ts`, import.meta.url).href)) as { handler?: LambdaHttpHandler };
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

/**
 * The local stand-in for API Gateway: one port serves the Core API (/v1), the Platform API
 * (/api) and the token endpoint (/oauth2/token), invoking the same handler modules Lambda runs.
 */
export async function startHttpServer(opts: { host: string; port: number; jwksFile: string }): Promise<LocalServer> {
  const modules = new Set<string>([...routes.map((r) => r.handler), ...Object.values(notFoundHandlers)]);
  const handlers = new Map<string, LambdaHttpHandler>();
  for (const m of modules) handlers.set(m, await loadHandler(m));
  const compiled = routes.map(compile);
  let pool: ApiPool | undefined;
  const handlerOf = (module: string) => (pool ? pool.handler(module) : (handlers.get(module) as LambdaHttpHandler));

  // Requests being handled: closing waits for them, so none loses its database mid-write.
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const server = createServer(async (req, res) => {
    inFlight++;
    try {
      const path = new URL(req.url ?? '/', 'http://local').pathname;
      if (req.method === 'GET' && path === '/.well-known/jwks.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(readFileSync(opts.jwksFile));
        return;
      }
      const body = await readBody(req);
      if (body === 'too_large') {
        res.writeHead(413, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Request Entity Too Large' }));
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
      const module = route ? route.handler : path.startsWith('/api/') || path === '/api' ? notFoundHandlers.platform : notFoundHandlers.core;
      const event = toApiGatewayEvent(req, body, route ? routeKey(route) : '$default', route ? params : undefined);
      const result = await handlerOf(module)(event, lambdaContext(module.replace(/\//g, '-')));
      writeResult(res, result);
    } catch (e) {
      // What API Gateway answers when the integration itself fails.
      console.error(JSON.stringify({ level: 'ERROR', message: 'handler crashed', error: String(e) }));
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
    } finally {
      if (--inFlight === 0) drained?.();
    }
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    useThreads: async (size) => {
      pool = await startApiPool(size, [...modules]);
    },
    close: async () => {
      // No new connections; idle ones close now, the rest once their requests are answered
      // (at most 10 s), before the caller stops the database.
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        const settled = inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => (drained = r));
        const timer = setTimeout(() => server.closeAllConnections(), 10_000);
        void settled.then(() => {
          clearTimeout(timer);
          server.closeAllConnections();
        });
      });
      await pool?.close();
    },
  };
}
