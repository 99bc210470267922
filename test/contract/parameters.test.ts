/**
 * The document's query and path parameters against the schemas the handlers validate with: for
 * every parameter of every operation, values at and past the document's bounds (minimum, maximum,
 * lengths, enum, pattern, integer or not) are given to the parameter's schema in the document (as
 * a client reading it would check them) and to the handler's own (`declared`, what the service
 * answers 400 for). Each value must be refused by both or by neither: a bound the document states
 * and the service does not hold makes a client refuse values the service takes (created_after past
 * 2^53 - 1, documented as the maximum until 2026-12-08), and the reverse answers 400 to values the
 * document allows. A parameter the document calls optional must be one the handler takes absent,
 * and a documented default must be what the handler reads when it is absent. Every property of a
 * JSON body (nested objects, list items and alternatives followed: `conditions.0.value`) is probed
 * the same way (a template's `schedule` documented as taking `{}` until 2026-12-08), and every
 * object of a body must be closed (additionalProperties false) and list its required fields exactly
 * as the handler refuses unknown and absent ones. What a handler checks past JSON Schema (a
 * refinement the document says in words, or a check of the domain) is listed with why.
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
import { phraseTerms } from '../../shared/search/text.ts';
import { searchAnalytics, type SearchLogStore } from '../../shared/search/analytics.ts';
import { InvalidInput } from '../../shared/domain/errors.ts';

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
  const out = new Set<string>([
    '',
    'x',
    ' ',
    'a\nb',
    'a\u0000b',
    '\u200b',
    'caf\u00e9',
    '.',
    '..',
    '0',
    '1',
    '-1',
    '01',
    '1.5',
    'true',
    'false',
    '2026-01-01',
    '2026-02-30',
    '1,2',
    'a b',
    '9'.repeat(25),
  ]);
  // 253402300799: the last second of 9999-12-31 (search analytics' `from`, `to`); 12 digits past it.
  for (const v of ['253402300799', '253402300800', '999999999999', '000000000001']) out.add(v);
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
  // A day the calendar does not have (2026-02-30): the pattern takes its digits, its description says so.
  'GET /api/analytics/searches from': { why: 'a date of the calendar', explains: (v) => /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(v) && !isCalendarDay(v) },
  'GET /api/analytics/searches to': { why: 'a date of the calendar', explains: (v) => /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(v) && !isCalendarDay(v) },
};
const isCalendarDay = (v: string) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) === v;

/** What the domain refuses of a parameter its query schema takes as any string (400 naming it), by `key name`. */
const READ_BY_THE_DOMAIN: Readonly<Record<string, (value: string) => Promise<boolean>>> = {
  'GET /api/analytics/searches from': (v) => analyticsRefuses('from', v),
  'GET /api/analytics/searches to': (v) => analyticsRefuses('to', v),
};

