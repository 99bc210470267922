import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DeclaredRequest } from '../http/handler.ts';
import { routeKey, routes } from '../routes.ts';
import type { DeclaredOf } from './document.ts';

const FUNCTIONS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'functions');

type Declaring = { declared?: DeclaredRequest };
interface HandlerModule {
  handler?: Declaring;
  /** A module serving several routes: each route's handler, by route key (functions/platform/search-admin/routes.ts). */
  routeHandlers?: Record<string, Declaring>;
}

/**
 * Imports the handler module of every Core and Platform route (the console's own among them) and reads
 * the request schemas its handler was built with (`declared`, see shared/http/handler.ts).
 * Node only (the generator and the tests); set the environment first (no tracing).
 */
export async function loadDeclared(): Promise<DeclaredOf> {
  const byKey = new Map<string, DeclaredRequest>();
  for (const r of routes) {
    if ((r.api !== 'core' && r.api !== 'platform') || r.method === 'OPTIONS') continue;
    const mod = (await import(/* @vite-ignore */ pathToFileURL(join(FUNCTIONS, `${r.handler}.ts`)).href)) as HandlerModule;
    const declared = mod.routeHandlers?.[routeKey(r)]?.declared ?? mod.handler?.declared;
    if (!declared) throw new Error(`functions/${r.handler}.ts declares no request schemas for ${routeKey(r)}: build it with coreHandler or platformHandler`);
    byKey.set(routeKey(r), declared);
  }
  return (r) => byKey.get(routeKey(r));
}
