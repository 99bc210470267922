import { config, requireSetting } from '../config.ts';
import type { CredentialStore } from '../domain/credentials-types.ts';
import { authenticateClient } from '../domain/credentials.ts';
import { ApiError } from '../errors.ts';
import { slowDown, TokenBucket } from './rate-limit.ts';
import { CLIENT_ID_PATTERN } from './secrets.ts';
import { loadSigningKey, signAccessToken, type SigningKey } from './signer.ts';

/** RFC 6749 §5.2 errors: `code` becomes `error`, the message `error_description`. */
const oauthError = (code: string, message: string, status?: number) => {
  const type = code === 'invalid_client' ? 'authentication_error' : code === 'slow_down' ? 'rate_limit_error' : 'invalid_request_error';
  return new ApiError(type, code, message, status ? { status } : {});
};

/**
 * The longest request body read (characters): a client-credentials request is a grant type and
 * at most a few scopes. Longer ones are refused before they are parsed.
 */
const MAX_TOKEN_BODY = 8192;

/** Tokens issued, per client: charged only once the client's secret verified. */
let clientBucket: TokenBucket | undefined;
/**
 * Attempts that did not verify, per source address: whoever sends wrong secrets or invented
 * client ids slows down themselves, not the client named (whose id is in every token it has).
 */
let failureBucket: TokenBucket | undefined;
/** Cache of one: the local signing key, read from AUTH_SIGNING_KEY_FILE on first use. */
let signingKey: SigningKey | undefined;

export interface TokenRequest {
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
  sourceIp: string;
}

function basicCredentials(authorization: string | undefined): { id: string; secret: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0) return undefined;
  // RFC 6749 §2.3.1: both parts are form-urlencoded inside Basic.
  try {
    return { id: decodeURIComponent(decoded.slice(0, i)), secret: decodeURIComponent(decoded.slice(i + 1)) };
  } catch {
    return undefined;
  }
}

/** The local stand-in for Cognito's client-credentials token endpoint. */
export async function issueToken(store: CredentialStore, req: TokenRequest) {
  const { auth } = config();
  clientBucket ??= new TokenBucket(auth.tokenRatePerSecond, auth.tokenBurst);
  failureBucket ??= new TokenBucket(auth.tokenRatePerSecond, auth.tokenBurst);
  // Every request holds one of its address's failed attempts until its secret verifies, so
  // concurrent guesses cannot overrun the limit; a verified request gives it back.
  const address = req.sourceIp;
  if (!failureBucket.take(address)) throw slowDown('Too many failed token requests from this address; retry later.', failureBucket, address);
  const creds = basicCredentials(req.authorization);
  if (!creds) throw oauthError('invalid_client', 'Send the client credentials as HTTP Basic authentication.');
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.contentType ?? '')) {
    throw oauthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded.');
  }
  if (req.body.length > MAX_TOKEN_BODY) throw oauthError('invalid_request', `The request body is longer than ${MAX_TOKEN_BODY} characters.`);
  // RFC 6749 §3.1: a parameter included more than once is an invalid request, not the first (or
  // last) of them, with a value or without (`scope=&scope=x` too).
  // Percent-encoded UTF-8, or a malformed request (RFC 6749 §4.4.2, appendix B): URLSearchParams
  // reads `%FF` as U+FFFD and a stray `%` as itself, so until 2026-12-07 `scope=%FF` was answered
  // invalid_scope, naming a scope the client never sent.
  if (!wellEncoded(req.body)) throw oauthError('invalid_request', 'The form must be percent-encoded UTF-8 (application/x-www-form-urlencoded): a % begins two hexadecimal digits of a UTF-8 byte.');
  const sent = new URLSearchParams(req.body);
  const seen = new Set<string>();
  const repeated = [...sent.keys()].find((n) => seen.size === seen.add(n).size);
  if (repeated !== undefined) throw oauthError('invalid_request', `${repeated.slice(0, 64)} may be sent only once.`);
  // And one sent without a value is treated as if it were omitted (`scope=` asks for the client's
  // scopes, an empty `client_secret=` is no second credential).
  const form = new URLSearchParams([...sent].filter(([, value]) => value !== ''));
  const grant = form.get('grant_type');
  if (!grant) throw oauthError('invalid_request', 'grant_type is required.');
  if (grant !== 'client_credentials') throw oauthError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
  // An id no client can have is the same answer as an unknown one (and never a lookup: DynamoDB refuses keys over 2 KB).
  const client = CLIENT_ID_PATTERN.test(creds.id) ? await authenticateClient(store, creds.id, creds.secret) : undefined;
  if (!client) throw oauthError('invalid_client', 'Unknown client or wrong secret.');
  failureBucket.refund(address);
  // RFC 6749 §2.3: one way of authenticating the client per request. Basic is the one taken; a
  // secret in the form too, or another client's id, is an invalid request, not ignored (once
  // Basic verifies: it is no failed guess).
  const formId = form.get('client_id');
  if (form.has('client_secret') || (formId !== null && formId !== creds.id)) {
    throw oauthError('invalid_request', 'Send the client credentials once, as HTTP Basic authentication: client_secret (or another client_id) in the form too is refused.');
  }
  if (!clientBucket.take(client.client_id)) throw slowDown('Too many token requests; retry later.', clientBucket, client.client_id);
  const requested = form.get('scope');
  let scopes: string[] = client.scopes;
  if (requested !== null) {
    // A set of scopes (RFC 6749 §3.3): one named twice is granted once.
    scopes = [...new Set(requested.split(' ').filter(Boolean))];
    const allowed = new Set<string>(client.scopes);
    if (scopes.length === 0 || scopes.some((s) => !allowed.has(s))) {
      throw oauthError('invalid_scope', `scope must be a space-separated subset of: ${client.scopes.join(' ')}.`);
    }
  }
  if (!auth.signingKeyFile) throw new Error('AUTH_SIGNING_KEY_FILE is not set: the token endpoint only runs in the local stack');
  signingKey ??= loadSigningKey(auth.signingKeyFile);
  const accessToken = signAccessToken(signingKey, {
    issuer: requireSetting(auth.issuer, 'AUTH_ISSUER'),
    clientId: client.client_id,
    scope: scopes.join(' '),
    lifetimeSeconds: auth.tokenLifetimeSeconds,
  });
  return { access_token: accessToken, token_type: 'Bearer', expires_in: auth.tokenLifetimeSeconds };
}

/** Whether each `%` of a form body begins an escape, and the escapes spell UTF-8. */
function wellEncoded(body: string): boolean {
  try {
    decodeURIComponent(body.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}