/** Whether searchAnalytics refuses `value` as `field` itself (400 naming it: not the range's checks, which name `from` for the pair). */
async function analyticsRefuses(field: 'from' | 'to', value: string): Promise<boolean> {
  const store = { counts: async () => ({ byQuery: new Map(), complete: true }) } as unknown as SearchLogStore;
  try {
    await searchAnalytics(store, 'tenant', { [field]: value, limit: 10, click_type: 'click', conversion_type: 'purchase' });
    return false;
  } catch (e) {
    const messages = e instanceof InvalidInput ? (e.fieldErrors?.[field] ?? []) : [];
    return messages.some((m) => !m.includes('must not be after') && !m.includes('the range covers'));
  }
}

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

  it('each value is refused by both the document and the handler, or by neither', async () => {
    const mismatches: string[] = [];
    for (const p of documentedParams()) {
      const validate = ajv.compile(p.schema);
      const domain = READ_BY_THE_DOMAIN[`${p.key} ${p.name}`];
      for (const value of probes(p.schema)) {
        const docRefuses = !validate(asDocumented(p.schema, value));
        // Taken when some request takes it: alone, or beside another parameter (a cursor that is an id without `contextId`, opaque with it).
        const refuses = variants(p).every((other) => handlerRefuses(p.handler, { ...other, [p.name]: value }, p.name)) || (domain !== undefined && (await domain(value)));
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

// ---------------------------------------------------------------------------------------------
// JSON bodies: each top-level property of an object body, as the parameters above.

const DOC_ID = 'https://recsearch.local/openapi.json';

/** Whether a rule's body schema refuses `list` as the value of an `in` condition (naming it). */
function refusesInList(handler: z.ZodMiniType, list: unknown[]): boolean {
  const r = handler.safeParse({ conditions: [{ field: 'category', op: 'in', value: list }] });
  return !r.success && Object.hasOwn(fieldErrorsOf(r.error), 'conditions.0.value');
}

/** A body property's checks past JSON Schema, said in the document's words (its `description`), as PAST_JSON_SCHEMA above. */
const BODY_PAST_JSON_SCHEMA: Readonly<Record<string, { why: string; explains: (value: unknown, handler: z.ZodMiniType) => boolean }>> = {
  // "a", "the": stop words alone, which search never matches (a synonym's description says so); "" its minLength.
  'POST /api/synonyms input': { why: 'a word search does not ignore', explains: (v) => typeof v === 'string' && v !== '' && phraseTerms(v).length === 0 },
  'PATCH /api/synonyms/{id} input': { why: 'a word search does not ignore', explains: (v) => typeof v === 'string' && v !== '' && phraseTerms(v).length === 0 },
  'POST /api/synonyms synonyms.0': { why: 'a word search does not ignore', explains: (v) => typeof v === 'string' && v !== '' && phraseTerms(v).length === 0 },
  'PATCH /api/synonyms/{id} synonyms.0': { why: 'a word search does not ignore', explains: (v) => typeof v === 'string' && v !== '' && phraseTerms(v).length === 0 },
  // A rule condition's list is checked once field and op are valid (its superRefine): the probe sends the
  // list alone. Explained only when a whole condition with op `in` refuses it too.
  'POST /api/rules conditions.0.value': { why: 'an in list of 1 to 100, checked with op', explains: (v, h) => Array.isArray(v) && refusesInList(h, v) },
  'PATCH /api/rules/{id} conditions.0.value': { why: 'an in list of 1 to 100, checked with op', explains: (v, h) => Array.isArray(v) && refusesInList(h, v) },
};
const docAjv = new Ajv2020({ strict: false, allErrors: true });
addFormats(docAjv);
docAjv.addSchema(doc, DOC_ID);
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The schema at a JSON pointer of the document, and the pointer, its `$ref`s followed. */
function resolve(ptr: string): { ptr: string; schema: Json } {
  let at = ptr;
  for (;;) {
    const schema = at
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<any>((s, k) => s?.[k], doc) as Json;
    if (typeof schema?.$ref !== 'string') return { ptr: at, schema };
    at = (schema.$ref as string).slice(1);
  }
}

/** JSON values at and past each bound the document states of a property, and values of other kinds. */
function jsonProbes(schema: Json): unknown[] {
  // 1e-130: the smallest magnitude DynamoDB stores (unstorable); 1e-131 and 5e-324 below it.
  const out: unknown[] = [
    null,
    true,
    false,
    0,
    1,
    -1,
    1.5,
    2 ** 53,
    1e20,
    1e-130,
    -1e-130,
    1e-131,
    -1e-131,
    5e-324,
    '',
    'x',
    ' ',
    'a\nb',
    'a\u0000b',
    '\u200b',
    'caf\u00e9',
    '.',
    '..',
    '\ud800',
    [],
    {},
    ['x'],
    [1],
    { a: 1 },
  ];
  const alternatives = [schema, ...(((schema.anyOf ?? schema.oneOf) as Json[] | undefined) ?? []).map((s) => (typeof s.$ref === 'string' ? resolve(s.$ref.slice(1)).schema : s))];
  for (const s of alternatives) {
    for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) {
      const n = s[k];
      if (typeof n === 'number') for (const d of [-1, -0.5, 0, 0.5, 1]) out.push(n + d);
    }
    for (const v of (s.enum as unknown[] | undefined) ?? []) out.push(v, typeof v === 'string' ? v.toUpperCase() : v);
    if (s.const !== undefined) out.push(s.const);
    if (typeof s.pattern === 'string') {
      const r = seededRandom(11);
      for (let i = 0; i < 10; i++) out.push(sampleRegex(new RegExp(s.pattern), r));
    }
    for (const k of ['minLength', 'maxLength']) {
      const n = s[k];
      if (typeof n === 'number') for (const d of [-1, 0, 1]) if (n + d >= 0) out.push('a'.repeat(n + d), 'A1'.repeat(n + d).slice(0, n + d));
    }
    for (const k of ['minItems', 'maxItems']) {
      const n = s[k];
      if (typeof n === 'number' && n < 1000) for (const d of [-1, 0, 1]) if (n + d >= 0) out.push(Array.from({ length: n + d }, (_, i) => `v${i}`));
    }
  }
  return out;
}

interface BodyProperty {
  key: string;
  /** The property's path as an error names it (`schedule.every`, `conditions.0.op`). */
  name: string;
  ptr: string;
  schema: Json;
  handler: z.ZodMiniType;
  /** The body holding `value` at the property (in a one-element list where the body or a field is a list). */
  wrap: (value: unknown) => unknown;
  /** An object among other objects of a union: an object missing a field may be read as another of them. */
  oneOfObjects?: boolean;
  /** An item of a list: the list's path ('' for a body that is a list). */
  list?: string;
}

/** Nesting followed into a body: its properties, theirs, and the items of lists (`conditions.0.op`). */
const MAX_DEPTH = 4;

/** The properties of the (object, list of objects, or alternatives of those) schema at `ptr`, and theirs. */
function propertiesAt(
  ptr: string,
  base: Omit<BodyProperty, 'name' | 'ptr' | 'schema' | 'wrap'>,
  prefix: string,
  wrap: (v: unknown) => unknown,
  depth: number,
  out: BodyProperty[],
  oneOfObjects = false,
): void {
  if (depth > MAX_DEPTH) return;
  const { ptr: at, schema } = resolve(ptr);
  for (const k of ['anyOf', 'oneOf'] as const) {
    const alternatives = (schema[k] as Json[] | undefined) ?? [];
    // Several objects to choose from (a segment's leaf, all or any): which one `{}` is, is the handler's guess.
    const objects = alternatives.filter((a) => resolve(`${at}/${k}/${alternatives.indexOf(a)}`).schema.type === 'object').length > 1;
    alternatives.forEach((_, i) => propertiesAt(`${at}/${k}/${i}`, base, prefix, wrap, depth, out, objects));
  }
  if (schema.type === 'object' && schema.properties) objectSites.push({ ...base, name: prefix, ptr: at, schema, wrap, oneOfObjects });
  if (schema.type === 'array' && schema.items) {
    const itemName = prefix ? `${prefix}.0` : '0';
    // The item itself (a facet key, a synonym), as a property: until the review of f8eddfc1 only an
    // item's own properties were probed, and POST /v1/search facets.0 = "" (400) went unnoticed.
    out.push({ ...base, name: itemName, ptr: `${at}/items`, schema: resolve(`${at}/items`).schema, wrap: (v) => wrap([v]), list: prefix });
    propertiesAt(`${at}/items`, base, itemName, (v) => wrap([v]), depth + 1, out);
  }
  for (const name of Object.keys((schema.properties as Json | undefined) ?? {})) {
    const propPtr = `${at}/properties/${pointer(name)}`;
    const path = prefix ? `${prefix}.${name}` : name;
    const propWrap = (v: unknown) => wrap({ [name]: v });
    out.push({ ...base, name: path, ptr: propPtr, schema: resolve(propPtr).schema, wrap: propWrap });
    propertiesAt(propPtr, base, path, propWrap, depth + 1, out);
  }
}

/** The object schemas of the bodies (found with their properties): `name` is the object's path, '' for the body. */
const objectSites: BodyProperty[] = [];

let bodyProps: BodyProperty[] | undefined;
function bodyProperties(): BodyProperty[] {
  if (bodyProps) return bodyProps;
  const out: BodyProperty[] = [];
  for (const r of routes) {
    if (r.method === 'OPTIONS') continue;
    const body = declaredOf(r)?.body;
    if (!body) continue;
    propertiesAt(`/paths/${pointer(r.path, r.method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema')}`, { key: routeKey(r), handler: body }, '', (v) => v, 0, out);
  }
  bodyProps = out;
  return out;
}

/** Whether the handler's body schema refuses `value` at the property: an error under the property, or inside it. */
function bodyRefuses(p: BodyProperty, value: unknown): boolean {
  let r: ReturnType<typeof p.handler.safeParse>;
  try {
    r = p.handler.safeParse(p.wrap(value));
  } catch {
    return false;
  }
  // An item's error may name its list (a union of one value or a list: `filters.category`).
  return !r.success && Object.keys(fieldErrorsOf(r.error)).some((k) => k === p.name || k.startsWith(`${p.name}.`) || (!!p.list && k === p.list));
}

describe("the document's JSON bodies against the handlers' schemas", () => {
  it('finds the properties of JSON bodies (objects, lists, alternatives, nested) on Core, Platform and console routes', () => {
    const keys = new Set(bodyProperties().map((p) => p.key));
    expect(keys.size).toBeGreaterThan(20);
    // Lists of objects and their fields, alternatives (one item or a list), nested objects.
    const found = new Set(bodyProperties().map((p) => `${p.key} ${p.name}`));
    expect([...found]).toEqual(
      expect.arrayContaining([
        'POST /v1/events 0.user_id',
        'POST /v1/items name',
        'POST /v1/items 0.metadata',
        'POST /api/rules conditions.0.op',
        'POST /api/events/templates schedule.every',
        'POST /v1/search filters',
        'POST /v1/search facets.0',
        'POST /api/synonyms synonyms.0',
      ]),
    );
  });

  it('each value of a property is refused by both the document and the handler, or by neither', () => {
    const mismatches: string[] = [];
    for (const p of bodyProperties()) {
      const validate = docAjv.getSchema(`${DOC_ID}#${p.ptr}`);
      if (!validate) throw new Error(`no schema at ${p.ptr}`);
      for (const value of jsonProbes(p.schema)) {
        const docRefuses = !validate(value);
        const refuses = bodyRefuses(p, value);
        const shown = JSON.stringify(value) ?? String(value);
        if (docRefuses !== refuses && !BODY_PAST_JSON_SCHEMA[`${p.key} ${p.name}`]?.explains(value, p.handler))
          mismatches.push(
            `${p.key} body ${p.name}=${shown.length > 60 ? `${shown.slice(0, 30)}…(${shown.length})` : shown}: document ${docRefuses ? 'refuses' : 'takes'}, handler ${refuses ? 'refuses' : 'takes'}`,
          );
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('a property the document calls required is one the handler refuses absent, and only such', () => {
    bodyProperties();
    const mismatches: string[] = [];
    const sites = objectSites.filter((x) => !x.oneOfObjects);
    expect(sites.length).toBeGreaterThan(20);
    for (const o of sites) {
      const required = new Set((o.schema.required as string[] | undefined) ?? []);
      let errors: Record<string, string[]> = {};
      try {
        const r = o.handler.safeParse(o.wrap({}));
        if (!r.success) errors = fieldErrorsOf(r.error);
      } catch {
        // A body that names nothing (a 404 past the schema): no field refused.
      }
      for (const name of Object.keys((o.schema.properties as Json | undefined) ?? {})) {
        const at = o.name ? `${o.name}.${name}` : name;
        const refuses = Object.hasOwn(errors, at);
        if (refuses !== required.has(name)) mismatches.push(`${o.key} body ${at}: document says ${required.has(name) ? 'required' : 'optional'}, handler ${refuses ? 'refuses' : 'takes'} it absent`);
      }
    }
    expect([...new Set(mismatches)]).toEqual([]);
  });

  it('an object the document closes (additionalProperties false) is one the handler refuses an unknown field of, and only such', () => {
    bodyProperties();
    expect(objectSites.length).toBeGreaterThan(20);
    const mismatches: string[] = [];
    const UNKNOWN = 'zz_not_a_field';
    for (const o of objectSites) {
      const validate = docAjv.getSchema(`${DOC_ID}#${o.ptr}`);
      if (!validate) throw new Error(`no schema at ${o.ptr}`);
      validate({ [UNKNOWN]: 1 });
      const docRefuses = (validate.errors ?? []).some((e) => e.keyword === 'additionalProperties' || (e.keyword === 'propertyNames' && e.instancePath === '') || e.instancePath === `/${UNKNOWN}`);
      const at = o.name ? `${o.name}.${UNKNOWN}` : UNKNOWN;
      let refuses = false;
      try {
        const r = o.handler.safeParse(o.wrap({ [UNKNOWN]: 1 }));
        refuses = !r.success && Object.hasOwn(fieldErrorsOf(r.error), at);
      } catch {
        refuses = false;
      }
      if (docRefuses !== refuses) mismatches.push(`${o.key} body ${o.name || '(body)'}: document ${docRefuses ? 'refuses' : 'takes'} an unknown field, handler ${refuses ? 'refuses' : 'takes'} it`);
    }
    expect([...new Set(mismatches)]).toEqual([]);
  });
});
