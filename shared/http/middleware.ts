import type { z } from 'zod/mini';
import { type AccessClaims, keysRetryAfter, verifyAccessToken } from '../auth/jwt.ts';
import { credentialStore } from '../data/index.ts';
import { authenticateApiKey } from '../domain/credentials.ts';
import { ApiError, AuthenticationError, invalidToken, malformedBearer, PermissionError, ValidationError } from '../errors.ts';
import { Unauthenticated } from '../domain/errors.ts';
import { freshReads } from '../fresh-read.ts';
import { Lru } from '../lru.ts';
import type { CoreScope, PlatformScope } from '../routes.ts';
import { parseOrThrow } from '../schemas/common.ts';
import { cookieOf, isSafeMethod, requireSession, SESSION_COOKIE, sessionCaller } from '../console-auth/session.ts';
import { header } from './base.ts';
import { admitRequest } from './quota.ts';
import type { HttpEvent, HttpMiddleware } from './types.ts';

/**
 * The Bearer credential of the Authorization header, or undefined when the request sent none (no
 * header, or another scheme: RFC 6750 §3's bare challenge). A header of the Bearer scheme that is
 * not `Bearer <one value>` (no value, or a value with a space or a comma: `Bearer a b`, two
 * Authorization headers) is a credential sent and refused, the 401 naming the problem (`invalid_token`, as every refused token: the spec makes
 * an invalid Bearer token 401, not RFC 6750's 400 `invalid_request`); until 2026-12-07 it read as
 * no credential, a bare challenge that said nothing of what was wrong.
 */
function bearer(event: HttpEvent, placeholder: string): string | undefined {
  const value = header(event, 'authorization') ?? '';
  if (!/^Bearer(?:\s|$)/i.test(value)) return undefined;
  // No token or key holds a comma: one is the sign of Authorization sent twice, which API Gateway
  // (and the local stack, local/http-adapter.ts) joins with a comma (`Bearer a,b`; `Bearer a,Bearer b`
  // has a space too), a credential refused, not the first or second of them authenticated.
  const m = /^Bearer\s+([^\s,]+)\s*$/i.exec(value);
  if (!m) throw malformedBearer(`The Authorization header is malformed: send one Authorization: Bearer ${placeholder} header, one value without spaces or commas.`);
  return m[1];
}

const clientById = /* @__PURE__ */ freshReads((clientId: string) => credentialStore().getClient(clientId));

/**
 * Cache: the tenant of each client whose record this container has read (a client never changes
 * tenant). Bound: TENANT_OF_CLIENTS clients, the least recently used let go (until 2026-12-07
 * emptied whole when full: past that many clients in a container, busy clients' routes that may
 * overlap their client's read waited for it again).
 */
export const TENANT_OF_CLIENTS = 10_000;
const tenantOf = new Lru<string, string>(TENANT_OF_CLIENTS);

/** Reads the client's record (a read that began after this call); its tenant, or the 401. */
async function confirmClient(clientId: string): Promise<string> {
  const client = await clientById(clientId);
  if (!client) {
    // Forgotten: a deleted client's tokens (valid up to an hour) are then refused before the
    // tenant's quota is charged. Until 2026-12-04 each was charged to it, on every container that
    // had served the client, so a leaked and deleted client could hold the tenant at 429.
    tenantOf.delete(clientId);
    throw invalidToken('The client this token was issued to no longer exists.');
  }
  tenantOf.set(clientId, client.tenant);
  return client.tenant;
}

/**
 * Core API: verifies the Cognito-shaped access token, maps its client to the tenant, checks the
 * scope. The client's record is read on every request (concurrent requests share one read that
 * began after they arrived), so a deleted client's tokens stop working at once.
 *
 * `overlap` (routes that cannot write, see `readOnly` in routes.ts): once this container knows
 * the client's tenant, the route runs while that read is under way instead of after it, and its
 * answer waits for the read: a deleted client still gets the 401, never the answer, and in place
 * of any other error the route raised.
 */
