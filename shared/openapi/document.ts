import type { DeclaredRequest } from '../http/handler.ts';
import { routeKey, routes, type Route } from '../routes.ts';
import { isSafeMethod } from '../console-auth/session.ts';
import { CSRF_HEADER_NAME, errorResponseName, errorResponses, GATEWAY_429, headerRef, HEADERS, INFO, SECURITY_SCHEMES, SERVERS, type Envelope } from './components.ts';
import { SchemaConverter, type JsonSchema } from './json-schema.ts';
import type { OperationDoc } from './operation.ts';
import { consoleOperations } from './operations-console.ts';
import { coreOperations } from './operations-core.ts';
import { platformOperations } from './operations-platform.ts';

/*
 * The OpenAPI 3.1 document, built from the route table (paths, methods, scopes, which API), the
 * schemas each handler validates its requests with (what `coreHandler` / `platformHandler`
 * declare), and the answers and words of shared/openapi/operations-*.ts.
 */

/** The schemas each route's handler declares (see declared.ts); undefined for routes built otherwise. */
export type DeclaredOf = (route: Route) => DeclaredRequest | undefined;

/** What the document describes of each route, by route key (preflights are described from the table alone). */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = { ...coreOperations, ...platformOperations, ...consoleOperations };

/**
 * The console's own routes (`/console/...`, on the Platform base): authorised by the console
 * session cookie alone, never by an API key (shared/console-auth/).
 */
export const isConsoleRoute = (r: Route): boolean => r.api === 'platform' && r.path.startsWith('/console/');
/** Signing in: the one console route that needs no session. */
const isSignIn = (r: Route): boolean => isConsoleRoute(r) && r.method === 'POST' && r.path === '/console/session';
/** Reading the session: checks no CSRF token (it is how a tab learns the session's). */
const isSessionRead = (r: Route): boolean => isConsoleRoute(r) && r.method === 'GET' && r.path === '/console/session';
/** Signing out: ends a live session (with its CSRF token), else only clears the cookie; never 401. */
const isSignOut = (r: Route): boolean => isConsoleRoute(r) && r.method === 'DELETE' && r.path === '/console/session';

const envelopeOf = (r: Route): Envelope => (r.api === 'platform' ? 'platform' : r.api === 'auth' ? 'oauth' : 'core');
const isPreflight = (r: Route): boolean => r.api === 'core' && r.method === 'OPTIONS';
const pascal = (path: string): string =>
  path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join('');
const templateParams = (path: string): string[] => [...path.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1] as string);

/**
 * The error statuses an operation can answer: its API's, 404 where a path names a record, 413
 * wherever its handler reads the body (also a route that takes none: a body over the limit is
 * refused before it is parsed), 409 where it honours Idempotency-Key, 429 everywhere (API
 * Gateway's throttle, where the route has none of its own), and its own.
 */
function errorStatuses(r: Route, declared: DeclaredRequest | undefined, doc: OperationDoc): number[] {
  const base = r.api === 'auth' ? [400, 401, 500] : r.api === 'public' ? [500] : r.api === 'core' ? [400, 401, 403, 500, 503] : isConsoleRoute(r) ? consoleBase(r) : [400, 401, 403, 500, 503];
  const out = new Set([...base, 429, ...(doc.errors ?? [])]);
  if (r.api !== 'public' && r.path.includes('{')) out.add(404);
  if (declared) out.add(413);
  if (declared?.idempotent) out.add(409);
  return [...out].sort((a, b) => a - b);
}

/** The response component of an error status: API Gateway's 429 where the service answers none of its own. */
function errorResponseOf(r: Route, envelope: Envelope, status: number, doc: OperationDoc): string {
  const own429 = r.api === 'core' || r.api === 'auth' || (doc.errors ?? []).includes(429);
  return status === 429 && !own429 ? GATEWAY_429 : errorResponseName(envelope, status);
}

/**
 * A console route's own errors: 401 is the operation's to list (signing out never answers it);
 * 403 where the session's CSRF token is checked: needed on every method but GET, and on a GET
 * that sends one (bar signing in and the session read, which check none).
 */
const consoleBase = (r: Route): number[] => [400, 500, 503, ...(!isSignIn(r) && !isSessionRead(r) ? [403] : [])];

