/**
 * Seeded fuzzing of every route of the route table (issue 18, "Must show"): valid requests built
 * from each handler's zod schemas (or a hand-written example where a schema cannot be sampled),
 * then mutated by type changes, huge and tiny numbers, unicode, deep nesting, `__proto__` and
 * `constructor` keys, missing and extra fields, wrong methods, broken JSON, headers, query
 * strings and path parameters. Each answer is checked: no 5xx, and every error in its API's
 * envelope. `verifyWrites` then reads back what the accepted writes stored.
 *
 * Used by test/integration/fuzz.test.ts (a few thousand cases) and bin/fuzz.ts (longer runs).
 */
import { Agent, type ClientRequest, request as httpRequest } from 'node:http';
import { seededRandom } from '../../shared/random.ts';
import { loadDeclared } from '../../shared/openapi/declared.ts';
import { routes, type HttpMethod, type Route } from '../../shared/routes.ts';
import { isConsoleFile, isPlatformPath } from '../../local/console-static.ts';

type Rand = () => number;
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

// ---------------------------------------------------------------------------------------------
// Strings matching a regular expression (the subset the schemas use: classes, groups,
// alternation, quantifiers, anchors, escapes).

type Node = { kind: 'chars'; set: string } | { kind: 'seq'; items: Node[] } | { kind: 'alt'; options: Node[] } | { kind: 'repeat'; node: Node; min: number; max: number };

const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
const WORD = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
const DIGITS = '0123456789';

function parseRegex(source: string): Node {
  let i = 0;
  const readEscape = (): string => {
    const c = source[i++] as string;
    if (c === 'd') return DIGITS;
    if (c === 'w') return WORD;
    if (c === 's') return ' ';
    return c;
  };
  const charClass = (): string => {
    let negate = false;
    if (source[i] === '^') {
      negate = true;
      i++;
    }
    let set = '';
    while (i < source.length && source[i] !== ']') {
      let c = source[i++] as string;
      if (c === '\\') c = readEscape();
      if (c.length === 1 && source[i] === '-' && source[i + 1] !== ']' && i + 1 < source.length) {
        i++;
        let to = source[i++] as string;
        if (to === '\\') to = readEscape();
        for (let k = c.charCodeAt(0); k <= to.charCodeAt(0); k++) set += String.fromCharCode(k);
      } else set += c;
    }
    i++;
    return negate ? [...PRINTABLE].filter((c) => !set.includes(c)).join('') : set;
  };
  const alternation = (): Node => {
    const options: Node[] = [sequence()];
    while (source[i] === '|') {
      i++;
      options.push(sequence());
    }
    return options.length === 1 ? (options[0] as Node) : { kind: 'alt', options };
  };
  const sequence = (): Node => {
    const items: Node[] = [];
    while (i < source.length && source[i] !== '|' && source[i] !== ')') {
      const c = source[i++] as string;
      let atom: Node;
      if (c === '^' || c === '$') continue;
      if (c === '(') {
        if (source.startsWith('?:', i)) i += 2;
        atom = alternation();
        i++;
      } else if (c === '[') atom = { kind: 'chars', set: charClass() };
      else if (c === '\\') atom = { kind: 'chars', set: readEscape() };
      else if (c === '.') atom = { kind: 'chars', set: PRINTABLE };
      else atom = { kind: 'chars', set: c };
      const q = source[i];
      if (q === '*' || q === '+' || q === '?') {
        i++;
        atom = { kind: 'repeat', node: atom, min: q === '+' ? 1 : 0, max: q === '?' ? 1 : (q === '+' ? 1 : 0) + 3 };
      } else if (q === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i));
        if (m) {
          i += m[0].length;
          const min = Number(m[1]);
          const max = m[2] === undefined ? min : m[3] ? Number(m[3]) : min + 3;
          atom = { kind: 'repeat', node: atom, min, max };
        }
      }
      if (source[i] === '?') i++;
      items.push(atom);
    }
    return { kind: 'seq', items };
  };
  return alternation();
}

const regexCache = new Map<string, Node>();
/** A string matching `re` (lengths of open repeats kept small, usually short). */
export function sampleRegex(re: RegExp, r: Rand): string {
  let node = regexCache.get(re.source);
  if (!node) regexCache.set(re.source, (node = parseRegex(re.source)));
  const gen = (n: Node): string => {
    switch (n.kind) {
      case 'chars':
        return n.set ? pick(r, [...n.set]) : '';
      case 'seq':
        return n.items.map(gen).join('');
      case 'alt':
        return gen(pick(r, n.options));
      case 'repeat': {
        // Mostly short, sometimes as long as allowed.
        const max = r() < 0.9 ? Math.min(n.max, n.min + 6) : n.max;
        return Array.from({ length: int(r, n.min, max) }, () => gen(n.node)).join('');
      }
    }
  };
  return gen(node);
}

// ---------------------------------------------------------------------------------------------
// Values of a zod (mini) schema, from its definition.

interface Def {
  type: string;
  [k: string]: unknown;
}
interface Schema {
  _zod: { def: Def };
  safeParse(v: unknown): { success: boolean };
}
const isSchema = (x: unknown): x is Schema => typeof x === 'object' && x !== null && '_zod' in x;
const defOf = (s: Schema): Def => s._zod.def;
interface CheckDef {
  check: string;
  [k: string]: unknown;
}
const checksOf = (s: Schema): CheckDef[] => ((defOf(s).checks as { _zod: { def: CheckDef } }[] | undefined) ?? []).map((c) => c._zod.def);

/** Thrown when a schema cannot be sampled (a transform of unknown input): a hand-written example stands in. */
class Unsampleable extends Error {}

const WORDS = ['shoe', 'trail', 'jacket', 'rain', 'wool', 'lamp', 'red', 'blue', 'classic', 'light', 'x', 'café', 'naïve', '東京', 'emoji 😀'];

/** Field names whose values name another record: mostly one that the run's setup created. */
const ID_HINT = /(^|_)id$|Id$/;

function sampleString(s: Schema, r: Rand, hint: string): string {
  const def = defOf(s);
  if (hint === 'jobName' && r() < 0.8) return pick(r, ['train-1', 'train-2']);
  if (hint === 'endpoint_name' && r() < 0.8) return pick(r, ['main', 'next']);
  let min = 0;
  let max = Infinity;
  let pattern: RegExp | undefined;
  for (const c of checksOf(s)) {
    if (c.check === 'min_length') min = Math.max(min, c.minimum as number);
    else if (c.check === 'max_length') max = Math.min(max, c.maximum as number);
    else if (c.check === 'length_equals') min = max = c.length as number;
    else if (c.check === 'string_format' && c.pattern instanceof RegExp) pattern = c.pattern;
  }
  if (def.format === 'uuid' || def.format === 'guid') {
    const h = () => Math.floor(r() * 16).toString(16);
    const part = (n: number) => Array.from({ length: n }, h).join('');
    return `${part(8)}-${part(4)}-4${part(3)}-${pick(r, ['8', '9', 'a', 'b'])}${part(3)}-${part(12)}`;
  }
  if (def.pattern instanceof RegExp) pattern = def.pattern;
  if (pattern && ID_HINT.test(hint) && r() < 0.8 && pattern.test('1')) return String(int(r, 1, 3));
  if (pattern) return sampleRegex(pattern, r);
  let out = '';
  const target = int(r, min, Math.max(min, Math.min(max, min + 24)));
  while (out.length < target) out += (out ? ' ' : '') + pick(r, WORDS);
  return out.slice(0, Math.max(target, min));
}