export function coreAuth(scope: CoreScope, opts: { overlap?: boolean } = {}): HttpMiddleware {
  return {
    before: async (req) => {
      const token = bearer(req.event, '<ACCESS_TOKEN>');
      if (!token) throw new AuthenticationError('Missing Bearer token in the Authorization header.');
      let claims: AccessClaims;
      try {
        claims = await verifyAccessToken(token);
      } catch (e) {
        // The signing keys could not be read (deployed: Cognito's JWKS, fetched on a container's
        // first token and on a token of a kid it lacks), or may not be fetched again yet (the
        // verifier's penalty box): no verdict on the token, so the 503 to retry, not a 401 that
        // tells the client its token is bad (until 2026-12-07 it was that 401).
        const retryAfter = keysRetryAfter(e);
        if (retryAfter !== undefined) {
          const message = `The keys that verify access tokens could not be read right now; retry in ${retryAfter === 1 ? 'a second' : `${retryAfter} seconds`}.`;
          throw new ApiError('api_error', 'unavailable', message, { status: 503, headers: { 'retry-after': String(retryAfter) } });
        }
        throw invalidToken('The Bearer token is invalid or expired.');
      }
      const scoped = claims.scopes.includes(scope);
      const known = opts.overlap && scoped ? tenantOf.get(claims.clientId) : undefined;
      if (known !== undefined) {
        const confirmed = confirmClient(claims.clientId);
        // Awaited by after/onError; meanwhile a rejection is not unhandled.
        confirmed.catch(() => undefined);
        req.context.state.authConfirmed = confirmed;
        req.context.state.tenant = known;
      } else {
        req.context.state.tenant = await confirmClient(claims.clientId);
        if (!scoped) throw new PermissionError(`This token lacks the ${scope} scope.`, [scope]);
      }
      req.context.state.scopes = claims.scopes;
      // The tenant's request quota: undefined when admitted, else the 429 answered at once.
      return admitRequest(req);
    },
    after: async (req) => {
      await req.context.state.quotaSettled;
      await req.context.state.authConfirmed;
    },
    onError: async (req) => {
      await req.context.state?.quotaSettled;
      // A client found gone outranks whatever else went wrong.
      await req.context.state?.authConfirmed?.catch((e: unknown) => {
        req.error = e as Error;
      });
    },
  };
}

/**
 * Platform API: resolves the API key (read on every request, so revocation is immediate) and checks its scopes.
 * Without an Authorization header, a console session (its cookie, read on every request) stands
 * in for the key: the session's tenant is the tenant; a request that changes something needs the
 * session's X-CSRF-Token; an `admin` user may call every route, a `viewer` only GET routes and
 * routes that change nothing (`readOnly`: the item search, a POST for its body).
 */
export function platformAuth(allowed: readonly PlatformScope[], opts: { readOnly: boolean } = { readOnly: false }): HttpMiddleware {
  return {
    before: async (req) => {
      const key = bearer(req.event, '<API_KEY>');
      if (!key && header(req.event, 'authorization') === undefined && cookieOf(req.event, SESSION_COOKIE) !== undefined) {
        const method = req.event.requestContext.http.method;
        Object.assign(req.context.state, sessionCaller(await requireSession(req.event, { writes: !isSafeMethod(method) && !opts.readOnly })));
        return;
      }
      if (!key) throw new AuthenticationError('Missing API key: send Authorization: Bearer <API_KEY>.');
      // A key sent and refused (a wrong or revoked key, or a string that is no API key, such as an access token) is RFC 6750 §3.1's invalid_token.
      const rec = await authenticateApiKey(credentialStore(), key).catch((e: unknown) => {
        throw e instanceof Unauthenticated ? invalidToken(e.message) : e;
      });
      if (!rec.scopes.some((s) => allowed.includes(s))) {
        throw new PermissionError(`This API key lacks a scope for this route (one of: ${allowed.join(', ')}).`, allowed);
      }
      req.context.state.tenant = rec.tenant;
      req.context.state.scopes = rec.scopes;
      req.context.state.actor = rec.id;
    },
  };
}

