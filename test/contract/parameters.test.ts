/**
 * The document's query and path parameters against the schemas the handlers validate with: for
 * every parameter of every operation, values at and past the document's bounds (minimum, maximum,
 * lengths, enum, pattern, integer or not) are given to the parameter's schema in the document (as
 * a client reading it would check them) and to the handler's own (`declared`, what the service
 * answers 400 for). Each value must be refused by both or by neither: a bound the document states
 * and the service does not hold makes a client refuse values the service takes (created_after past
 * 2^53 - 1, documented as the maximum until 2026-12-08), and the reverse answers 400 to values the
 * document allows. A parameter the document calls optional must be one the handler takes absent,
 * and a documented default must be what the handler reads when it is absent.
 */
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type * as z from 'zod/mini';
import { beforeAll, describe, expect, it } from 'vitest';
import { fieldErrorsOf } from '../../shared/schemas/common.ts';
import { routeKey, routes } from '../../shared/routes.ts';
import { loadDeclared } from '../../shared/openapi/declared.ts';
import type { DeclaredOf } from '../../shared/openapi/document.ts';
import { sampleRegex } from '../helpers/fuzz.ts';
import { seededRandom } from '../../shared/random.ts';

type Json = Record<string, any>;

process.env.POWERTOOLS_TRACE_ENABLED = 'false';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const doc = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as { paths: Record<string, Record<string, Json>> };
let declaredOf: DeclaredOf;
beforeAll(async () => {
  declaredOf = await loadDeclared();
}, 60_000);

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/** A query or path value as a client checking the document reads it: digits as a number where the document says integer or number. */
function asDocumented(schema: Json, value: string): unknown {
  const numeric = schema.type === 'integer' || schema.type === 'number';
  return numeric && /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(value) ? Number(value) : value;
}

/** Values at and past each bound the document states, and ordinary ones. */
function probes(schema: Json): string[] {
  const out = new Set<string>(['', 'x', '0', '1', '-1', '01', '1.5', 'true', 'false', '2026-01-01', '1,2', 'a b', '9'.repeat(25)]);
  const big = [Number.MAX_SAFE_INTEGER, 2 ** 53, 2 ** 53 + 2, 1e20];
  for (const n of big) out.add(BigInt(n).toString());
  for (const k of ['minimum', 'maximum']) {
    const n = schema[k];
    if (typeof n === 'number') for (const d of [-1, 0, 1]) if (Number.isSafeInteger(n + d)) out.add(String(n + d));
  }
  if (schema.default !== undefined) out.add(String(schema.default));
  for (const v of (schema.enum as unknown[] | undefined) ?? []) {
    out.add(String(v));
    out.add(String(v).toUpperCase());
  }
  if (typeof schema.pattern === 'string') {
    const r = seededRandom(7);
    for (let i = 0; i < 20; i++) out.add(sampleRegex(new RegExp(schema.pattern), r));
  }
  for (const k of ['minLength', 'maxLength']) {
    const n = schema[k];
    if (typeof n === 'number')
      for (const d of [-1, 0, 1])
        if (n + d >= 0) {
          out.add('a'.repeat(n + d));
          out.add('1'.repeat(n + d));
        }
  }
  return [...out];
}

/**
 * Checks a handler makes past its parameter's schema that the document says in words, as JSON
 * Schema cannot state them: a mismatch on these values is that check, not a wrong bound.
 */
const PAST_JSON_SCHEMA: Readonly<Record<string, { why: string; explains: (value: string) => boolean }>> = {
  // '3,3': the pattern says 2 to 10 numbers; that each is named once, its description.
  'GET /api/models/compare versions': { why: 'each version named once', explains: (v) => new Set(v.split(',')).size !== v.split(',').length },
  // Read by searchAnalytics (shared/search/analytics.ts dayParam), not by the query schema: it refuses
  // what the documented pattern refuses (400 naming the parameter), and more (2026-02-30, seconds past 9999-12-31).
  'GET /api/analytics/searches from': { why: 'a day or Unix seconds, read by searchAnalytics', explains: (v) => !DAY_OR_SECONDS.test(v) },
  'GET /api/analytics/searches to': { why: 'a day or Unix seconds, read by searchAnalytics', explains: (v) => !DAY_OR_SECONDS.test(v) },
};
const DAY_OR_SECONDS = /^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{1,12})$/;