function sampleNumber(s: Schema, r: Rand, hint: string): number {
  const def = defOf(s);
  if (ID_HINT.test(hint) && r() < 0.8) return int(r, 1, 3);
  let lo = -1000;
  let hi = 1000;
  let integer = def.format === 'safeint' || def.format === 'int32' || def.format === 'uint32';
  for (const c of checksOf(s)) {
    if (c.check === 'greater_than') lo = Math.max(lo, (c.value as number) + (c.inclusive ? 0 : integer ? 1 : 1e-6));
    else if (c.check === 'less_than') hi = Math.min(hi, (c.value as number) - (c.inclusive ? 0 : integer ? 1 : 1e-6));
    else if (c.check === 'number_format') integer = true;
  }
  if (hi < lo) hi = lo;
  if (integer || r() < 0.6) return int(r, Math.ceil(lo), Math.max(Math.ceil(lo), Math.floor(Math.min(hi, lo + 60))));
  return Number((lo + r() * Math.min(hi - lo, 100)).toFixed(3));
}

function sampleJson(r: Rand, depth: number): Json {
  const k = depth > 2 ? int(r, 0, 3) : int(r, 0, 5);
  switch (k) {
    case 0:
      return pick(r, WORDS);
    case 1:
      return int(r, -1000, 1000);
    case 2:
      return r() < 0.5;
    case 3:
      return null;
    case 4:
      return Array.from({ length: int(r, 0, 3) }, () => sampleJson(r, depth + 1));
    default: {
      const o: Record<string, Json> = {};
      for (let n = int(r, 0, 3); n > 0; n--) o[pick(r, ['a', 'color', 'size', 'tags', 'score'])] = sampleJson(r, depth + 1);
      return o;
    }
  }
}

/** A value for schema `s` (not always valid: checks and refinements are not all followed). */
export function sample(s: Schema, r: Rand, depth = 0, hint = ''): unknown {
  const def = defOf(s);
  switch (def.type) {
    case 'string':
      return sampleString(s, r, hint);
    case 'number':
      return sampleNumber(s, r, hint);
    case 'boolean':
      return r() < 0.5;
    case 'null':
      return null;
    case 'undefined':
    case 'void':
      return undefined;
    case 'any':
    case 'unknown':
      return sampleJson(r, depth);
    case 'literal':
      return pick(r, def.values as unknown[]);
    case 'enum':
      return pick(r, Object.values(def.entries as Record<string, unknown>));
    case 'optional':
      // A cursor the server did not hand out is refused: mostly leave it out.
      if (/cursor|starting_after/.test(hint) && r() < 0.9) return undefined;
      return r() < 0.25 ? undefined : sample(def.innerType as Schema, r, depth, hint);
    case 'nullable':
      return r() < 0.15 ? null : sample(def.innerType as Schema, r, depth, hint);
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return sample(def.innerType as Schema, r, depth, hint);
    case 'lazy':
      if (depth > 3) return pick(r, WORDS);
      return sample((def.getter as () => Schema)(), r, depth + 1, hint);
    case 'union': {
      const options = def.options as Schema[];
      return sample(pick(r, options), r, depth, hint);
    }
    case 'array': {
      let min = 0;
      let max = 3;
      for (const c of checksOf(s)) {
        if (c.check === 'min_length') min = c.minimum as number;
        else if (c.check === 'max_length') max = Math.min(max, c.maximum as number);
        else if (c.check === 'length_equals') min = max = c.length as number;
      }
      return Array.from({ length: int(r, min, Math.max(min, max)) }, () => sample(def.element as Schema, r, depth + 1, hint));
    }
    case 'tuple':
      return (def.items as Schema[]).map((x) => sample(x, r, depth + 1));
    case 'record': {
      const o: Record<string, unknown> = {};
      for (let n = int(r, 0, 2); n > 0; n--) {
        const k = sample(def.keyType as Schema, r, depth + 1);
        if (typeof k === 'string' && k) o[k] = sample(def.valueType as Schema, r, depth + 1);
      }
      return o;
    }
    case 'object': {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(def.shape as Record<string, Schema>)) {
        const x = sample(v, r, depth + 1, k);
        if (x !== undefined) o[k] = x;
      }
      const catchall = def.catchall as Schema | undefined;
      if (catchall && defOf(catchall).type !== 'never' && r() < 0.3) o[`x_${int(r, 1, 9)}`] = sample(catchall, r, depth + 1);
      return o;
    }
    case 'pipe': {
      const inner = def.in as Schema;
      const out = def.out as Schema;
      const t = defOf(inner).type;
      if (t === 'unknown' || t === 'any' || (t === 'record' && defOf(defOf(inner).valueType as Schema).type === 'unknown')) {
        if (defOf(out).type === 'transform') throw new Unsampleable();
        return sample(out, r, depth, hint);
      }
      return sample(inner, r, depth, hint);
    }
    default:
      throw new Unsampleable();
  }
}

// ---------------------------------------------------------------------------------------------
// What each route takes: the schemas its handler was built with, as the OpenAPI document reads them.

export interface RouteSpec {
  route: Route;
  body?: Schema;
  query?: Schema;
  path?: Schema;
}

/** Whether a schema is an object schema without fields (a route that takes no query parameters). */
const isEmptyObject = (s: Schema): boolean => defOf(s).type === 'object' && Object.keys(defOf(s).shape as object).length === 0;

/**
 * Each route's schemas, from what its handler declares (shared/openapi/declared.ts): also those
 * of a module serving several routes (the synonym and search analytics routes) and of schemas a
 * handler module defines itself (a path's), which reading the handler's source missed.
 */
export async function routeSpecs(): Promise<RouteSpec[]> {
  const declaredOf = await loadDeclared();
  return routes.map((route) => {
    const d = declaredOf(route);
    const spec: RouteSpec = { route };
    if (d?.body && isSchema(d.body)) spec.body = d.body;
    if (d?.query && isSchema(d.query) && !isEmptyObject(d.query)) spec.query = d.query;
    if (d?.path && isSchema(d.path)) spec.path = d.path;
    return spec;
  });
}

/** Up to `max` characters of invented words (typo expansion's worst case), sometimes not Latin. */
function inventedText(r: Rand, max: number): string {
  const letters = r() < 0.8 ? 'abcdefghijklmnopqrstuvwxyz' : 'абвгдежзийклмнопрстуфхцчшщ日本語中文한국어';
  let out = '';
  while (out.length < max) out += `${Array.from({ length: int(r, 1, 14) }, () => pick(r, [...letters])).join('')} `;
  return out.slice(0, int(r, 1, max)).trim() || 'x';
}

/**
 * Valid examples for what the schemas cannot give (a transform over unknown input) or rarely
 * give (refinements across fields), by route key.
 */
