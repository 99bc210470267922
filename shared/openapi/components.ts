import { CSRF_HEADER, SESSION_COOKIE } from '../console-auth/session.ts';
import { CORE_SCOPES } from '../routes.ts';
import { coreError, gatewayMessage, oauthError, platformError } from '../schemas/responses/common.ts';
import type { JsonSchema, SchemaConverter } from './json-schema.ts';

/** The error envelope of each kind of route. */
export type Envelope = 'core' | 'platform' | 'oauth';

const CORE_ERRORS: Record<number, string> = {
  400: 'Invalid request (`invalid_request_error`): `validation_error` (with `details.fieldErrors`), `parameter_missing`, `invalid_json`.',
  401: 'Missing or invalid credentials (`authentication_error`).',
  403: 'The token lacks the scope this route needs (`permission_error`, `insufficient_scope`).',
  404: 'Not found for this tenant (`not_found_error`, e.g. `item_not_found`).',
  409: 'Conflict (`conflict_error`): an Idempotency-Key reused with another request, still in use, or whose request sent events of a user erased since (`idempotency_key_erased`), or a record changing meanwhile.',
  413: 'The body is over 1 MiB (`invalid_request_error`, `body_too_large`).',
  429: "The tenant's request quota is used up (`rate_limit_error`, `rate_limited`): retry after `Retry-After` seconds.",
  500: 'Unexpected error (`api_error`, `internal_error`); quote the `request_id`.',
  503: "Not available right now (`api_error`): `timeout`, or `unavailable` (the health check's table not answering, or any route's table or other AWS service refusing for load, or the keys that verify a Core route's Bearer token not readable, with `Retry-After`); retry, a create with the same Idempotency-Key.",
};

const PLATFORM_ERRORS: Record<number, string> = {
  400: 'Invalid request: a field, parameter or state (the message names them).',
  401: 'Missing or invalid credentials: no valid API key, no live console session, or (signing in) a wrong email or password.',
  403: "The API key lacks a scope this route allows; or a console session sent no (or a wrong) `X-CSRF-Token` on a request that changes something, or another session's on a read, or is a viewer's on a route that changes something.",
  404: 'Not found for this tenant.',
  409: 'Conflict: the name is taken, or the record changed meanwhile.',
  413: 'The body is over 1 MiB.',
  429: 'Too many failed sign-ins from this address or for this email; wait a minute and try again.',
  500: 'Unexpected error.',
  503: 'The request took too long and was stopped, or the table refused it for load (with `Retry-After`); retry.',
};

const OAUTH_ERRORS: Record<number, string> = {
  400: '`invalid_request`, `unsupported_grant_type` or `invalid_scope`.',
  401: '`invalid_client`: unknown client or wrong secret (with `WWW-Authenticate: Basic`).',
  429: '`slow_down`: too many token requests (or failed attempts from this address).',
  500: 'Unexpected error.',
};

const ENVELOPES = { core: { prefix: 'Core', texts: CORE_ERRORS }, platform: { prefix: 'Platform', texts: PLATFORM_ERRORS }, oauth: { prefix: 'OAuth', texts: OAUTH_ERRORS } } as const;

/** The component name of an envelope's error answer with that status. */
export const errorResponseName = (envelope: Envelope, status: number): string => `${ENVELOPES[envelope].prefix}Error${status}`;

/**
 * API Gateway's 429 past the stage's throttle: what a route with no 429 of its own answers then
 * (docs/api.md, "Rate limits"). Where the service has a 413, 429 or 500 of its own, its answer is
 * either that envelope or API Gateway's message (the Core and Platform APIs; not the token
 * endpoint, which API Gateway does not serve on AWS).
 */
export const GATEWAY_429 = 'GatewayThrottled429';
const GATEWAY_TEXT: Record<number, string> = {
  429: ' On AWS, past the stage\'s throttle, API Gateway answers instead with `{"message": "Too Many Requests"}` (no `Retry-After`): retry with backoff.',
  413: ' A body over 10 MiB never reaches the service: API Gateway answers `{"message": "Request Entity Too Large"}` (and the local server as it does).',
  500: ' On AWS, when a function fails outright or times out, API Gateway answers instead with `{"message": "Internal Server Error"}`.',
};