/** Whether the handler's schema refuses `value` of `name` (other fields as given): a 400 naming it. */
function handlerRefuses(schema: z.ZodMiniType, input: Record<string, string>, name: string): boolean {
  let r: ReturnType<typeof schema.safeParse>;
  try {
    r = schema.safeParse(input);
  } catch {
    // A well-formed value that names nothing (a path id past the largest): 404, not 400.
    return false;
  }
  return !r.success && Object.hasOwn(fieldErrorsOf(r.error), name);
}

interface Param {
  key: string;
  where: 'query' | 'path';
  name: string;
  required: boolean;
  schema: Json;
  handler: z.ZodMiniType;
}

/** The other parameters of the same operation and place, each alone, set to `1` (a limit, an id, a context): what a value may depend on. */
function variants(p: Param): Record<string, string>[] {
  return [
    {},
    ...documentedParams()
      .filter((q) => q.key === p.key && q.where === p.where && q.name !== p.name)
      .map((q) => ({ [q.name]: '1' })),
  ];
}

let params: Param[] | undefined;
function documentedParams(): Param[] {
  if (params) return params;
  const out: Param[] = [];
  for (const r of routes) {
    if (r.method === 'OPTIONS') continue;
    const declared = declaredOf(r);
    if (!declared) continue;
    const op = doc.paths[r.path]?.[r.method.toLowerCase()] as Json;
    for (const p of (op.parameters ?? []) as Json[]) {
      if (p.in !== 'query' && p.in !== 'path') continue;
      const handler = p.in === 'query' ? declared.query : declared.path;
      if (!handler) continue;
      out.push({ key: routeKey(r), where: p.in, name: p.name, required: p.required === true, schema: p.schema, handler });
    }
  }
  params = out;
  return out;
}

describe("the document's parameters against the handlers' schemas", () => {
  it('finds parameters to check on Core, Platform and console routes', () => {
    const keys = new Set(documentedParams().map((p) => p.key));
    expect(keys.size).toBeGreaterThan(40);
    expect([...keys]).toEqual(expect.arrayContaining(['GET /v1/items', 'GET /v1/recommendations', 'GET /api/training-jobs', 'GET /console/api/events']));
  });

  it('each value is refused by both the document and the handler, or by neither', () => {
    const mismatches: string[] = [];
    for (const p of documentedParams()) {
      const validate = ajv.compile(p.schema);
      for (const value of probes(p.schema)) {
        const docRefuses = !validate(asDocumented(p.schema, value));
        // Taken when some request takes it: alone, or beside another parameter (a cursor that is an id without `contextId`, opaque with it).
        const refuses = variants(p).every((other) => handlerRefuses(p.handler, { ...other, [p.name]: value }, p.name));
        if (docRefuses !== refuses && !PAST_JSON_SCHEMA[`${p.key} ${p.name}`]?.explains(value))
          mismatches.push(
            `${p.key} ${p.where} ${p.name}=${JSON.stringify(value.length > 40 ? `${value.slice(0, 20)}…(${value.length})` : value)}: document ${docRefuses ? 'refuses' : 'takes'}, handler ${refuses ? 'refuses' : 'takes'} (${JSON.stringify(p.schema)})`,
          );
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('a parameter the document calls optional is one the handler takes absent, a required one it refuses absent', () => {
    const mismatches: string[] = [];
    for (const p of documentedParams()) {
      const refuses = handlerRefuses(p.handler, {}, p.name);
      if (refuses !== p.required) mismatches.push(`${p.key} ${p.where} ${p.name}: document says ${p.required ? 'required' : 'optional'}, handler ${refuses ? 'refuses' : 'takes'} it absent`);
    }
    expect(mismatches).toEqual([]);
  });

  it('a documented default is what the handler reads when the parameter is absent', () => {
    const mismatches: string[] = [];
    for (const p of documentedParams()) {
      if (p.schema.default === undefined) continue;
      const r = p.handler.safeParse({});
      const read = r.success ? (r.data as Json)[p.name] : undefined;
      if (!r.success && Object.hasOwn(fieldErrorsOf(r.error), p.name)) mismatches.push(`${p.key} ${p.name}: refused absent`);
      else if (r.success && read !== p.schema.default) mismatches.push(`${p.key} ${p.name}: document's default ${JSON.stringify(p.schema.default)}, handler reads ${JSON.stringify(read)}`);
    }
    expect(mismatches).toEqual([]);
  });
});
