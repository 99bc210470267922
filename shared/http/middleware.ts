import { createHash } from 'node:crypto';
import type { z } from 'zod/mini';
import { verifyAccessToken } from '../auth/jwt.ts';
import { config } from '../config.ts';
import { logger } from '../observability.ts';
import { stores } from '../data/index.ts';
import { authenticateApiKey } from '../domain/credentials.ts';
import { AuthenticationError, ConflictError, PermissionError, ValidationError } from '../errors.ts';
import { freshReads } from '../fresh-read.ts';
import type { CoreScope, PlatformScope } from '../routes.ts';
import { parseOrThrow } from '../schemas/common.ts';
import { header, rawBody } from './base.ts';
import { toResult } from './respond.ts';
import type { Flavor, HttpEvent, HttpMiddleware, HttpRequest, HttpResult } from './types.ts';

function bearer(event: HttpEvent): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header(event, 'authorization') ?? '');
  return m?.[1];
}

const clientById = freshReads((clientId: string) => stores().credentials.getClient(clientId));

/** Core API: verifies the Cognito-shaped access token, maps its client to the tenant, checks the scope. */
export function coreAuth(scope: CoreScope): HttpMiddleware {
  return {
    before: async (req) => {
      const token = bearer(req.event);
      if (!token) throw new AuthenticationError('Missing Bearer token in the Authorization header.');
      let claims;
      try {
        claims = await verifyAccessToken(token);
      } catch {
        throw new AuthenticationError('The Bearer token is invalid or expired.');
      }
      // Read on every request (concurrent requests share one read that began after they
      // arrived), so a deleted client's tokens stop working at once.
      const client = await clientById(claims.clientId);
      if (!client) throw new AuthenticationError('The client this token was issued to no longer exists.');
      if (!claims.scopes.includes(scope)) throw new PermissionError(`This token lacks the ${scope} scope.`);
      req.context.state.tenant = client.tenant;
      req.context.state.scopes = claims.scopes;
    },
  };
}

/** Platform API: resolves the API key (read on every request, so revocation is immediate) and checks its scopes. */
export function platformAuth(allowed: readonly PlatformScope[]): HttpMiddleware {
  return {
    before: async (req) => {
      const key = bearer(req.event);
      if (!key) throw new AuthenticationError('Missing API key: send Authorization: Bearer <API_KEY>.');
      const rec = await authenticateApiKey(stores().credentials, key);
      if (!rec.scopes.some((s) => allowed.includes(s))) {
        throw new PermissionError(`This API key lacks a scope for this route (one of: ${allowed.join(', ')}).`);
      }
      req.context.state.tenant = rec.tenant;
      req.context.state.scopes = rec.scopes;
    },
  };
}

/**
 * Stripe-style Idempotency-Key: the first request with a key runs; a retry with the same key
 * and body within the TTL gets the stored response and writes nothing; another body is 409.
 */
export function idempotency(flavor: Flavor): HttpMiddleware {
  const store = () => stores().idempotency;
  return {
    before: async (req) => {
      const key = header(req.event, 'idempotency-key');
      if (key === undefined) return;
      if (key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
        throw new ValidationError('Invalid Idempotency-Key header.', { 'Idempotency-Key': ['1 to 255 visible ASCII characters.'] });
      }
      const e = req.event;
      const fingerprint = createHash('sha256').update(`${e.requestContext.http.method} ${e.rawPath}\n${rawBody(e) ?? ''}`).digest('hex');
      const now = Math.floor(Date.now() / 1000);
      const claim = await store().claim(req.context.state.tenant, key, fingerprint, now, config().idempotencyTtlSeconds);
      switch (claim.state) {
        case 'new':
          req.context.state.idempotencyKey = key;
          return;
        case 'mismatch':
          throw new ConflictError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
        case 'in_progress':
          throw new ConflictError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.');
        case 'replay': {
          const replay: HttpResult = toResult(flavor, req.context.state.requestId, {
            status: claim.status,
            headers: { 'idempotent-replayed': 'true' },
          });
          replay.body = claim.body;
          req.earlyResponse = replay;
          return replay;
        }
      }
    },
    after: async (req) => {
      const key = req.context.state.idempotencyKey;
      const res = req.response;
      if (!key || !res) return;
      try {
        await store().complete(req.context.state.tenant, key, res.statusCode ?? 200, String(res.body ?? ''));
      } catch (err) {
        logger.error('idempotency record not completed', { requestId: req.context.state.requestId, error: err as Error });
        await store().release(req.context.state.tenant, key).catch(() => undefined);
      }
    },
    onError: async (req: HttpRequest) => {
      const key = req.context.state.idempotencyKey;
      // A failed request leaves nothing behind, so the key can be retried.
      if (key) await store().release(req.context.state.tenant, key).catch(() => undefined);
    },
  };
}

export interface Schemas<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType> {
  body?: B;
  query?: Q;
  path?: P;
}

/** Validates body, query string and path parameters with their zod schemas. */
export function validate<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType>(s: Schemas<B, Q, P>, noQuery: z.ZodMiniType): HttpMiddleware {
  return {
    before: (req) => {
      if (s.body) req.context.state.body = parseOrThrow(s.body, req.context.state.body, 'request body');
      req.context.state.query = parseOrThrow(s.query ?? noQuery, req.event.queryStringParameters ?? {}, 'query parameters');
      if (s.path) req.context.state.params = parseOrThrow(s.path, req.event.pathParameters ?? {}, 'path parameter');
    },
  };
}