/** The properties of an object schema as parameters. */
function parameters(where: 'path' | 'query', schema: JsonSchema): JsonSchema[] {
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (schema.type !== 'object' || (schema.properties !== undefined && typeof props !== 'object'))
    throw new Error(`${where} parameters must be an object schema: ${JSON.stringify(schema).slice(0, 200)}`);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(props ?? {}).map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: s }));
}

function pathParameters(r: Route, declared: DeclaredRequest | undefined, converter: SchemaConverter): JsonSchema[] {
  const fromSchema = declared?.path ? parameters('path', converter.convert(declared.path, 'input')) : [];
  const names = templateParams(r.path);
  const declaredNames = fromSchema.map((p) => p.name);
  if (declared?.path && (declaredNames.length !== names.length || names.some((n) => !declaredNames.includes(n)))) {
    throw new Error(`${routeKey(r)}: the handler's path schema names ${declaredNames.join(', ')}, the path ${names.join(', ')}`);
  }
  return declared?.path ? fromSchema : names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
}

const IDEMPOTENCY_KEY: JsonSchema = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the request safe to retry: a repeat with the same key and body within 24 h answers the first response (`Idempotent-Replayed: true`) and writes nothing; the same key with another body is 409. Visible ASCII without a comma, sent once: a header sent twice arrives as its values joined by a comma, 400.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x2B\\x2D-\\x7E]+$' },
};

/**
 * The session's CSRF token, on the requests of a console session that change something (or are
 * POSTs): required on the console's own routes; on the Platform API's, only when a session
 * cookie stands for the caller instead of an API key.
 */
function csrfParameter(r: Route): JsonSchema[] {
  if (r.api !== 'platform' || isSignIn(r) || isSafeMethod(r.method)) return [];
  if (!isConsoleRoute(r)) {
    return [{ name: CSRF_HEADER_NAME, in: 'header', required: false, description: "With a console session instead of an API key: the session's `csrf_token` (else 403).", schema: { type: 'string' } }];
  }
  return [
    {
      name: CSRF_HEADER_NAME,
      in: 'header',
      required: !isSignOut(r),
      description: isSignOut(r) ? "The session's `csrf_token`: needed when the cookie names a live session (else 403)." : "The session's `csrf_token` (else 403).",
      schema: { type: 'string' },
    },
  ];
}

/**
 * Platform routes: an API key or a console session (the middleware takes the cookie when no
 * Authorization header is sent); the console's own routes: the session alone (signing in: none).
 */
function security(r: Route): JsonSchema[] {
  switch (r.api) {
    case 'core':
      return r.scope ? [{ coreOAuth: [r.scope] }] : [];
    case 'platform':
      if (isConsoleRoute(r)) return isSignIn(r) ? [] : [{ consoleSession: [] }];
      return [{ platformApiKey: [] }, { consoleSession: [] }];
    case 'auth':
      return [{ clientBasic: [] }];
    case 'public':
      return [];
  }
}

/** Which credentials a Platform or console operation takes, in words. */
function credentialsText(r: Route, declared: DeclaredRequest | undefined): string[] {
  if (r.api !== 'platform' || isSignIn(r)) return [];
  const csrf = isSafeMethod(r.method) ? '' : ` (with its \`${CSRF_HEADER_NAME}\`)`;
  // A Platform route's session needs `admin` for a request that changes something: not a GET, even
  // of a function whose grants write (the search administration's reads share its writes' function).
  const adminOnly = declared?.adminOnly === true && (isConsoleRoute(r) || !isSafeMethod(r.method));
  const roles = adminOnly ? 'the `admin` role' : 'any role (`admin`, `viewer`)';
  if (isConsoleRoute(r)) return [`Console session${csrf}: ${roles}; never an API key.`];
  return [`API key scopes: ${r.scopes.join(', ')}.`, `Or a console session${csrf}: ${roles}.`];
}

