/**
 * The contract check: an answer the API gave, checked against the committed OpenAPI document
 * (docs/openapi.json): its status must be one the operation documents, and its body must match
 * that response's schema (ajv, JSON Schema 2020-12, formats checked).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { compile, matchPath } from '../../shared/http/route-match.ts';
import { routeKey, routes, type Route } from '../../shared/routes.ts';

export interface Exchange {
  method: string;
  /** The request path, with its query string if any. */
  path: string;
  status: number;
  /** The parsed JSON body (or the text, when it is not JSON; undefined when empty). */
  body: unknown;
}

type Json = Record<string, any>;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOC_ID = 'https://recsearch.local/openapi.json';
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

let state: { doc: Json; ajv: Ajv2020; compiled: ReturnType<typeof compile>[] } | undefined;
const validators = new Map<string, ValidateFunction>();

function load() {
  if (!state) {
    const doc = JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8')) as Json;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, DOC_ID);
    state = { doc, ajv, compiled: routes.map(compile) };
  }
  return state;
}

/** The validator of the schema at a JSON pointer of the document. */
function validatorAt(ptr: string): ValidateFunction {
  let v = validators.get(ptr);
  if (!v) {
    const got = load().ajv.getSchema(`${DOC_ID}#${ptr}`);
    if (!got) throw new Error(`no schema at ${ptr}`);
    validators.set(ptr, (v = got));
  }
  return v;
}

/** The route the local server would give the request (the first whose method and path match), if any. */
export function routeOf(method: string, path: string): Route | undefined {
  return load().compiled.find((c) => c.route.method === method && matchPath(c, path) !== undefined)?.route;
}

/**
 * Paths that are not the API's: the local stand-in for Cognito's JWKS, and the console web app's
 * files (any `/console` path no route takes; the console's session and read routes are the API's).
 */
const outside = (path: string, route: Route | undefined) => path.startsWith('/.well-known/') || (!route && (path === '/console' || path.startsWith('/console/')));

const describeErrors = (v: ValidateFunction) =>
  (v.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');

/**
 * What is wrong with an answer (undefined: nothing), and the route key it was checked as
 * (undefined for requests outside the document).
 */
export function checkExchange(x: Exchange): { key: string | undefined; problem: string | undefined } {
  const { doc } = load();
  const path = x.path.split('?')[0] as string;
  if (x.method === 'HEAD') return { key: undefined, problem: undefined };
  const route = routeOf(x.method, path);
  if (outside(path, route)) return { key: undefined, problem: undefined };
  if (!route) {
    // No route: the API's `$default` answers 404 (unknown path) or 405 (known path, other method) in its envelope.
    const key = `${x.method} ${path} (no route)`;
    if (x.status !== 404 && x.status !== 405) return { key, problem: `answered ${x.status}; a request no route takes answers 404 or 405` };
    // The token endpoint answers in its own (RFC 6749) envelope.
    const envelope = path === '/api' || path.startsWith('/api/') ? 'PlatformError' : routes.some((r) => r.api === 'auth' && r.path === path) ? 'OAuthError' : 'CoreError';
    const v = validatorAt(`/components/schemas/${envelope}`);
    return { key, problem: v(x.body) ? undefined : `${x.status} body does not match ${envelope}: ${describeErrors(v)}` };
  }
  const key = routeKey(route);
  const opPtr = `/paths/${pointer(route.path, route.method.toLowerCase())}`;
  const responses = (doc.paths[route.path]?.[route.method.toLowerCase()]?.responses ?? {}) as Json;
  let response = responses[String(x.status)] as Json | undefined;
  if (!response)
    return { key, problem: `answered ${x.status}, which the operation does not document (it documents ${Object.keys(responses).join(', ')}); body ${JSON.stringify(x.body)?.slice(0, 300)}` };
  let responsePtr = `${opPtr}/responses/${x.status}`;
  if (typeof response.$ref === 'string') {
    responsePtr = response.$ref.slice(1);
    response = doc.components.responses[response.$ref.split('/').pop() as string] as Json;
  }
  const content = response.content as Json | undefined;
  if (!content) return { key, problem: x.body === undefined || x.body === '' ? undefined : `${x.status} documents no body, but one came: ${JSON.stringify(x.body).slice(0, 300)}` };
  if (!content['application/json']) return { key, problem: `${x.status} documents no JSON body` };
  const v = validatorAt(`${responsePtr}/content/${pointer('application/json')}/schema`);
  return { key, problem: v(x.body) ? undefined : `${x.status} body does not match the documented schema: ${describeErrors(v)}; body ${JSON.stringify(x.body)?.slice(0, 400)}` };
}
