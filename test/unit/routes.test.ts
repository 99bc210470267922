import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { notFoundHandlers, readOnly, routeKey, routes, tableActions } from '../../shared/routes.ts';
import { grants as functionGrants } from '../../shared/grants.ts';
import { schedules, trainingTask, workers } from '../../shared/queue/workers.ts';
import { compile, matchPath } from '../../shared/http/route-match.ts';

/**
 * The functions that read the change index (gsi4), by what their module calls: a tenant's search
 * view (its first read asks for the span of the changes there), the index status (lists them) and
 * the maintenance sweep (counts them for a rebuild). On AWS a function may Query only the indexes
 * its route declares; the local stack refuses the calls it makes without them (local/grants.ts,
 * test/integration/local-grants.test.ts), but only those a test makes: these find the readers by
 * what their module calls.
 */
const READS_CHANGE_INDEX = /\b(runSearch|serveSearch|platformItemSearch|tenantView|indexStatus|sweep|maintenancePass)\(/;

describe('table grants', () => {
  it('let every function that reads the change index (gsi4) Query it, and the index status the pending index (gsi3)', () => {
    const all = [...routes.map((r) => ({ handler: r.handler, indexes: r.access.indexes ?? [] })), ...schedules.map((w) => ({ handler: w.handler, indexes: w.access.indexes ?? [] }))];
    const readers = all.filter((f) => READS_CHANGE_INDEX.test(readFileSync(`functions/${f.handler}.ts`, 'utf8')));
    expect(new Set(readers.map((f) => f.handler))).toEqual(
      new Set([
        'core/search/search',
        'core/recommendations/recommend',
        'platform/items/search',
        'platform/items/search-get',
        'platform/search-index/status',
        'console-session/reads',
        'workers/maintain',
      ]),
    );
    for (const f of readers) expect(f.indexes, f.handler).toContain('gsi4');
    for (const f of all.filter((x) => x.handler === 'platform/search-index/status')) expect(f.indexes).toContain('gsi3');
  });

  it("let every function that reads the searches by time (gsi1: the analytics report's unfolded searches, the fold) Query it", () => {
    const all = [...routes.map((r) => ({ handler: r.handler, indexes: r.access.indexes ?? [] })), ...schedules.map((w) => ({ handler: w.handler, indexes: w.access.indexes ?? [] }))];
    const readers = all.filter((f) => /\b(searchAnalytics|foldSearchCounts|maintenancePass)\(/.test(readFileSync(`functions/${f.handler}.ts`, 'utf8')));
    expect(new Set(readers.map((f) => f.handler))).toEqual(new Set(['platform/search-admin/routes', 'workers/maintain']));
    for (const f of readers) expect(f.indexes, f.handler).toContain('gsi1');
  });

  it('let every function that may serve popularity without a model read and store the popularity snapshot (GetItem, PutItem)', () => {
    // Recommendations, and a Core search through a context's plan (its popularity weight).
    const readers = routes.filter((r) => /\b(recommend|serveSearch)\(/.test(readFileSync(`functions/${r.handler}.ts`, 'utf8')));
    expect(new Set(readers.map((r) => r.handler))).toEqual(new Set(['core/recommendations/recommend', 'core/search/search', 'console-session/reads']));
    for (const r of readers) {
      expect(r.access.popularity, r.handler).toBe(true);
      expect(tableActions(r.access), r.handler).toEqual(expect.arrayContaining(['GetItem', 'PutItem']));
    }
  });

  it("let every function that reads a tenant's search view read the changes since its build (gsi2, gsi4) and, when served before that read ends, the page's items (BatchGetItem)", () => {
    const users = routes.filter((r) => /\bsearchDeps\(/.test(readFileSync(`functions/${r.handler}.ts`, 'utf8')));
    expect(new Set(users.map((r) => r.handler))).toEqual(
      new Set(['core/recommendations/recommend', 'core/search/search', 'console-session/reads', 'platform/items/search', 'platform/items/search-get', 'platform/search-index/status']),
    );
    // The index status reads the current build and lists the changes since it on gsi4 (indexStatus), not the view.
    const readers = users.filter((r) => r.handler !== 'platform/search-index/status');
    for (const r of readers) {
      expect(r.access.table, r.handler).toContain('BatchGetItem');
      expect(r.access.indexes, r.handler).toEqual(expect.arrayContaining(['gsi2', 'gsi4']));
    }
  });

  it("are one per function: a module's routes declare the same access (the stack binds a function with its first route's)", () => {
    for (const r of routes) expect(routes.find((x) => x.handler === r.handler)?.access, routeKey(r)).toEqual(r.access);
  });

  it('are known locally for every function the local stack invokes (routes, workers, schedules, the training task), none for the token endpoint (Cognito on AWS)', () => {
    const grants = functionGrants();
    for (const m of [
      ...routes.filter((r) => r.api !== 'auth').map((r) => r.handler),
      ...Object.values(notFoundHandlers),
      ...workers.map((w) => w.handler),
      ...schedules.map((s) => s.handler),
      trainingTask.handler,
    ])
      expect(grants.has(m), m).toBe(true);
    expect(grants.has(routes.find((r) => r.api === 'auth')?.handler as string)).toBe(false);
    // The quota rows: only functions of Core routes that authenticate a client.
    expect(grants.get('core/items/get')?.quotaRows).toBe(true);
    expect(grants.get('platform/items/search')?.quotaRows).toBe(false);
  });
});

describe('route table', () => {
  it('has one handler module per route that exports a handler', async () => {
    for (const m of new Set([...routes.map((r) => r.handler), ...Object.values(notFoundHandlers)])) {
      expect(existsSync(`functions/${m}.ts`), m).toBe(true);
      const mod = await import(/* @vite-ignore */ pathToFileURL(resolve(`functions/${m}.ts`)).href);
      expect(typeof mod.handler, m).toBe('function');
    }
  });

  it('lists every Core endpoint of the spec with its scope', () => {
    const core = routes.filter((r) => r.api === 'core' && r.method !== 'OPTIONS').map((r) => `${routeKey(r)} ${r.api === 'core' ? r.scope : ''}`);
    expect(core).toEqual(
      expect.arrayContaining([
        'POST /v1/items service-api/write',
        'GET /v1/items service-api/read',
        'GET /v1/items/{item_id} service-api/read',
        'POST /v1/items/{item_id} service-api/write',
        'PATCH /v1/items/{item_id} service-api/write',
        'DELETE /v1/items/{item_id} service-api/write',
        'POST /v1/events service-api/write',
        'GET /v1/events service-api/read',
        'GET /v1/events/{event_id} service-api/read',
      ]),
    );
  });

  it('gives every Core path an OPTIONS preflight route and has no duplicate route keys', () => {
    const corePaths = new Set(routes.filter((r) => r.api === 'core' && r.method !== 'OPTIONS').map((r) => r.path));
    for (const p of corePaths)
      expect(
        routes.some((r) => r.method === 'OPTIONS' && r.path === p),
        p,
      ).toBe(true);
    const keys = routes.map(routeKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('knows which Core routes cannot write (they run while the client record is read back)', () => {
    const core = routes.filter((r) => r.api === 'core' && r.method !== 'OPTIONS');
    expect(core.filter(readOnly).map(routeKey).sort()).toEqual(
      ['GET /v1/events', 'GET /v1/events/{event_id}', 'GET /v1/items', 'GET /v1/items/{item_id}', 'GET /v1/recommendations', 'POST /v1/search'].sort(),
    );
  });

  it('lets admin call every Platform route', () => {
    for (const r of routes) if (r.api === 'platform') expect(r.scopes).toContain('admin');
  });
});

describe('path matching', () => {
  it('extracts and decodes parameters', () => {
    const c = compile({ api: 'core', method: 'GET', path: '/v1/items/{item_id}', handler: 'core/items/get', scope: 'service-api/read', access: {} });
    expect(matchPath(c, '/v1/items/42')).toEqual({ item_id: '42' });
    expect(matchPath(c, '/v1/items/a%20b')).toEqual({ item_id: 'a b' });
    expect(matchPath(c, '/v1/items/42/x')).toBeUndefined();
    expect(matchPath(c, '/v1/items/')).toBeUndefined();
  });

  it('matches a path literally but for its parameters, every one of them, and passes on a segment that is no percent-encoding as sent', () => {
    const meta = compile({ api: 'public', method: 'GET', path: '/openapi.json', handler: 'meta/openapi', access: {} });
    expect(matchPath(meta, '/openapi.json')).toEqual({});
    expect(matchPath(meta, '/openapiXjson')).toBeUndefined();
    const two = compile({ api: 'platform', method: 'GET', path: '/api/a/{first}/b/{second}', handler: 'platform/x', scopes: ['admin'], access: {} });
    expect(matchPath(two, '/api/a/1/b/2')).toEqual({ first: '1', second: '2' });
    const item = compile({ api: 'core', method: 'GET', path: '/v1/items/{item_id}', handler: 'core/items/get', scope: 'service-api/read', access: {} });
    expect(matchPath(item, '/v1/items/%ZZ')).toEqual({ item_id: '%ZZ' });
  });
});