const EXAMPLES: Record<string, (r: Rand) => { body?: unknown; query?: Record<string, string> }> = {
  'POST /v1/items': (r) => {
    const one = () => ({
      name: `${pick(r, WORDS)} ${pick(r, WORDS)}`,
      ...(r() < 0.7 ? { description: `${pick(r, WORDS)} ${pick(r, WORDS)} ${pick(r, WORDS)}` } : {}),
      ...(r() < 0.7
        ? { metadata: { category: pick(r, ['shoes', 'jackets', 'socks']), price: int(r, 1, 50_000), ...(r() < 0.5 ? { tags: ['a', pick(r, WORDS)], nested: { deep: { x: int(r, 0, 9) } } } : {}) } }
        : {}),
    });
    return { body: r() < 0.6 ? one() : Array.from({ length: int(r, 1, 4) }, one) };
  },
  'POST /v1/events': (r) => ({
    body: Array.from({ length: int(r, 1, 4) }, () => {
      const type = pick(r, ['click', 'view', 'purchase', 'add_to_cart']);
      return {
        type,
        user_id: `u-${int(r, 1, 20)}`,
        item_id: String(int(r, 1, 40)),
        [type]: type === 'purchase' ? { amount: int(r, 100, 9999), currency: 'EUR' } : {},
        ...(r() < 0.3 ? { occurred_at: 1_700_000_000 + int(r, 0, 1e6) } : {}),
      };
    }),
  }),
  'POST /v1/search': (r) => ({
    body: {
      query: r() < 0.2 ? inventedText(r, 1000) : `${pick(r, WORDS)} ${pick(r, ['sho', 'jak', 'trai', ''])}`,
      ...(r() < 0.3 ? { mode: pick(r, ['keyword', 'semantic', 'hybrid']) } : {}),
      ...(r() < 0.3 ? { limit: int(r, 1, 100) } : {}),
      ...(r() < 0.3 ? { user_id: `u-${int(r, 1, 20)}` } : {}),
    },
  }),
  'POST /api/segments': (r) => ({
    body: {
      name: `segment ${int(r, 1, 99)}`,
      definition:
        r() < 0.5
          ? { event_type: pick(r, ['click', 'view']), min_count: int(r, 1, 5), within_days: int(r, 1, 90) }
          : { any: [{ event_type: 'click', min_count: 1, within_days: 30 }, { all: [{ event_type: 'view', min_count: 2, within_days: 7 }] }] },
    },
  }),
  'PATCH /api/segments/{id}': (r) => ({ body: r() < 0.5 ? { name: `segment ${int(r, 1, 99)}` } : { definition: { event_type: 'purchase', min_count: 1, within_days: int(r, 1, 365) } } }),
  'POST /api/experiments': (r) => {
    const a = int(r, 1, 99);
    return {
      body: {
        name: `experiment ${int(r, 1, 99)}`,
        context_id: int(r, 1, 3),
        variants: [
          { name: 'control', endpoint_name: 'main', traffic_percent: a },
          { name: 'treatment', endpoint_name: 'next', traffic_percent: 100 - a },
        ],
      },
    };
  },
  'PUT /api/rerank-controls': (r) => ({ query: { contextId: String(int(r, 1, 3)) }, body: { diversity: int(r, 0, 10) / 10, max_per_category: int(r, 1, 10), exclude_seen: r() < 0.5 } }),
  'GET /api/rerank-controls': (r) => ({ query: { contextId: String(int(r, 1, 3)) } }),
  'POST /api/synonyms': (r) => {
    const words = ['sneaker', 'trainer', 'jumper', 'sweater', 'hoodie', 'tee shirt', 'raincoat', 'café au lait', '東京'];
    const a = pick(r, words);
    const b = pick(
      r,
      words.filter((w) => w !== a),
    );
    return { body: r() < 0.6 ? { synonyms: [a, b] } : { type: 'one_way', input: a, synonyms: [b] } };
  },
  'GET /api/analytics/searches': (r) => {
    // Days around now (the run's clock), as dates or Unix seconds, never reversed, at most 92 apart.
    const now = Math.floor(Date.now() / 1000);
    const from = now - int(r, 0, 60) * 86_400;
    const to = Math.min(now + int(r, 0, 30) * 86_400, from + 91 * 86_400);
    const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
    const form = (s: number) => (r() < 0.5 ? day(s) : String(s));
    return { query: r() < 0.3 ? {} : { from: form(from), to: form(to), ...(r() < 0.3 ? { limit: String(int(r, 1, 100)), click_type: 'click', conversion_type: 'purchase' } : {}) } };
  },
  'GET /api/audit': (r) => ({ query: { resource: `${pick(r, ['rules', 'segments', 'experiments', 'rerank-controls'])}/${int(r, 1, 3)}` } }),
  'POST /api/training-jobs': (r) => ({ body: { template_id: 1, ...(r() < 0.5 ? { options: { algorithm: pick(r, ['ease', 'item_knn', 'popularity']) } } : {}) } }),
  'GET /v1/recommendations': (r): { query: Record<string, string> } => ({ query: r() < 0.5 ? { user_id: `u-${int(r, 1, 10)}` } : { item_id: String(int(r, 1, 12)), limit: String(int(r, 1, 100)) } }),
  'POST /oauth2/token': (r) => ({
    body:
      r() < 0.5
        ? 'grant_type=client_credentials'
        : `grant_type=client_credentials&scope=${encodeURIComponent(pick(r, ['service-api/read', 'service-api/write', 'service-api/read service-api/write']))}`,
  }),
};

// ---------------------------------------------------------------------------------------------
// Cases: one request each.

export interface Credentials {
  clientId: string;
  clientSecret: string;
  token: string;
  apiKey: string;
}

export interface FuzzCase {
  n: number;
  route: Route;
  /** What was done to the valid request ('valid' for none). */
  mutation: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** The valid request's parsed body, for the read-back of what it wrote. */
  sent: unknown;
}

const HUGE_NUMBERS = [
  '1e308',
  '-1e308',
  '1e999',
  '-1e999',
  '5e-324',
  '1e-131',
  '9007199254740993',
  '-9007199254740993',
  '18446744073709551616',
  '-0',
  '0.1e-400',
  '123456789012345678901234567890',
  '1.7976931348623157e308',
];
const UNICODE = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '\u202e',
  '\u200b',
  '\ufeff',
  'Z\u0351\u0352\u0353\u0354',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '日本語テキスト',
  'Ω≈ç√∫',
  '\u00e9'.normalize('NFD'),
  'a\r\nb',
  '"\\',
  '%00',
  '../../etc/passwd',
  '${x}',
  '<script>',
  '\u{10FFFF}',
];
const NASTY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '', ' ', '\u0000', 'a.b', '$where'];
const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Where known ids are kept: by parameter name, and an `id` by the collection it is in (rules and API keys both have one). */
const knownKey = (collection: string, param: string): string => (param === 'id' ? `${collection.replace(/\/$/, '')}:id` : param);

/** Known ids of things created so far, by `knownKey` (updated as the run goes). */
export class Known {
  private readonly byParam = new Map<string, string[]>();
  add(param: string, id: string): void {
    let xs = this.byParam.get(param);
    if (!xs) this.byParam.set(param, (xs = []));
    if (xs.length < 200 && !xs.includes(id)) xs.push(id);
  }
  some(param: string, r: Rand): string | undefined {
    const xs = this.byParam.get(param);
    return xs?.length ? pick(r, xs) : undefined;
  }
}

/** Paths to every value inside `v`, the root included. */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

