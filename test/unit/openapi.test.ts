import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../shared/openapi/document.ts';
import { DOCUMENT_PATH, generateDocument } from '../../shared/openapi/generate.ts';
import { SESSION_COOKIE } from '../../shared/console-auth/session.ts';
import { routeKey, routes, tableActions } from '../../shared/routes.ts';
import { loadDeclared } from '../../shared/openapi/declared.ts';
import { MAX_NAMED_FIELDS } from '../../shared/http/base.ts';
import { MAX_METADATA_BYTES, updateItemBody } from '../../shared/schemas/items.ts';

type Doc = { paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; responses: Record<string, unknown> }>> };

let generated: string;
let committed: string;
beforeAll(async () => {
  generated = await generateDocument();
  committed = readFileSync(DOCUMENT_PATH, 'utf8');
}, 60_000);

describe('the OpenAPI document (docs/openapi.json)', () => {
  it('is what the route table and the handlers generate', () => {
    if (generated !== committed) {
      const a = generated.split('\n');
      const b = committed.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      throw new Error(`${DOCUMENT_PATH} is out of date: run npm run openapi (first difference at line ${line + 1}: generated ${JSON.stringify(a[line])}, committed ${JSON.stringify(b[line])})`);
    }
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(committed));
    expect(result.errors, JSON.stringify(result.errors, null, 2)?.slice(0, 3000)).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it("has one operation, with a unique operationId, per route of the table (the console's own included)", () => {
    const doc = JSON.parse(committed) as Doc;
    const ids: string[] = [];
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(op, routeKey(r)).toBeDefined();
      ids.push(op?.operationId as string);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(OPERATIONS).every((k) => routes.some((r) => routeKey(r) === k))).toBe(true);
  });

  it('answers every Platform operation with a JSON object (the spec: "Each Platform response is a JSON object"), deletes included', () => {
    const platform = routes.filter((r) => r.api === 'platform' && r.path.startsWith('/api/'));
    expect(platform.length).toBeGreaterThan(40);
    for (const r of platform) {
      const ok = OPERATIONS[routeKey(r)]?.ok;
      expect(ok?.status, routeKey(r)).not.toBe(204);
      expect(ok?.schema, routeKey(r)).not.toBeNull();
    }
  });

  it('asks each API for its credential: Core scopes, Platform API keys or a console session, the session alone on console routes, Basic for tokens, nothing for public routes', () => {
    const doc = JSON.parse(committed) as Doc;
    const op = (method: string, path: string) => doc.paths[path]?.[method];
    expect(op('get', '/v1/items')?.security).toEqual([{ coreOAuth: ['service-api/read'] }]);
    expect(op('post', '/v1/events')?.security).toEqual([{ coreOAuth: ['service-api/write'] }]);
    expect(op('get', '/api/rules')?.security).toEqual([{ platformApiKey: [] }, { consoleSession: [] }]);
    expect(op('get', '/console/session')?.security).toEqual([{ consoleSession: [] }]);
    expect(op('post', '/console/api/search')?.security).toEqual([{ consoleSession: [] }]);
    expect(op('post', '/console/session')?.security).toEqual([]);
    expect(op('post', '/oauth2/token')?.security).toEqual([{ clientBasic: [] }]);
    for (const [m, p] of [
      ['get', '/openapi.json'],
      ['get', '/health'],
      ['options', '/v1/items'],
    ] as const)
      expect(op(m, p)?.security, `${m} ${p}`).toEqual([]);
    // Core errors in the Core envelope, Platform errors in the Platform one.
    expect(op('get', '/v1/items/{item_id}')?.responses['404']).toEqual({ $ref: '#/components/responses/CoreError404' });
    expect(op('get', '/api/rules/{id}')?.responses['404']).toEqual({ $ref: '#/components/responses/PlatformError404' });
    expect(op('post', '/console/session')?.responses['429']).toEqual({ $ref: '#/components/responses/PlatformError429' });
    expect(op('delete', '/console/session')?.responses['403']).toEqual({ $ref: '#/components/responses/PlatformError403' });
  });

  it("lists API Gateway's own answers on every route (its 429 past the stage's throttle, its 500), which are in no envelope of the service", () => {
    const doc = JSON.parse(committed) as Doc & { components: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } };
    const gateway = { $ref: '#/components/schemas/GatewayMessage' };
    for (const r of routes.filter((r) => r.method !== 'OPTIONS')) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(Object.keys(op?.responses ?? {}), routeKey(r)).toContain('429');
      expect(Object.keys(op?.responses ?? {}), routeKey(r)).toContain('500');
    }
    // A route with no 429 of its own answers only API Gateway's; one with its own, either.
    expect(doc.paths['/api/rules']?.get?.responses['429']).toEqual({ $ref: '#/components/responses/GatewayThrottled429' });
    expect(doc.paths['/health']?.get?.responses['429']).toEqual({ $ref: '#/components/responses/GatewayThrottled429' });
    expect(doc.paths['/v1/items']?.get?.responses['429']).toEqual({ $ref: '#/components/responses/CoreError429' });
    expect(doc.paths['/oauth2/token']?.post?.responses['429']).toEqual({ $ref: '#/components/responses/OAuthError429' });
    const responses = doc.components.responses;
    expect(responses.GatewayThrottled429?.content['application/json']?.schema).toEqual(gateway);
    for (const name of ['CoreError413', 'CoreError429', 'CoreError500', 'PlatformError413', 'PlatformError429', 'PlatformError500']) {
      expect((responses[name]?.content['application/json']?.schema as { oneOf?: unknown[] } | undefined)?.oneOf, name).toContainEqual(gateway);
    }
  });

  it("does not say API Gateway answers the token endpoint: on AWS it is Cognito's domain, its throttle AWS WAF's slow_down", () => {
    const doc = JSON.parse(generated) as { components: { responses: Record<string, { description: string; content: Record<string, { schema: unknown }> }> } };
    for (const status of [400, 401, 429, 500]) {
      const r = doc.components.responses[`OAuthError${status}`];
      expect(r?.content['application/json']?.schema, `OAuthError${status}`).toEqual({ $ref: '#/components/schemas/OAuthError' });
      expect(r?.description, `OAuthError${status}`).not.toContain('API Gateway');
    }
  });

  it("says what a facet's values_truncated means, values cut for the answer's size too (the typed client's type alike)", () => {
    const doc = JSON.parse(generated) as { components: { schemas: Record<string, { description?: string }> } };
    const said = doc.components.schemas.Facet?.description ?? '';
    for (const part of ['`values_truncated`', 'the 100 most frequent', '6 MB', '1,000,000 bytes']) expect(said, part).toContain(part);
    expect(readFileSync(new URL('../../packages/client/src/schema.ts', import.meta.url), 'utf8')).toContain('`values_truncated`: the key has values not listed in `values`');
  });

  it('says an error names at most the first fields in error (MAX_NAMED_FIELDS), its message how many there are (the typed client alike)', () => {
    const doc = JSON.parse(generated) as { components: { schemas: Record<string, { description?: string }> } };
    const said = doc.components.schemas.CoreError?.description ?? '';
    for (const part of [`the first ${MAX_NAMED_FIELDS} fields in error at most`, `The first ${MAX_NAMED_FIELDS} of N fields in error are named.`]) expect(said, part).toContain(part);
    expect(readFileSync(new URL('../../packages/client/src/schema.ts', import.meta.url), 'utf8')).toContain(`the first ${MAX_NAMED_FIELDS} fields in error at most`);
  });

  it('documents the console session: a cookie named as the code sets it, its CSRF header on requests that change something', () => {
    const doc = JSON.parse(committed) as { paths: Record<string, Record<string, any>>; components: { securitySchemes: Record<string, any> } };
    expect(doc.components.securitySchemes.consoleSession).toMatchObject({ type: 'apiKey', in: 'cookie', name: SESSION_COOKIE });
    expect(doc.components.securitySchemes.consoleSession.description).toContain('X-CSRF-Token');
    const csrf = (method: string, path: string) => doc.paths[path]?.[method].parameters?.find((p: { name: string }) => p.name === 'X-CSRF-Token');
    expect(csrf('post', '/console/api/search')).toMatchObject({ in: 'header', required: true });
    expect(csrf('delete', '/console/session')).toMatchObject({ in: 'header', required: false });
    expect(csrf('get', '/console/api/events')).toBeUndefined();
    expect(csrf('post', '/console/session')).toBeUndefined();
    expect(doc.paths['/console/session']?.post.responses['200'].headers['Set-Cookie']).toBeDefined();
    expect(doc.paths['/console/session']?.servers).toEqual(doc.paths['/api/rules']?.servers);
  });

  it('documents request bodies and parameters from the schemas the handlers validate with', () => {
    const doc = JSON.parse(committed) as { paths: Record<string, Record<string, any>> };
    const create = doc.paths['/v1/items']?.post;
    expect(create.requestBody.content['application/json'].schema.anyOf).toHaveLength(2);
    expect(create.parameters.map((p: { name: string }) => p.name)).toEqual(['Idempotency-Key']);
    const list = doc.paths['/v1/items']?.get;
    expect(list.parameters.find((p: { name: string }) => p.name === 'limit').schema).toEqual({ default: 20, maximum: 100, minimum: 1, type: 'integer' });
    expect(doc.paths['/v1/items/{item_id}']?.get.parameters[0]).toMatchObject({ name: 'item_id', in: 'path', required: true });
    expect(doc.paths['/api/segments']?.post.requestBody.content['application/json'].schema.properties.definition).toEqual({ $ref: '#/components/schemas/SegmentDefinition' });
  });

  it('says what the server enforces (an OpenAPI review): roles, CSRF, patterns, checks past the type, the headers of errors', () => {
    const doc = JSON.parse(committed) as { paths: Record<string, Record<string, any>>; components: { responses: Record<string, any> } };
    const at = (method: string, path: string) => doc.paths[path]?.[method];
    // A read a viewer's session may make (POST, but read-only grants), and a console write only an admin may.
    expect(at('post', '/api/items/search').description).toContain('Or a console session (with its `X-CSRF-Token`): any role');
    expect(at('post', '/api/contexts').description).toContain('Or a console session (with its `X-CSRF-Token`): the `admin` role');
    expect(at('patch', '/console/api/items/{item_id}').description).toContain('Console session (with its `X-CSRF-Token`): the `admin` role');
    expect(at('post', '/console/api/search').description).toContain('any role');
    // A viewer's session reads the search administration (GET), as every GET route; its changes are admin's.
    for (const path of ['/api/synonyms', '/api/synonyms/{id}', '/api/analytics/searches']) expect(at('get', path).description, path).toContain('Or a console session: any role');
    expect(at('patch', '/api/synonyms/{id}').description).toContain('Or a console session (with its `X-CSRF-Token`): the `admin` role');
    // The CSRF header on the Platform API, for a session instead of a key.
    expect(at('post', '/api/contexts').parameters.find((p: { name: string }) => p.name === 'X-CSRF-Token')).toMatchObject({ in: 'header', required: false });
    expect(at('get', '/api/contexts').parameters.find((p: { name: string }) => p.name === 'X-CSRF-Token')).toBeUndefined();
    // Patterns the server checks after a transform.
    const param = (method: string, path: string, name: string) => at(method, path).parameters.find((p: { name: string }) => p.name === name).schema;
    expect(param('get', '/v1/items', 'starting_after')).toEqual({ type: 'string', pattern: '^[1-9][0-9]*$' });
    expect(param('get', '/api/rerank-controls', 'contextId')).toEqual({ type: 'string', pattern: '^[1-9][0-9]*$' });
    expect(param('get', '/api/analytics/searches', 'from').pattern).toBeDefined();
    expect(param('get', '/api/models/compare', 'versions').pattern).toMatch(/\{1,9\}\$$/);
    const event = at('post', '/v1/events').requestBody.content['application/json'].schema.items.properties.item_id;
    expect(event.anyOf[0]).toMatchObject({ type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$' });
    // Checks past the type: a PATCH names a field at least; a scope once.
    for (const path of ['/v1/items/{item_id}', '/api/rules/{id}', '/api/segments/{id}', '/api/experiments/{id}', '/api/synonyms/{id}', '/api/models/{version}', '/api/events/templates/{id}']) {
      expect(at('patch', path).requestBody.content['application/json'].schema.minProperties, path).toBe(1);
    }
    // The bounds of search's lists, checked after their unions (docs/api.md: 100 categories or brands, 1,000 values of `in`).
    const searchFilters = at('post', '/v1/search').requestBody.content['application/json'].schema.properties.filters.anyOf;
    expect(searchFilters[0].properties.category.anyOf[1].maxItems).toBe(100);
    expect(searchFilters[0].properties.brand.anyOf[1].maxItems).toBe(100);
    expect(searchFilters[1].items.properties.value.anyOf[1].maxItems).toBe(1000);
    expect(at('post', '/api/items/search').requestBody.content['application/json'].schema.properties.filters.items.properties.value.anyOf[1].maxItems).toBe(1000);
    expect(at('post', '/api/api-keys').requestBody.content['application/json'].schema.properties.scopes.uniqueItems).toBe(true);
    expect(at('post', '/api/clients').requestBody.content['application/json'].schema.properties.scopes.uniqueItems).toBe(true);
    // A body over 1 MiB is 413 on every route that reads one, a route that takes none too (it is refused before it is parsed).
    for (const [method, path] of Object.entries({ post: '/api/search-index/rebuild', get: '/api/event-types', delete: '/api/api-keys/{id}' })) {
      expect(Object.keys(at(method, path).responses), `${method} ${path}`).toContain('413');
    }
    // The headers of errors: every 401 its challenge, every 429 its Retry-After, the token endpoint's no caching.
    for (const [name, r] of Object.entries(doc.components.responses)) {
      if (name.endsWith('401')) expect(r.headers['WWW-Authenticate'], name).toBeDefined();
      if (name.endsWith('429') && name !== 'GatewayThrottled429') expect(r.headers['Retry-After'], name).toBeDefined();
      // A 503 of the table refusing for load (shared/data/busy.ts) carries Retry-After on any Core or Platform route (until 2026-12-07 undocumented).
      if (name === 'CoreError503' || name === 'PlatformError503') expect([r.headers['Retry-After'], r.description], name).toEqual([expect.anything(), expect.stringMatching(/load/)]);
      if (name.startsWith('OAuth')) expect(r.headers.Pragma, name).toBeDefined();
    }
    expect(at('post', '/oauth2/token').responses['200'].headers['Cache-Control']).toBeDefined();
    // 409 where a record's store throws Conflict after its tries (`changed_meanwhile`), and not on an
    // item update, which retries until it writes (until 2026-12-05 the synonym set's were left out,
    // the item update's listed).
    for (const [method, path] of [
      ['patch', '/api/synonyms/{id}'],
      ['delete', '/api/synonyms/{id}'],
      ['patch', '/api/rules/{id}'],
      ['delete', '/api/segments/{id}'],
      ['put', '/api/rerank-controls'],
    ]) {
      expect(Object.keys(at(method as string, path as string).responses), `${method} ${path}`).toContain('409');
    }
    for (const method of ['post', 'patch']) expect(Object.keys(at(method, '/v1/items/{item_id}').responses)).not.toContain('409');
  });

  it('states the limits of an item\'s metadata that the handlers enforce (until 2026-12-08 only "Any JSON value." of its values)', () => {
    const doc = JSON.parse(committed) as { paths: Record<string, Record<string, any>> };
    const body = (method: string, path: string) => doc.paths[path]?.[method].requestBody.content['application/json'].schema;
    // The deepest metadata (objects within objects, metadata itself counted) the handler's schema takes.
    const nested = (n: number): unknown => (n === 0 ? 1 : { a: nested(n - 1) });
    let deepest = 1;
    while (updateItemBody.safeParse({ metadata: nested(deepest + 1) }).success) deepest += 1;
    // What it refuses at the bounds the description names.
    const refused = (metadata: unknown) => !updateItemBody.safeParse({ metadata }).success;
    expect([refused({ n: Number.MAX_SAFE_INTEGER }), refused({ n: Number.MAX_SAFE_INTEGER + 2 }), refused({ n: 1e-130 }), refused({ n: 1e-131 })]).toEqual([false, true, false, true]);
    // (A key `__proto__` is refused before the schema, as the body is read: shared/http/base.ts.)
    expect([refused(JSON.parse('{"constructor": 1}')), refused({ s: 'x'.repeat(MAX_METADATA_BYTES) })]).toEqual([true, true]);
    const descriptions = [
      body('post', '/v1/items/{item_id}').properties.metadata,
      body('patch', '/v1/items/{item_id}').properties.metadata,
      body('patch', '/console/api/items/{item_id}').properties.metadata,
      ...body('post', '/v1/items').anyOf.map((s: any) => (s.items ?? s).properties.metadata),
    ].map((m) => m.description as string | undefined);
    expect(descriptions).toHaveLength(5);
    for (const d of descriptions) {
      expect(d).toContain(`${MAX_METADATA_BYTES} bytes`);
      expect(d).toContain(`nest at most ${deepest} levels`);
      expect(d).toContain(`from 1e-130 to ${Number.MAX_SAFE_INTEGER}`);
      expect(d).toContain('constructor or __proto__');
    }
  });

  it('has patterns every JSON Schema validator reads alike: the same strings match with and without the `u` flag', () => {
    // A validator compiling `pattern` without the flag (JavaScript's `new RegExp(pattern)`, Ajv's
    // unicodeRegExp off) read a name's `[^\\p{White_Space}...]` as the letters of those names:
    // `Ice` failed, a zero-width space passed (until 2026-12-07); Python's `re` refused it.
    const patterns = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          if (k === 'pattern' && typeof x === 'string') patterns.add(x);
          else walk(x);
        }
    };
    walk(JSON.parse(committed));
    expect(patterns.size).toBeGreaterThan(5);
    const samples = ['Ice', 'public', 'Default', 'Sales 2026', 'a', ' ', '\t', '\u200b', '\u00a0\u00ad', '\u3164', 'caf\u00e9', '\u{1F600}', '12', '2026-02-29', 'x\u200dy'];
    for (const p of patterns) {
      const plain = new RegExp(p);
      const unicode = new RegExp(p, 'u');
      for (const s of samples) expect(plain.test(s), `${p} on ${JSON.stringify(s)}`).toBe(unicode.test(s));
    }
    // The names' pattern says what the server does, in the BMP at least.
    const doc = JSON.parse(committed) as { paths: Record<string, Record<string, any>> };
    const name = doc.paths['/api/contexts']?.post?.requestBody?.content?.['application/json']?.schema?.properties?.name?.pattern as string;
    expect(['Ice', '\u200b', ' \u00ad'].map((s) => new RegExp(name).test(s))).toEqual([true, false, false]);
  });

  it("each route whose handler honours Idempotency-Key is granted the key record's writes (claim, reserve and store, free)", async () => {
    const declaredOf = await loadDeclared();
    const keyed = routes.filter((r) => declaredOf(r)?.idempotent);
    expect(keyed.map(routeKey).sort()).toEqual(
      [
        'POST /api/contexts',
        'POST /api/event-types',
        'POST /api/events/templates',
        'POST /api/experiments',
        'POST /api/model-endpoints',
        'POST /api/rules',
        'POST /api/segments',
        'POST /api/synonyms',
        'POST /api/training-jobs',
        'POST /v1/events',
        'POST /v1/items',
      ].sort(),
    );
    for (const r of keyed) expect(tableActions(r.access), routeKey(r)).toEqual(expect.arrayContaining(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem']));
  });
});