/**
 * A part of a request that only `admin` may make, on a route other scopes may call (a template's
 * `auto_promote`, which promotes versions: the docs make promotion `admin`'s): 403 for others.
 */
export function requireAdmin(scopes: readonly string[], what: string): void {
  if (!scopes.includes('admin')) throw new PermissionError(`${what} needs the admin scope.`, ['admin']);
}

export interface Schemas<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType> {
  body?: B;
  query?: Q;
  path?: P;
}

/** Validates body, query string and path parameters with their zod schemas. */
/** A query string's part as URLSearchParams reads it (`+` a space, a `%` without two hex digits itself); throws on bytes that are not UTF-8. */
const decodeQueryPart = (part: string): string => decodeURIComponent(part.replace(/\+/g, ' ').replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));

/**
 * What the gateway's decoded parameters hide: a parameter sent twice (API Gateway joins the
 * values with a comma, so `category=a&category=b` would read as the category "a,b") and
 * percent-encoding that is not UTF-8 (`%FF`, decoded as U+FFFD, so two values would read as
 * one). Both are 400, naming the parameter.
 */
function checkRawQuery(raw: string | undefined): void {
  if (!raw) return;
  const seen = new Set<string>();
  const errors = new Map<string, string[]>();
  for (const part of raw.split('&')) {
    if (!part) continue;
    const at = part.indexOf('=');
    const [k, v] = at < 0 ? [part, ''] : [part.slice(0, at), part.slice(at + 1)];
    let name: string;
    try {
      name = decodeQueryPart(k);
      decodeQueryPart(v);
    } catch {
      errors.set(k.slice(0, 64), ['Not valid percent-encoded UTF-8.']);
      continue;
    }
    if (seen.has(name)) errors.set(name.slice(0, 64), ['Sent more than once: send each query parameter once.']);
    seen.add(name);
  }
  if (errors.size) throw new ValidationError('Invalid query parameters.', Object.fromEntries(errors));
}

/**
 * The same for path parameters: a segment whose percent-encoding is not UTF-8 (`%FF`) was taken
 * as sent (locally; the gateway's decoding hides it too), so `DELETE /api/users/%FF` erased a user
 * named `%FF`, not the one meant, and answered 200. 400, naming the parameter.
 */
function checkRawPath(routeKey: string | undefined, rawPath: string | undefined): void {
  if (!routeKey || !rawPath) return;
  const names = (routeKey.split(' ')[1] ?? '').split('/');
  const segments = rawPath.split('/');
  if (names.length !== segments.length) return;
  const errors: Record<string, string[]> = {};
  names.forEach((n, i) => {
    const param = /^\{([A-Za-z_]+)\}$/.exec(n)?.[1];
    if (!param) return;
    try {
      decodeURIComponent(segments[i] as string);
    } catch {
      errors[param] = ['Not valid percent-encoded UTF-8.'];
    }
  });
  if (Object.keys(errors).length) throw new ValidationError('Invalid path parameter.', errors);
}

export function validate<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType>(s: Schemas<B, Q, P>, noQuery: z.ZodMiniType): HttpMiddleware {
  return {
    before: (req) => {
      checkRawQuery(req.event.rawQueryString);
      if (s.body) req.context.state.body = parseOrThrow(s.body, req.context.state.body, 'request body');
      req.context.state.query = parseOrThrow(s.query ?? noQuery, req.event.queryStringParameters ?? {}, 'query parameters');
      if (s.path) {
        checkRawPath(req.event.routeKey, req.event.rawPath);
        req.context.state.params = parseOrThrow(s.path, req.event.pathParameters ?? {}, 'path parameter');
      }
    },
  };
}