function setAt(root: unknown, at: (string | number)[], value: unknown): unknown {
  if (at.length === 0) return value;
  let o = root as Record<string | number, unknown>;
  for (const k of at.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = at[at.length - 1] as string | number;
  if (value === undefined) {
    if (Array.isArray(o)) o.splice(Number(last), 1);
    else delete o[last];
  } else o[last] = value;
  return root;
}

const valueAt = (root: unknown, at: (string | number)[]): unknown => at.reduce<unknown>((x, k) => (x as Record<string | number, unknown>)[k], root);
const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** JSON text with `inner` (JSON text) under `key` in a random object of `value` (or of a new one). */
function spliceText(value: unknown, r: Rand, key: string, inner: string): string {
  const copy = value === undefined ? {} : structuredClone(value);
  const containers = paths(copy).filter((p) => isObject(valueAt(copy, p)));
  if (!containers.length) return `{${JSON.stringify(key)}:${inner}}`;
  const marker = `__fuzz_marker_${Math.floor(r() * 1e9)}__`;
  (valueAt(copy, pick(r, containers)) as Record<string, unknown>)[marker] = 0;
  return JSON.stringify(copy).replace(`"${marker}":0`, () => `${JSON.stringify(key)}:${inner}`);
}

function otherType(v: unknown, r: Rand): unknown {
  const options: unknown[] = ['text', 0, -1, 1.5, true, false, null, [], {}, [1, 'a'], { a: 1 }, '', '1', 'true', 'null'];
  return pick(
    r,
    options.filter((o) => typeof o !== typeof v || Array.isArray(o) !== Array.isArray(v)),
  );
}

function nestedText(r: Rand): string {
  const levels = pick(r, [33, 40, 65, 100, 1000, 5000]);
  const [open, close] = r() < 0.5 ? ['[', ']'] : ['{"a":', '}'];
  return `${open.repeat(levels)}1${close.repeat(levels)}`;
}

export interface CaseOptions {
  creds: Credentials;
  known: Known;
}

/** Builds case `n` of the run with seed `seed` (the same case for the same seed, whatever ran before). */
export function makeCase(specs: RouteSpec[], seed: number, n: number, opts: CaseOptions): FuzzCase {
  const r = seededRandom((seed * 1_000_003 + n * 7919) >>> 0);
  for (let k = 0; k < 3; k++) r();
  const spec = pick(r, specs);
  const route = spec.route;
  const key = `${route.method} ${route.path}`;

  // The valid request.
  const example = EXAMPLES[key]?.(r);
  const validOf = (schema: Schema | undefined, fallback: unknown): unknown => {
    if (!schema) return fallback;
    for (let attempt = 0; attempt < 40; attempt++) {
      try {
        const v = sample(schema, r);
        if (schema.safeParse(v).success) return v;
      } catch (e) {
        if (!(e instanceof Unsampleable)) throw e;
        break;
      }
    }
    return (
      fallback ??
      (() => {
        try {
          return sample(schema, r);
        } catch {
          return {};
        }
      })()
    );
  };
  let body: unknown = example?.body !== undefined ? example.body : spec.body ? validOf(spec.body, undefined) : undefined;
  const query = (example?.query ?? (spec.query ? validOf(spec.query, {}) : {})) as Record<string, unknown>;
  const params = (spec.path ? validOf(spec.path, {}) : {}) as Record<string, unknown>;
  const pathValues: Record<string, string> = {};
  for (const m of route.path.matchAll(/\{(\w+)\}/g)) {
    const name = m[1] as string;
    const known = r() < 0.6 ? opts.known.some(knownKey(route.path.slice(0, m.index), name), r) : undefined;
    const v = known ?? (typeof params[name] === 'string' || typeof params[name] === 'number' ? String(params[name]) : String(int(r, 1, 30)));
    pathValues[name] = v;
  }

  const headers: Record<string, string> = {};
  if (route.api === 'core' && route.method !== 'OPTIONS') headers.authorization = `Bearer ${opts.creds.token}`;
  if (route.api === 'platform') headers.authorization = `Bearer ${opts.creds.apiKey}`;
  if (route.api === 'auth') headers.authorization = `Basic ${Buffer.from(`${opts.creds.clientId}:${opts.creds.clientSecret}`).toString('base64')}`;
  if (route.method === 'OPTIONS') {
    headers.origin = 'https://shop.example';
    headers['access-control-request-method'] = 'POST';
  }
  const isForm = route.api === 'auth';
  let method: string = route.method;
  let text: string | undefined = body === undefined ? undefined : isForm ? String(body) : JSON.stringify(body);
  let raw: Buffer | undefined;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.append(k, String(v));
  // A cursor this route handed out earlier, as it was or tampered with.
  const cursor = r() < 0.3 ? opts.known.some(`cursor ${route.method} ${route.path}`, r) : undefined;
  if (cursor) {
    const value = r() < 0.7 ? cursor : tamper(cursor, r);
    const field = cursorField(spec);
    if (field?.in === 'query') q.set(field.name, value);
    else if (field?.in === 'body' && isObject(body)) body = { ...body, [field.name]: value };
    text = body === undefined ? undefined : isForm ? String(body) : JSON.stringify(body);
  }
  const sent = body;

  const mutations = ['valid', 'valid', 'valid', 'type', 'number', 'unicode', 'deep', 'proto', 'missing', 'extra', 'method', 'json', 'headers', 'query', 'path', 'idempotency'];
  const mutation = pick(r, mutations);
  switch (mutation) {
    case 'type': {
      if (body === undefined || isForm) body = { a: 1 };
      const ps = paths(body);
      body = setAt(structuredClone(body), pick(r, ps), otherType(undefined, r));
      text = JSON.stringify(body);
      break;
    }
    case 'number': {
      const ps = paths(body ?? {}).filter((p) => p.length > 0);
      const n = pick(r, HUGE_NUMBERS);
      if (ps.length && !isForm) {
        const marker = `__n${Math.floor(r() * 1e9)}__`;
        text = JSON.stringify(setAt(structuredClone(body), pick(r, ps), marker)).replace(`"${marker}"`, () => n);
      } else text = isForm ? `${text ?? ''}&limit=${n}` : n;
      if (r() < 0.5) q.set(pick(r, ['limit', 'starting_after', 'created_after', 'user_id', 'cursor', 'id']), n);
      break;
    }
    case 'unicode': {
      const u = Array.from({ length: int(r, 1, 4) }, () => pick(r, UNICODE)).join('') + (r() < 0.1 ? 'x'.repeat(int(r, 1000, 120_000)) : '');
      const ps = paths(body ?? {}).filter((p) => p.length > 0);
      if (isForm) text = `${text ?? ''}&scope=${percent(u)}`;
      else if (ps.length) {
        const at = pick(r, ps);
        // Either as a value or as a key.
        if (r() < 0.7) text = JSON.stringify(setAt(structuredClone(body), at, u));
        else text = spliceText(body, r, u, '"v"');
      } else text = JSON.stringify(u);
      // Lone surrogates as JSON escapes, which JSON.stringify writes only for lone ones.
      if (r() < 0.3 && text) text = text.replace(/"$/, '\\ud800"');
      if (r() < 0.3) q.set(pick(r, ['query', 'user_id', 'category', 'cursor', 'item_id']), u.slice(0, 2000));
      break;
    }
    case 'deep':
      text = isForm ? `grant_type=${'['.repeat(5000)}` : spliceText(body ?? {}, r, pick(r, ['metadata', 'a', 'filters', 'query', 'extra', 'thresholds', 'conditions', 'definition']), nestedText(r));
      break;
    case 'proto': {
      const k = pick(r, NASTY_KEYS);
      const v = pick(r, ['null', '[1]', '{}', '{"prototype":{"polluted":true}}', '{"polluted":true}', '"x"', '1']);
      text = isForm ? `${text ?? ''}&${percent(k)}=1` : spliceText(body ?? {}, r, k, v);
      if (r() < 0.3) q.set(k, '1');
      break;
    }
    case 'missing': {
      const ps = paths(body ?? {}).filter((p) => p.length > 0);
      if (ps.length && !isForm) text = JSON.stringify(setAt(structuredClone(body), pick(r, ps), undefined));
      else text = undefined;
      if (r() < 0.5) q.delete([...q.keys()][0] ?? '');
      break;
    }
    case 'extra':
      if (isForm) text = `${text ?? ''}&extra=${int(r, 0, 9)}`;
      else text = spliceText(body ?? {}, r, pick(r, ['extra', 'id', 'item_id', 'object', 'created', 'tenant', 'status', 'score', 'type']), JSON.stringify(sampleJson(r, 1)));
      if (r() < 0.5) q.set(pick(r, ['extra', 'foo', 'tenant', 'limit', 'expand']), String(int(r, 0, 200)));
      break;
    case 'method':
      method = pick(r, [...METHODS.filter((m) => m !== route.method), 'HEAD', 'TRACE']);
      break;
    case 'json': {
      const t = text ?? '{"a":1}';
      const broken = [
        t.slice(0, Math.max(0, int(r, 0, t.length - 1))),
        `${t}}`,
        `${t},`,
        `{${t}`,
        `\ufeff${t}`,
        t.replace(/"/, "'"),
        '',
        'null',
        'true',
        '[]',
        '[null]',
        '""',
        '0',
        'NaN',
        '{"a":1,"a":2}',
        '{"a":undefined}',
        `${t}\u0000`,
        '{"a":1}{"b":2}',
      ];
      text = pick(r, broken);
      if (r() < 0.15) raw = Buffer.concat([Buffer.from(text.slice(0, 10)), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1]), Buffer.from(text.slice(10))]);
      if (r() < 0.3 && text === '') text = undefined;
      break;
    }
    case 'headers': {
      const which = int(r, 0, 9);
      if (which === 0) delete headers.authorization;
      else if (which === 1)
        headers.authorization = pick(r, [
          'Bearer',
          'Bearer ',
          'Bearer  x',
          'bearer x.y.z',
          'Basic Og==',
          'Basic',
          `Bearer ${'a'.repeat(7000)}`,
          'Digest x',
          `Bearer ${opts.creds.token}x`,
          `Bearer ${opts.creds.apiKey}`,
          `Bearer ${opts.creds.token}`,
          `Basic ${Buffer.from(`${'a'.repeat(200)}:x`).toString('base64')}`,
          `Basic ${Buffer.from(':').toString('base64')}`,
          'Basic !!!!',
          `Basic ${Buffer.from('%zz:%zz').toString('base64')}`,
        ]);
      else if (which === 2)
        headers['content-type'] = pick(r, [
          'text/plain',
          'application/xml',
          'multipart/form-data; boundary=x',
          'application/json; charset=latin1',
          'application/json; charset=utf-16',
          'application/x-www-form-urlencoded',
          '',
          'application/jsonx',
          'APPLICATION/JSON',
          '*/*',
        ]);
      else if (which === 3) headers['content-encoding'] = pick(r, ['gzip', 'br', 'identity', 'x']);
      else if (which === 4) headers.accept = pick(r, ['text/html', 'application/xml', '*/*', '']);
      else if (which === 5) headers['idempotency-key'] = pick(r, ['', 'a'.repeat(5000), 'é', 'k1', ' ', '\t']);
      else if (which === 6) headers['x-forwarded-for'] = pick(r, ['1.2.3.4', 'garbage', '::1, 10.0.0.1']);
      else if (which === 7) headers.origin = pick(r, ['null', 'https://evil.example', '']);
      else if (which === 8) headers['content-length'] = '0';
      else headers.host = pick(r, ['', 'evil.example', 'a'.repeat(300)]);
      break;
    }
    case 'query': {
      const keys = [...q.keys(), 'limit', 'starting_after', 'cursor', 'user_id', 'item_id', 'category', 'type', 'query', 'context_id', 'contextId', 'include_seen', 'explain'];
      const k = pick(r, keys);
      const v = pick(r, ['', '-1', '0', '101', '1e3', '0x10', '1.5', ' 1', '01', '999999999999999999999', 'abc', 'true', 'null', 'undefined', '%', '[]', '{}', 'ü', '\u0000', 'a'.repeat(3000)]);
      if (r() < 0.5) q.append(k, v);
      else q.set(k, v);
      if (r() < 0.3) q.append(k, v);
      break;
    }
    case 'path': {
      const names = Object.keys(pathValues);
      const bad = pick(r, [
        '0',
        '-1',
        '00',
        '01',
        '1.5',
        '1e3',
        '9007199254740992',
        '9007199254740993',
        '99999999999999999999999',
        'abc',
        '%00',
        '%2F',
        '..',
        '%E2%82%AC',
        '%FF',
        'a'.repeat(3000),
        ' ',
        '%20',
        '__proto__',
        'constructor',
        'train-1',
        'train-999999999999999999',
        'null',
      ]);
      if (names.length) pathValues[pick(r, names)] = bad;
      else {
        const p = `${route.path}/${bad}`;
        return finish(p);
      }
      break;
    }
    case 'idempotency':
      headers['idempotency-key'] = `fuzz-${int(r, 1, 6)}`;
      break;
  }
  return finish(route.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeSegment(pathValues[name] ?? '1')));

  function finish(path: string): FuzzCase {
    if (text !== undefined || raw !== undefined) {
      if (!('content-type' in headers)) headers['content-type'] = isForm ? 'application/x-www-form-urlencoded' : 'application/json';
    }
    const qs = q.toString();
    return {
      n,
      route,
      mutation,
      method,
      path: qs ? `${path}?${qs}` : path,
      headers,
      body: raw ?? (text === undefined ? undefined : Buffer.from(text, 'utf8')),
      sent: mutation === 'valid' || mutation === 'idempotency' ? sent : undefined,
    };
  }
}

