/**
 * Which routes the integration tests call (through test/helpers/stack.ts, whose every answer the
 * contract check validates against docs/openapi.json): read from their source, each call a method
 * literal followed by a path literal (`core('GET', `/v1/items/${id}`)`), matched against the route
 * table. Every documented route is called, or listed below with why not; a route called since is
 * to be taken off the list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile, matchPath } from '../../shared/http/route-match.ts';
import { routeKey, routes } from '../../shared/routes.ts';

/** Documented routes no integration test calls through request(), and why. */
const NOT_CALLED: Record<string, string> = {};

const CALL = /'(GET|POST|PUT|PATCH|DELETE|OPTIONS)'\s*,\s*(?:'(\/[^']*)'|`(\/[^`]*)`)/g;

/** Route keys called by the integration tests' source, by the file that calls them. */
export function calledRoutes(): Map<string, Set<string>> {
  const compiled = routes.map(compile);
  const files = [
    ...['test/integration', 'test/contract'].flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => join(dir, f)),
    ),
    'test/helpers/stack.ts',
  ];
  const out = new Map<string, Set<string>>();
  for (const file of files) {
    for (const m of readFileSync(file, 'utf8').matchAll(CALL)) {
      const method = m[1] as string;
      const path = ((m[2] ?? m[3]) as string).replace(/\$\{[^}]*\}/g, 'x').split('?')[0] as string;
      const hit = compiled.find((c) => c.route.method === method && matchPath(c, path) !== undefined);
      if (!hit) continue;
      const key = routeKey(hit.route);
      let by = out.get(key);
      if (!by) out.set(key, (by = new Set()));
      by.add(file);
    }
  }
  return out;
}

describe('contract coverage', () => {
  it('the integration tests call every documented route (the contract check validates what they answer), or it is listed with why not', () => {
    const called = calledRoutes();
    const notCalled = routes.map(routeKey).filter((k) => !called.has(k));
    console.info(`integration tests call ${called.size} of ${routes.length} documented routes; not called: ${notCalled.join(', ') || 'none'}`);
    expect(
      notCalled.filter((k) => !(k in NOT_CALLED)),
      'routes no integration test calls: call them, or list them in NOT_CALLED with why',
    ).toEqual([]);
    expect(
      Object.keys(NOT_CALLED).filter((k) => called.has(k)),
      'listed in NOT_CALLED but called: take them off the list',
    ).toEqual([]);
  });
});
