import { readFileSync } from 'node:fs';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import type { Jwks } from 'aws-jwt-verify/jwk';
import { FetchError, JwksValidationError } from 'aws-jwt-verify/error';
import { config, requireSetting } from '../config.ts';

/** The claims of a Cognito client-credentials access token that this service relies on. */
export interface AccessClaims {
  clientId: string;
  scopes: string[];
}

const hasExpiry = (payload: Record<string, unknown>): payload is Record<string, unknown> & { exp: number } => typeof payload.exp === 'number' && Number.isFinite(payload.exp);

function createVerifier() {
  const { auth } = config();
  return JwtVerifier.create({
    issuer: requireSetting(auth.issuer, 'AUTH_ISSUER'),
    jwksUri: auth.jwksUri,
    audience: null,
    customJwtCheck: ({ payload }) => {
      if (payload.token_use !== 'access') throw new Error('not an access token');
      if (typeof payload.client_id !== 'string' || payload.client_id === '') throw new Error('no client_id in token');
      // The verifier checks exp only when present; a token that never expires is refused.
      if (!hasExpiry(payload)) throw new Error('no numeric exp in token');
    },
  });
}
type Verifier = ReturnType<typeof createVerifier>;
/** Cache of one: the container's token verifier (its JWKS fetched or preloaded once). */
let verifier: Verifier | undefined;

function getVerifier(): Verifier {
  if (verifier) return verifier;
  const v = createVerifier();
  // Locally the JWKS is a file beside the signing key: preload it so verification never fetches.
  const { jwksFile } = config().auth;
  if (jwksFile) v.cacheJwks(JSON.parse(readFileSync(jwksFile, 'utf8')) as Jwks);
  verifier = v;
  return verifier;
}

/**
 * Tokens this container verified, with their expiry. A token's signature, issuer and use cannot
 * change, so the RSA check runs once per token and container rather than on every request; only
 * the expiry is checked again (and the client's existence, by the caller, on every request).
 */
/** At most MAX_VERIFIED tokens. */
const verified = new Map<string, { claims: AccessClaims; expiresAt: number }>();
const MAX_VERIFIED = 1000;

/**
 * Whether a verification failed for want of the signing keys, not for anything in the token: the
 * JWKS could not be fetched (Cognito's endpoint unreachable, timed out, not 200) or what it
 * answered is no JWKS. The token is then neither valid nor invalid; the caller answers a 503 to
 * retry, not a 401 telling the client its token is bad.
 */
export const keysUnavailable = (e: unknown): boolean => e instanceof FetchError || e instanceof JwksValidationError;

/** Verifies signature, issuer, expiry (which must be there) and token use; throws on any failure. */
export async function verifyAccessToken(token: string): Promise<AccessClaims> {
  const hit = verified.get(token);
  if (hit) {
    if (Date.now() < hit.expiresAt) return hit.claims;
    verified.delete(token);
  }
  const payload = await getVerifier().verify(token);
  // Checked by the verifier too (customJwtCheck); here as well, whatever the verifier does.
  if (!hasExpiry(payload)) throw new Error('no numeric exp in token');
  const scope = typeof payload.scope === 'string' ? payload.scope : '';
  const claims = { clientId: String(payload.client_id), scopes: scope.split(' ').filter(Boolean) };
  if (verified.size >= MAX_VERIFIED) verified.clear();
  verified.set(token, { claims, expiresAt: payload.exp * 1000 });
  return claims;
}