function operation(r: Route, declared: DeclaredRequest | undefined, converter: SchemaConverter): JsonSchema {
  const doc = OPERATIONS[routeKey(r)];
  if (!doc) throw new Error(`${routeKey(r)} has no entry in shared/openapi/operations-*.ts`);
  const envelope = envelopeOf(r);
  const params = [
    ...pathParameters(r, declared, converter),
    ...(declared ? parameters('query', converter.convert(declared.query, 'input')) : []),
    ...(declared?.idempotent ? [IDEMPOTENCY_KEY] : []),
    ...csrfParameter(r),
  ];
  const request = declared?.body ?? doc.form;
  const success: JsonSchema = {
    description: doc.ok.description,
    headers: {
      'X-Request-Id': headerRef('X-Request-Id'),
      ...(declared?.idempotent ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {}),
      ...(envelope === 'oauth' ? { 'Cache-Control': headerRef('Cache-Control'), Pragma: headerRef('Pragma') } : {}),
      ...doc.headers,
    },
    ...(doc.ok.schema
      ? { content: { 'application/json': { schema: converter.convert(doc.ok.schema, 'output'), ...(doc.examples?.response !== undefined ? { example: doc.examples.response } : {}) } } }
      : {}),
  };
  return {
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description || r.api === 'platform' ? { description: [doc.description, ...credentialsText(r, declared)].filter(Boolean).join('\n\n') } : {}),
    ...(r.api === 'platform' && !isConsoleRoute(r) ? { 'x-api-key-scopes': [...r.scopes] } : {}),
    security: security(r),
    ...(params.length ? { parameters: params } : {}),
    ...(request
      ? {
          requestBody: {
            required: true,
            content: {
              [declared?.body ? 'application/json' : 'application/x-www-form-urlencoded']: {
                schema: converter.convert(request, 'input'),
                ...(doc.examples?.request !== undefined ? { example: doc.examples.request } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      [String(doc.ok.status)]: success,
      ...Object.fromEntries(errorStatuses(r, declared, doc).map((s) => [String(s), { $ref: `#/components/responses/${errorResponseOf(r, envelope, s, doc)}` }])),
    },
  };
}

/** OPTIONS on every Core path: CORS preflight, no token. */
function preflight(r: Route): JsonSchema {
  const header = (description: string) => ({ description, schema: { type: 'string' } });
  return {
    operationId: `preflight${pascal(r.path)}`,
    tags: ['CORS'],
    summary: `CORS preflight of ${r.path}`,
    security: [],
    ...(templateParams(r.path).length ? { parameters: templateParams(r.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })) } : {}),
    responses: {
      '204': {
        description: 'The methods and headers this path allows.',
        headers: {
          'X-Request-Id': headerRef('X-Request-Id'),
          'Access-Control-Allow-Origin': header('CORS_ALLOW_ORIGIN (default `*`).'),
          'Access-Control-Allow-Methods': header("The path's methods."),
          'Access-Control-Allow-Headers': header('`Authorization, Content-Type, Idempotency-Key`.'),
          'Access-Control-Max-Age': header('600'),
        },
      },
    },
  };
}

/** Path-level servers: the Platform base for `/api`, the token endpoint's, or both bases for public routes. */
function servers(r: Route): JsonSchema[] | undefined {
  switch (r.api) {
    case 'platform':
      return [SERVERS.platform];
    case 'auth':
      return [SERVERS.auth];
    case 'public':
      return [SERVERS.core, SERVERS.platform];
    case 'core':
      return undefined;
  }
}

export function buildDocument(declaredOf: DeclaredOf): JsonSchema {
  const stale = Object.keys(OPERATIONS).filter((k) => !routes.some((r) => routeKey(r) === k));
  if (stale.length) throw new Error(`shared/openapi/operations-*.ts describe routes the route table does not have: ${stale.join(', ')}`);
  const converter = new SchemaConverter();
  const paths: Record<string, JsonSchema> = {};
  const tags: string[] = [];
  for (const r of routes) {
    const item = (paths[r.path] ??= { ...(servers(r) ? { servers: servers(r) } : {}) });
    const op = isPreflight(r) ? preflight(r) : operation(r, declaredOf(r), converter);
    for (const t of op.tags as string[]) if (!tags.includes(t)) tags.push(t);
    item[r.method.toLowerCase()] = op;
  }
  const responses = errorResponses(converter);
  return {
    openapi: '3.1.0',
    info: INFO,
    servers: [SERVERS.core],
    tags: tags.map((name) => ({ name })),
    paths,
    components: { schemas: converter.components, responses, headers: HEADERS, securitySchemes: SECURITY_SCHEMES },
  };
}