/** Response headers every answer carries. */
export const HEADERS: Record<string, JsonSchema> = {
  'X-Request-Id': { description: "The request's id (a UUID); Core errors repeat it as `error.request_id`.", schema: { type: 'string', format: 'uuid' } },
  'Retry-After': { description: 'Whole seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
  'Idempotent-Replayed': { description: '`true` when the answer is the stored one of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
  'WWW-Authenticate': {
    description:
      'The challenge of a 401 (RFC 7235): `Bearer` on the APIs (RFC 6750 §3), `Bearer error="invalid_token"` when the token or API key sent was refused (RFC 6750 §3.1), `Basic realm="oauth2"` on the token endpoint; and of a 403 for a token or API key without the scope: `Bearer error="insufficient_scope", scope="..."` with the scopes that would do (RFC 6750 §3.1; not for a console session).',
    schema: { type: 'string' },
  },
  'Cache-Control': { description: 'Holds `no-store`: a token answer is never cached (RFC 6749 §5.1).', schema: { type: 'string' } },
  Pragma: { description: '`no-cache`, for HTTP/1.0 caches (RFC 6749 §5.1).', schema: { type: 'string' } },
};
export const headerRef = (name: keyof typeof HEADERS & string): JsonSchema => ({ $ref: `#/components/headers/${name}` });

/** Every error answer of every envelope, as components. */
export function errorResponses(converter: SchemaConverter): Record<string, JsonSchema> {
  const schemas = { core: converter.convert(coreError, 'output'), platform: converter.convert(platformError, 'output'), oauth: converter.convert(oauthError, 'output') };
  const gateway = converter.convert(gatewayMessage, 'output');
  const out: Record<string, JsonSchema> = {
    [GATEWAY_429]: {
      description: 'On AWS only: past the stage\'s throttle, API Gateway answers `{"message": "Too Many Requests"}` (no `X-Request-Id`, no `Retry-After`): retry with backoff.',
      content: { 'application/json': { schema: gateway } },
    },
  };
  for (const envelope of ['core', 'platform', 'oauth'] as const) {
    for (const [status, text] of Object.entries(ENVELOPES[envelope].texts)) {
      // Not the token endpoint's: on AWS it is Cognito's domain (behind AWS WAF, whose 429 is the
      // `slow_down` envelope), never API Gateway.
      const byGateway = envelope === 'oauth' ? undefined : GATEWAY_TEXT[Number(status)];
      out[errorResponseName(envelope, Number(status))] = {
        description: byGateway ? text + byGateway : text,
        headers: {
          'X-Request-Id': headerRef('X-Request-Id'),
          // A 503 for load (`unavailable`) carries one too, not one for time run out.
          ...(status === '429' || (status === '503' && envelope !== 'oauth') ? { 'Retry-After': headerRef('Retry-After') } : {}),
          ...(status === '401' || (status === '403' && envelope !== 'oauth') ? { 'WWW-Authenticate': headerRef('WWW-Authenticate') } : {}),
          ...(envelope === 'oauth' ? { 'Cache-Control': headerRef('Cache-Control'), Pragma: headerRef('Pragma') } : {}),
        },
        content: {
          'application/json': { schema: byGateway ? { oneOf: [schemas[envelope], gateway] } : schemas[envelope], ...(envelope === 'core' && status === '400' ? { example: CORE_400_EXAMPLE } : {}) },
        },
      };
    }
  }
  return out;
}

const CORE_400_EXAMPLE = {
  error: {
    type: 'invalid_request_error',
    code: 'validation_error',
    message: 'Invalid request body.',
    details: { fieldErrors: { name: ['name is required'] } },
    request_id: '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b',
  },
};

export const SECURITY_SCHEMES: Record<string, JsonSchema> = {
  coreOAuth: {
    type: 'oauth2',
    description: 'Core API: an access token from the token endpoint (OAuth 2.0 client credentials), sent as `Authorization: Bearer <token>`. Server-side use only.',
    flows: {
      clientCredentials: {
        tokenUrl: '/oauth2/token',
        scopes: Object.fromEntries(CORE_SCOPES.map((s) => [s, s === 'service-api/read' ? 'Read items, events and recommendations; search.' : 'Create, update and delete items; send events.'])),
      },
    },
  },
  platformApiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'svc_<prefix>_<token>',
    description:
      'Platform API: an API key, `Authorization: Bearer svc_<prefix>_<token>`. Scopes `admin` (every route), `events`, `items`, `recommendations`; each operation lists the scopes it allows in `x-api-key-scopes`.',
  },
  clientBasic: { type: 'http', scheme: 'basic', description: "The token endpoint: the OAuth client's ID and secret as HTTP Basic authentication." },
  consoleSession: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: [
      `Console session: the HttpOnly cookie \`${SESSION_COOKIE}\` that \`POST /console/session\` (email and password) sets; the browser sends it, the console never sees its value. It authorises the console's own routes (\`/console/...\`) and, on the Platform API (\`/api/...\`), stands in for an API key when no \`Authorization\` header is sent (a request with one is judged by the key alone).`,
      `Every request that changes something (any method but GET, HEAD, OPTIONS) must also send the session's CSRF token (\`csrf_token\` of the session) in the \`${headerName(CSRF_HEADER)}\` header, else 403. A read may send it too (the console sends it on every request, so that a tab whose session another tab replaced is refused, not answered with that session's data); if it does, it must be the session's, else 403 (\`GET /console/session\` excepted). The session's tenant is the tenant; an \`admin\` user may call every Platform route, a \`viewer\` only GET routes (and the console's reads). Sessions last 8 hours from sign-in (CONSOLE_SESSION_SECONDS), or until \`DELETE /console/session\`. The session's user is read again every 5 minutes (CONSOLE_USER_CHECK_SECONDS): a changed role applies from then on, and a user deleted, disabled or moved to another tenant ends the session (401, the cookie cleared).`,
    ].join('\n\n'),
  },
};

