import type { z } from 'zod/mini';
import { verifyAccessToken } from '../auth/jwt.ts';
import { credentialStore } from '../data/index.ts';
import { authenticateApiKey } from '../domain/credentials.ts';
import { AuthenticationError, PermissionError } from '../errors.ts';
import { freshReads } from '../fresh-read.ts';
import type { CoreScope, PlatformScope } from '../routes.ts';
import { parseOrThrow } from '../schemas/common.ts';
import { header } from './base.ts';
import type { HttpEvent, HttpMiddleware } from './types.ts';

function bearer(event: HttpEvent): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header(event, 'authorization') ?? '');
  return m?.[1];
}

const clientById = /* @__PURE__ */ freshReads((clientId: string) => credentialStore().getClient(clientId));

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
      const rec = await authenticateApiKey(credentialStore(), key);
      if (!rec.scopes.some((s) => allowed.includes(s))) {
        throw new PermissionError(`This API key lacks a scope for this route (one of: ${allowed.join(', ')}).`);
      }
      req.context.state.tenant = rec.tenant;
      req.context.state.scopes = rec.scopes;
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