/** Percent-encoded; a lone surrogate as the bytes of its UTF-8-like encoding (which no UTF-8 decoder accepts). */
const percent = (v: string): string => v.replace(/[\ud800-\udbff][\udc00-\udfff]|[\s\S]/g, (ch) => (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff' ? '%ED%A0%80' : encodeURIComponent(ch)));

/** Where a route takes its cursor (`starting_after` or `cursor`, in its query or body), if it does. */
function cursorField(spec: RouteSpec): { in: 'query' | 'body'; name: string } | undefined {
  for (const where of ['query', 'body'] as const) {
    const schema = spec[where];
    const shape = schema && defOf(schema).type === 'object' ? (defOf(schema).shape as Record<string, unknown>) : undefined;
    for (const name of ['starting_after', 'cursor']) if (shape && name in shape) return { in: where, name };
  }
  return undefined;
}

/** A cursor with one character changed, cut short, or grown. */
function tamper(cursor: string, r: Rand): string {
  const i = int(r, 0, cursor.length - 1);
  switch (int(r, 0, 3)) {
    case 0:
      return cursor.slice(0, i) + pick(r, ['A', 'z', '_', '-', '=', '/', '+', '.', '%']) + cursor.slice(i + 1);
    case 1:
      return cursor.slice(0, i);
    case 2:
      return `${cursor}${cursor}`;
    default:
      return Buffer.from(`{"v":1,"last":${pick(r, ['1e999', '-1', '"x"', 'null', '[]', '9007199254740993'])}}`).toString('base64url');
  }
}

/** A path segment as sent: already-escaped values (`%00`) stay as they are. */
const encodeSegment = (v: string): string => (/%[0-9A-Fa-f]{2}/.test(v) || v === '..' ? v : percent(v));

// ---------------------------------------------------------------------------------------------
// Running cases and checking answers.

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

export function send(base: string, c: FuzzCase, timeoutMs = 20_000): Promise<Answer> {
  const url = new URL(base);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    let req: ClientRequest;
    try {
      req = httpRequest(
        { host: url.hostname, port: url.port, method: c.method, path: c.path, headers: { ...c.headers, ...(c.body ? { 'content-length': String(c.body.length) } : {}) }, agent, timeout: timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
          res.on('error', reject);
        },
      );
    } catch (e) {
      // Node refuses to send it (an invalid header value or path): nothing reached the server.
      resolve({ status: -1, headers: {}, text: String(e), ms: 0 });
      return;
    }
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(c.body);
  });
}

