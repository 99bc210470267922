import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../shared/openapi/document.ts';
import { DOCUMENT_PATH, generateDocument } from '../../shared/openapi/generate.ts';
import { SESSION_COOKIE } from '../../shared/console-auth/session.ts';
import { routeKey, routes } from '../../shared/routes.ts';

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
});
