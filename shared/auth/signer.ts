import { createPrivateKey, createPublicKey, createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * The local stand-in for Cognito's token signer: an RS256 key kept in the data directory
 * and its JWKS, so tokens survive a restart and one verifier (aws-jwt-verify) serves both stacks.
 */
export interface SigningKey {
  kid: string;
  key: KeyObject;
}

/** Creates the key pair and JWKS files if absent. */
export function ensureSigningKey(privatePath: string, jwksPath: string): void {
  if (existsSync(privatePath) && existsSync(jwksPath)) return;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomUUID();
  writeFileSync(privatePath, JSON.stringify({ kid, pem: privateKey.export({ type: 'pkcs8', format: 'pem' }) }), { mode: 0o600 });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  writeFileSync(jwksPath, JSON.stringify({ keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] }));
}

export function loadSigningKey(privatePath: string): SigningKey {
  const { kid, pem } = JSON.parse(readFileSync(privatePath, 'utf8')) as { kid: string; pem: string };
  return { kid, key: createPrivateKey(pem) };
}

const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Signs a Cognito-shaped client-credentials access token. */
export function signAccessToken(k: SigningKey, claims: { issuer: string; clientId: string; scope: string; lifetimeSeconds: number }): string {
  // The wall clock, not shared/clock.ts: aws-jwt-verify checks `iat`/`exp` against the wall clock.
  const iat = Math.floor(Date.now() / 1000);
  const header = b64({ kid: k.kid, alg: 'RS256' });
  const payload = b64({
    sub: claims.clientId,
    token_use: 'access',
    scope: claims.scope,
    auth_time: iat,
    iss: claims.issuer,
    exp: iat + claims.lifetimeSeconds,
    iat,
    version: 2,
    jti: randomUUID(),
    client_id: claims.clientId,
  });
  const sig = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(k.key).toString('base64url');
  return `${header}.${payload}.${sig}`;
}