/** `x-csrf-token` as it is written in documents: `X-CSRF-Token`. */
function headerName(lower: string): string {
  return lower
    .split('-')
    .map((w) => (w === 'csrf' ? 'CSRF' : (w[0]?.toUpperCase() ?? '') + w.slice(1)))
    .join('-');
}
/** The header name of a session's CSRF token. */
export const CSRF_HEADER_NAME = headerName(CSRF_HEADER);

export const SERVERS = {
  core: { url: '{base_url}', description: 'Core API (and, locally, everything on one port)', variables: { base_url: { default: 'http://localhost:3000', description: "The stack's base_url" } } },
  platform: { url: '{console_url}', description: 'Platform API', variables: { console_url: { default: 'http://localhost:3000', description: "The stack's console_url" } } },
  auth: { url: '{auth_url}', description: 'Token endpoint (Cognito on AWS)', variables: { auth_url: { default: 'http://localhost:3000', description: "The stack's auth_url" } } },
} as const;

export const INFO = {
  title: 'recsearch: Core API and Platform API',
  version: '1.0.0',
  description: [
    "Recommendations and search as a service. The **Core API** (`{base_url}`, paths under `/v1`) takes catalog items and user events and answers recommendations and search; it is authorised by OAuth 2.0 client-credentials access tokens from the **token endpoint** (`{auth_url}/oauth2/token`). The **Platform API** (`{console_url}`, paths under `/api`) configures credentials, training, serving and the control plane; it is authorised by API keys, or by a console session (cookie). The **console's own routes** (`{console_url}`, paths under `/console`) sign console users in and out and run the Core reads the console shows for the session's tenant; they are authorised by the console session alone.",
    '',
    'Conventions: JSON bodies (parsed whatever the Content-Type), Unix seconds, IDs returned as strings. Unknown query parameters and body fields are rejected (400). Core lists answer the envelope `{object: "list", data, has_more, next_cursor, url}`; Platform lists `{data, has_more, next_cursor}`. Core errors answer `{error: {type, code, message, details?, request_id}}`, Platform errors `{error: "..."}`, the token endpoint RFC 6749 errors. Every answer carries `X-Request-Id`.',
    '',
    "This document is generated from the route table and the handlers' zod schemas (`npm run openapi`); it is served at `GET /openapi.json` on both bases, without credentials.",
  ].join('\n'),
};