const CORE_TYPES = new Set(['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'conflict_error', 'rate_limit_error', 'api_error']);
const TYPE_OF_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  429: 'rate_limit_error',
};
const OAUTH_ERRORS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'slow_down',
  'server_error',
  'temporarily_unavailable',
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Which API answers a request: the token endpoint for its route, else by the path's prefix (as
 * the local server routes it); the console's session routes are on the Platform base.
 */
export function apiOf(c: FuzzCase): 'core' | 'platform' | 'auth' {
  const path = pathOf(c);
  // The token endpoint answers every method in its own (RFC 6749) envelope.
  if (path === '/oauth2/token') return 'auth';
  return isPlatformPath(path) ? 'platform' : 'core';
}

/**
 * The path the server routes: the request target's path with its dot segments resolved, as the
 * WHATWG URL parser (and the local server) reads it (`/console/session/..` is `/console/`).
 */
const pathOf = (c: FuzzCase): string => new URL(c.path, 'http://local').pathname;

/** What is wrong with an answer (undefined: nothing). */
export function problemWith(c: FuzzCase, a: Answer): string | undefined {
  if (a.status === -1) return undefined;
  if (a.status >= 500) return `${a.status}`;
  if (c.method === 'HEAD') return undefined;
  if (a.status < 400) {
    if (a.status === 204 || a.text === '') return undefined;
    // The console's files (its page, scripts, styles) are what a GET of one answers.
    if (c.method === 'GET' && isConsoleFile(pathOf(c)) && !String(a.headers['content-type'] ?? '').startsWith('application/json')) return undefined;
    try {
      JSON.parse(a.text);
      return undefined;
    } catch {
      return `a ${a.status} whose body is not JSON`;
    }
  }
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return `a ${a.status} whose body is not JSON: ${a.text.slice(0, 200)}`;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return `a ${a.status} whose body is not an object`;
  const o = body as Record<string, unknown>;
  switch (apiOf(c)) {
    case 'platform':
      if (Object.keys(o).length !== 1 || typeof o.error !== 'string' || !o.error) return `a Platform ${a.status} not shaped {error: string}: ${a.text.slice(0, 300)}`;
      return undefined;
    case 'auth':
      if (
        typeof o.error !== 'string' ||
        !OAUTH_ERRORS.has(o.error) ||
        (o.error_description !== undefined && typeof o.error_description !== 'string') ||
        Object.keys(o).some((k) => k !== 'error' && k !== 'error_description')
      ) {
        return `a token endpoint ${a.status} not shaped {error, error_description} (RFC 6749): ${a.text.slice(0, 300)}`;
      }
      return undefined;
    case 'core': {
      const e = o.error as Record<string, unknown> | undefined;
      if (Object.keys(o).length !== 1 || !e || typeof e !== 'object') return `a Core ${a.status} without {error: {...}}: ${a.text.slice(0, 300)}`;
      if (typeof e.type !== 'string' || !CORE_TYPES.has(e.type)) return `a Core ${a.status} with error.type ${String(e.type)}`;
      const expected = TYPE_OF_STATUS[a.status];
      if (expected && e.type !== expected) return `a Core ${a.status} with error.type ${e.type} (the spec maps ${a.status} to ${expected})`;
      if (typeof e.code !== 'string' || !e.code) return `a Core ${a.status} without error.code`;
      if (typeof e.message !== 'string' || !e.message) return `a Core ${a.status} without error.message`;
      if (e.request_id !== undefined && (typeof e.request_id !== 'string' || !UUID.test(e.request_id))) return `a Core ${a.status} whose request_id is not a UUID`;
      const extra = Object.keys(e).filter((k) => !['type', 'code', 'message', 'details', 'request_id', 'param'].includes(k));
      if (extra.length) return `a Core ${a.status} with error fields ${extra.join(', ')}`;
      return undefined;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A run.

export interface Finding {
  c: FuzzCase;
  answer: Answer | undefined;
  problem: string;
}

export interface RunResult {
  cases: number;
  byStatus: Map<number, number>;
  byMutation: Map<string, Map<number, number>>;
  findings: Finding[];
  /** What the accepted writes stored, to read back. */
  writes: Writes;
  /** Setup requests that were refused (the cases then refer to fewer records). */
  setup: string[];
  ms: number;
}

interface SentItem {
  name: string;
  description?: string;
  metadata?: unknown;
}
export interface Writes {
  items: Map<string, SentItem>;
  touchedItems: Set<string>;
  deletedItems: Set<string>;
  events: Map<string, { user_id: string; type: string }>;
  /** Resources created by other routes: the path to read each back from, and the case that made it. */
  created: Map<string, string>;
  /** Resources created where no route reads one alone: by list path, their ids. */
  listed: Map<string, Set<string>>;
  /** Paths of resources deleted (`/api/rules/3`). */
  deleted: Set<string>;
}

const record = (m: Map<number, number>, status: number) => m.set(status, (m.get(status) ?? 0) + 1);

/** What a 2xx answer tells about the ids that exist now, and what the writes stored. */
function learn(c: FuzzCase, a: Answer, known: Known, writes: Writes, getPaths: Map<string, string>): void {
  if (a.status < 200 || a.status >= 300) return;
  const path = c.path.split('?')[0] as string;
  if (c.method === 'DELETE') {
    // Answered 204 without a body, or 200 with one.
    const item = /^\/v1\/items\/([^/]+)$/.exec(path);
    if (item) {
      writes.touchedItems.add(decodeURIComponent(item[1] as string));
      writes.deletedItems.add(decodeURIComponent(item[1] as string));
    }
    writes.deleted.add(path);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return;
  }
  const o = body as Record<string, unknown>;
  if (typeof o?.next_cursor === 'string' && c.method === c.route.method) known.add(`cursor ${c.route.method} ${c.route.path}`, o.next_cursor);
  const list = Array.isArray(o?.data) ? (o.data as Record<string, unknown>[]) : [o];
  const idOf = (x: Record<string, unknown>): string | undefined => {
    const id = x.client_id ?? x.job_name ?? x.id ?? x.version;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  };
  if (c.method === 'POST' && path === '/v1/items' && a.status === 201) {
    const sent = Array.isArray(c.sent) ? (c.sent as SentItem[]) : c.sent ? [c.sent as SentItem] : [];
    list.forEach((x, i) => {
      const id = idOf(x);
      if (!id) return;
      known.add('item_id', id);
      if (sent[i]) writes.items.set(id, sent[i] as SentItem);
    });
    return;
  }
  if (c.method === 'POST' && path === '/v1/events' && a.status === 201) {
    const sent = Array.isArray(c.sent) ? (c.sent as { user_id: string; type: string }[]) : [];
    list.forEach((x, i) => {
      const id = idOf(x);
      if (!id) return;
      known.add('event_id', id);
      if (sent[i]) writes.events.set(id, { user_id: sent[i].user_id, type: sent[i].type });
    });
    return;
  }
  const itemPath = /^\/v1\/items\/([^/]+)$/.exec(path);
  if (itemPath && c.method !== 'GET') {
    writes.touchedItems.add(decodeURIComponent(itemPath[1] as string));
    return;
  }
  if (c.method === 'POST' && c.route.method === 'POST' && (a.status === 201 || a.status === 202) && path === c.route.path) {
    for (const x of list) {
      const id = idOf(x);
      if (!id) continue;
      const member = getPaths.get(c.route.path);
      if (member) {
        known.add(knownKey(c.route.path, member.replace(/^.*\{(\w+)\}$/, '$1')), id);
        writes.created.set(
          member.replace(/\{\w+\}$/, () => encodeURIComponent(id)),
          `${c.route.method} ${c.route.path} (case ${c.n})`,
        );
      } else if (routes.some((rt) => rt.method === 'GET' && rt.path === c.route.path)) {
        let ids = writes.listed.get(c.route.path);
        if (!ids) writes.listed.set(c.route.path, (ids = new Set()));
        ids.add(id);
      }
      // Collections read one by one through no route, but deleted through one.
      for (const rt of routes) {
        const m = new RegExp(`^${c.route.path}/\\{(\\w+)\\}$`).exec(rt.path);
        if (m && rt.method !== 'GET') known.add(knownKey(c.route.path, m[1] as string), id);
      }
    }
  }
}

/** For each collection path, the route that reads one of its members (`/api/rules` → `/api/rules/{id}`). */
function memberReads(): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of routes) {
    if (r.method !== 'GET') continue;
    const m = /^(.*)\/\{\w+\}$/.exec(r.path);
    if (m && routes.some((x) => x.method === 'POST' && x.path === m[1])) out.set(m[1] as string, r.path);
  }
  return out;
}

/** The records the cases refer to (ids 1 to 3 of each kind, users u-1 to u-10, items 1 to 12): setup problems, if any. */
export async function setUp(base: string, creds: Credentials): Promise<string[]> {
  const problems: string[] = [];
  const call = async (method: string, path: string, body: unknown, api: 'core' | 'platform' = 'platform') => {
    const c: FuzzCase = {
      n: -1,
      route: routes[0] as Route,
      mutation: 'setup',
      method,
      path,
      headers: { authorization: `Bearer ${api === 'core' ? creds.token : creds.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
      sent: undefined,
    };
    const a = await send(base, c);
    if (a.status >= 300) problems.push(`${method} ${path}: ${a.status} ${a.text.slice(0, 200)}`);
  };
  const words = ['trail', 'running', 'shoe', 'rain', 'jacket', 'wool', 'socks', 'lamp', 'desk', 'chair', 'kettle', 'mug'];
  await call(
    'POST',
    '/v1/items',
    words.map((w, i) => ({
      name: `${w} ${words[(i + 3) % words.length]}`,
      description: `a ${w} for every day`,
      metadata: { category: ['shoes', 'jackets', 'home'][i % 3], brand: ['acme', 'globex'][i % 2], price: 1000 + 100 * i },
    })),
    'core',
  );
  for (const [name, weight] of [
    ['click', 1],
    ['view', 1],
    ['purchase', 10],
  ] as const)
    await call('POST', '/api/event-types', { name, weight });
  const types = ['click', 'view', 'purchase'];
  await call(
    'POST',
    '/v1/events',
    Array.from({ length: 40 }, (_, k) => ({ type: types[k % 3], user_id: `u-${(k % 10) + 1}`, item_id: String((k % 12) + 1), [types[k % 3] as string]: {} })),
    'core',
  );
  for (const n of [1, 2, 3]) await call('POST', '/api/contexts', { name: `context ${n}` });
  await call('POST', '/api/events/templates', { name: 'default', event_types: [{ id: 1 }, { id: 2 }, { id: 3 }], thresholds: { per_signal_min: 1, total_min: 2 } });
  await call('PATCH', '/api/events/templates/1', { status: 'Published' });
  await call('POST', '/api/model-endpoints', { endpoint_name: 'main', is_default: true });
  await call('POST', '/api/model-endpoints', { endpoint_name: 'next' });
  for (const n of [1, 2, 3]) await call('POST', '/api/segments', { name: `segment ${n}`, definition: { event_type: types[n - 1], min_count: 1, within_days: 30 } });
  for (const n of [1, 2, 3]) await call('POST', '/api/rules', { name: `rule ${n}`, context_id: n, conditions: [{ field: 'category', op: 'eq', value: 'shoes' }], boost: 2 });
  await call('POST', '/api/experiments', {
    name: 'experiment 1',
    context_id: 1,
    variants: [
      { name: 'a', endpoint_name: 'main', traffic_percent: 50 },
      { name: 'b', endpoint_name: 'next', traffic_percent: 50 },
    ],
  });
  await call('POST', '/api/training-jobs', { template_id: 1 });
  return problems;
}

export async function run(opts: {
  base: string;
  creds: Credentials;
  seed: number;
  cases: number;
  concurrency?: number;
  onCase?: (c: FuzzCase, a: Answer | undefined, problem: string | undefined) => void;
}): Promise<RunResult> {
  const specs = await routeSpecs();
  const setup = await setUp(opts.base, opts.creds);
  const known = new Known();
  const writes: Writes = { items: new Map(), touchedItems: new Set(), deletedItems: new Set(), events: new Map(), created: new Map(), listed: new Map(), deleted: new Set() };
  const getPaths = memberReads();
  const byStatus = new Map<number, number>();
  const byMutation = new Map<string, Map<number, number>>();
  const findings: Finding[] = [];
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    for (;;) {
      const n = next++;
      if (n >= opts.cases) return;
      let c: FuzzCase;
      try {
        c = makeCase(specs, opts.seed, n, { creds: opts.creds, known });
      } catch (e) {
        // A bug of the generator, not of the service: reported all the same.
        findings.push({
          c: { n, route: routes[0] as Route, mutation: 'generator', method: '-', path: '-', headers: {}, body: undefined, sent: undefined },
          answer: undefined,
          problem: `the generator failed: ${(e as Error).stack ?? String(e)}`,
        });
        continue;
      }
      let answer: Answer | undefined;
      let problem: string | undefined;
      try {
        answer = await send(opts.base, c);
        problem = problemWith(c, answer);
        learn(c, answer, known, writes, getPaths);
      } catch (e) {
        problem = `no answer: ${String(e)}`;
      }
      const status = answer?.status ?? 0;
      record(byStatus, status);
      let m = byMutation.get(c.mutation);
      if (!m) byMutation.set(c.mutation, (m = new Map()));
      record(m, status);
      if (problem) findings.push({ c, answer, problem });
      opts.onCase?.(c, answer, problem);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
  return { cases: opts.cases, byStatus, byMutation, findings, writes, setup, ms: performance.now() - t0 };
}

/** JSON with object keys sorted (DynamoDB keeps no key order), -0 as 0. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

/**
 * Reads back what the accepted writes stored: every created item not deleted since (with what was
 * sent, when nothing changed it since), every event, every other created resource not deleted,
 * every page of the item and event lists, and every list route. The problems found.
 */
export async function verifyWrites(base: string, creds: Credentials, writes: Writes): Promise<string[]> {
  const problems: string[] = [];
  const get = async (path: string, api: 'core' | 'platform') => {
    const c: FuzzCase = {
      n: -1,
      route: routes[0] as Route,
      mutation: 'verify',
      method: 'GET',
      path,
      headers: { authorization: `Bearer ${api === 'core' ? creds.token : creds.apiKey}` },
      body: undefined,
      sent: undefined,
    };
    const a = await send(base, c);
    let body: unknown;
    try {
      body = JSON.parse(a.text);
    } catch {
      body = undefined;
    }
    return { status: a.status, body: body as Record<string, unknown> | undefined, text: a.text };
  };
  for (const [id, sent] of writes.items) {
    if (writes.deletedItems.has(id)) continue;
    const a = await get(`/v1/items/${id}`, 'core');
    if (a.status !== 200) {
      problems.push(`GET /v1/items/${id}: ${a.status} ${a.text.slice(0, 300)}`);
      continue;
    }
    if (writes.touchedItems.has(id)) continue;
    const got = a.body as Record<string, unknown>;
    if (got.name !== sent.name) problems.push(`item ${id}: name ${JSON.stringify(got.name)}, sent ${JSON.stringify(sent.name)}`);
    if (sent.description !== undefined && got.description !== sent.description) problems.push(`item ${id}: description ${JSON.stringify(got.description)}, sent ${JSON.stringify(sent.description)}`);
    if (sent.metadata !== undefined && canonical(got.metadata) !== canonical(sent.metadata)) problems.push(`item ${id}: metadata ${canonical(got.metadata)}, sent ${canonical(sent.metadata)}`);
  }
  for (const [id, sent] of writes.events) {
    const a = await get(`/v1/events/${id}`, 'core');
    if (a.status !== 200) problems.push(`GET /v1/events/${id}: ${a.status} ${a.text.slice(0, 300)}`);
    else if (a.body?.user_id !== sent.user_id) problems.push(`event ${id}: user_id ${JSON.stringify(a.body?.user_id)}, sent ${JSON.stringify(sent.user_id)}`);
  }
  for (const [path, by] of writes.created) {
    if (writes.deleted.has(path)) continue;
    const a = await get(path, 'platform');
    // A created resource another case removed by other means (a stopped job, say) still reads.
    if (a.status !== 200) problems.push(`GET ${path} (created by ${by}): ${a.status} ${a.text.slice(0, 300)}`);
  }
  const specs = await routeSpecs();
  for (const [list, ids] of writes.listed) {
    const seen = new Set<string>();
    // The list's own cursor parameter (`starting_after` or `cursor`).
    const listSpec = specs.find((x) => x.route.method === 'GET' && x.route.path === list);
    const field = (listSpec && cursorField(listSpec)?.name) ?? 'cursor';
    let cursor: string | null = null;
    let pages = 0;
    do {
      const a = await get(`${list}${cursor ? `?${field}=${encodeURIComponent(cursor)}` : ''}`, 'platform');
      if (a.status !== 200) {
        problems.push(`GET ${list} page ${pages + 1}: ${a.status} ${a.text.slice(0, 300)}`);
        break;
      }
      for (const x of (a.body?.data as Record<string, unknown>[] | undefined) ?? []) {
        const id = x.client_id ?? x.id;
        if (typeof id === 'string' || typeof id === 'number') seen.add(String(id));
      }
      cursor = (a.body?.has_more ? (a.body.next_cursor as string | null) : null) ?? null;
      pages++;
    } while (cursor && pages < 100);
    for (const id of ids) if (!writes.deleted.has(`${list}/${id}`) && !seen.has(id)) problems.push(`${list}: created ${id}, not listed`);
  }
  // Every page of the Core lists.
  for (const list of ['/v1/items', '/v1/events']) {
    let cursor: string | null = null;
    let pages = 0;
    do {
      const a = await get(`${list}?limit=100${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}`, 'core');
      if (a.status !== 200) {
        problems.push(`GET ${list} page ${pages + 1}: ${a.status} ${a.text.slice(0, 300)}`);
        break;
      }
      cursor = (a.body?.has_more ? (a.body.next_cursor as string | null) : null) ?? null;
      pages++;
    } while (cursor && pages < 1000);
  }
  // Every list route of both APIs, as a client would first call it.
  for (const r of routes) {
    if (r.method !== 'GET' || r.path.includes('{') || r.api === 'auth') continue;
    const a = await get(r.path, r.api === 'core' ? 'core' : 'platform');
    if (a.status >= 500) problems.push(`GET ${r.path}: ${a.status} ${a.text.slice(0, 300)}`);
  }
  for (const query of ['shoe', 'jaket', '', 'café 東京']) {
    const c: FuzzCase = {
      n: -1,
      route: routes[0] as Route,
      mutation: 'verify',
      method: 'POST',
      path: '/v1/search',
      headers: { authorization: `Bearer ${creds.token}`, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ query })),
      sent: undefined,
    };
    const a = await send(base, c);
    if (a.status !== 200) problems.push(`POST /v1/search ${JSON.stringify(query)}: ${a.status} ${a.text.slice(0, 300)}`);
  }
  return problems;
}

/** One line per finding, enough to replay it. */
export function describe(f: Finding): string {
  const { c, answer } = f;
  const headers = Object.fromEntries(
    Object.entries(c.headers).map(([k, v]) => [k, k === 'authorization' ? `${v.slice(0, 12)}…(${v.length})` : v.length > 120 ? `${v.slice(0, 120)}…(${v.length})` : v]),
  );
  const body = c.body ? c.body.toString('utf8') : '';
  return [
    `case ${c.n} [${c.mutation}] ${c.method} ${c.path.length > 300 ? `${c.path.slice(0, 300)}…` : c.path} (route ${c.route.method} ${c.route.path}): ${f.problem}`,
    `  headers ${JSON.stringify(headers)}`,
    `  body ${body.length > 600 ? `${JSON.stringify(body.slice(0, 600))}…(${body.length} bytes)` : JSON.stringify(body)}`,
    `  answer ${answer ? `${answer.status} ${answer.text.slice(0, 600)}` : '(none)'}`,
  ].join('\n');
}
