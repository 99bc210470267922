import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { config } from '../config.ts';
import { apiErrorOf } from './error-mapping.ts';
import { ApiError, type FieldErrors, InvalidJson, ParameterMissing, PayloadTooLarge, ValidationError } from '../errors.ts';
import { answerBytes } from '../domain/answer-size.ts';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logger, metrics, tracer } from '../observability.ts';
import { DeadlinePassed } from '../deadline.ts';
import { baseHeaders } from './respond.ts';
import type { ApiContext, Flavor, HttpEvent, HttpMiddleware, HttpResult } from './types.ts';

/*
 * The part of every handler chain that needs no table: Powertools, the error envelope, JSON
 * parsing. Handlers that touch no data (CORS preflight, 404s) bundle only this.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function header(event: HttpEvent, name: string): string | undefined {
  // API Gateway v2 lower-cases header names.
  return event.headers?.[name.toLowerCase()];
}

/**
 * The request body as text. A base64-encoded one (the gateway's way with a body it does not take
 * for text) must be UTF-8: bytes that are not would each read as U+FFFD, and two user ids sent
 * so would become one, so they are 400 `invalid_json` instead.
 */
export function rawBody(event: HttpEvent): string | undefined {
  if (event.body === undefined || event.body === null) return undefined;
  if (!event.isBase64Encoded) return event.body;
  try {
    return utf8.decode(Buffer.from(event.body, 'base64'));
  } catch {
    throw new InvalidJson('The request body is not valid UTF-8 text.');
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * At most this many fields are named in an error's answer (its `details.fieldErrors`, a Platform
 * error's sentence): more than the largest batch (500 events), so a batch with one bad field in
 * each of its elements is told every one, and the client can drop them all in one round (100
 * until later on 2026-12-07 named events 0-99 of such a batch alone).
 */
export const MAX_NAMED_FIELDS = 1000;
/**
 * And only as many as take this many bytes as Lambda writes them (at least one): a request within
 * the 1 MiB limit could be refused for 95,000 fields (500 events of 190 `*_at` properties each),
 * whose answer naming every one took 6.3 MB as Lambda writes it, past its 6 MB, where API Gateway
 * answers its own 500 (until 2026-12-07). One field's path and messages hold what the request
 * sent (a key) at most twice, so the largest is well within the answer.
 */
const NAMED_FIELDS_BYTES = 1_000_000;

/** The fields an error's answer names (`MAX_NAMED_FIELDS`, `NAMED_FIELDS_BYTES`), and a sentence saying so when it names fewer than it has ('' else). */
function namedFields(e: ApiError): { fieldErrors: FieldErrors; note: string } | undefined {
  if (!e.details) return undefined;
  const entries = Object.entries(e.details.fieldErrors);
  const kept: [string, string[]][] = [];
  let used = 0;
  for (const entry of entries) {
    if (kept.length === MAX_NAMED_FIELDS) break;
    used += answerBytes(entry);
    if (kept.length > 0 && used > NAMED_FIELDS_BYTES) break;
    kept.push(entry);
  }
  const note = kept.length < entries.length ? ` The first ${kept.length} of ${entries.length} fields in error are named.` : '';
  return { fieldErrors: Object.fromEntries(kept), note };
}

/**
 * A Platform error's one line: the message, then each field's messages, as one sentence ("Invalid
 * request body. name: Unknown field; body: Supply at least one field."): a message's own final
 * period would stand before the separator.
 */
function platformMessage(e: ApiError): string {
  const named = namedFields(e);
  if (!named) return e.message;
  const parts = Object.entries(named.fieldErrors).map(([f, m]) => `${f}: ${m.map((s) => s.replace(/\.$/, '')).join(', ')}`);
  return `${e.message} ${parts.join('; ')}.${named.note}`;
}

/** The error codes of RFC 6749 §5.2 the token endpoint answers, and `slow_down` (RFC 8628's, as Cognito's). */
const OAUTH_CODES = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'slow_down']);

function errorBody(flavor: Flavor, e: ApiError, requestId: string): unknown {
  switch (flavor) {
    case 'core': {
      const named = namedFields(e);
      return {
        error: { type: e.type, code: e.code, message: `${e.message}${named?.note ?? ''}`, ...(named ? { details: { fieldErrors: named.fieldErrors } } : {}), request_id: requestId },
      };
    }
    case 'platform':
      return { error: platformMessage(e) };
    case 'oauth':
      // RFC 6749's codes: a failure of the server is `server_error`, or `temporarily_unavailable`
      // when a retry may do (the codes §4.1.2.1 registers), not one of the Core API's codes; a
      // request refused before the endpoint read it (a body too large, not UTF-8) `invalid_request`.
      return {
        error: e.status === 503 ? 'temporarily_unavailable' : e.status >= 500 ? 'server_error' : OAUTH_CODES.has(e.code) ? e.code : 'invalid_request',
        error_description: e.message,
      };
  }
}

/** The error middy throws when a handler would outlive the function's remaining time. */
function isMiddyTimeout(e: unknown): boolean {
  return e instanceof Error && e.name === 'TimeoutError' && (e.cause as { package?: unknown } | undefined)?.package === '@middy/core';
}

/**
 * First in every chain: assigns the request id, and (its onError runs last) turns every
 * error into the flavor's envelope. Unknown errors become a 500 that leaks nothing.
 */
export function errorEnvelope(flavor: Flavor): HttpMiddleware {
  return {
    before: (req) => {
      metrics.addMetric('Requests', MetricUnit.Count, 1);
      const requestId = UUID.test(req.context.awsRequestId ?? '') ? req.context.awsRequestId : randomUUID();
      req.context.state = { requestId, tenant: '', scopes: [], body: undefined, query: undefined, params: undefined, idempotencyKey: undefined };
    },
    onError: (req) => {
      const requestId = req.context.state?.requestId ?? randomUUID();
      const e = req.error;
      let apiError: ApiError;
      // A table call refused at the deadline (shared/deadline.ts), in the few ms before middy's own answer: the same timeout.
      if (isMiddyTimeout(e) || e instanceof DeadlinePassed) {
        // The function's time ran out (middy stops just before Lambda would): a clear, retryable error.
        logger.warn('request timed out', { requestId });
        apiError = new ApiError('api_error', 'timeout', 'The request took too long and was stopped. Retry it; if it persists, quote the request_id.', { status: 503 });
      } else {
        const mapped = apiErrorOf(e);
        if (!mapped) logger.error('unhandled error', { requestId, error: e as Error });
        // A 5xx the mapping anticipated (a service refusing for load): told where operators look, as a warning.
        else if (mapped.status >= 500) logger.warn(`answered ${mapped.status} ${mapped.code}`, { requestId, error: e as Error });
        apiError = mapped ?? new ApiError('api_error', 'internal_error', 'An unexpected error occurred. Retry later, quoting the request_id.');
      }
      metrics.addMetric(apiError.status >= 500 ? 'ServerErrors' : 'ClientErrors', MetricUnit.Count, 1);
      req.response = errorResponse(flavor, apiError, requestId);
    },
  };
}

/** An error as the flavor's API answers it: its status, the envelope, and the headers it calls for. */
export function errorResponse(flavor: Flavor, apiError: ApiError, requestId: string): HttpResult {
  const headers = { ...baseHeaders(flavor, requestId), ...apiError.headers };
  // A browser reads Retry-After (no CORS-safelisted header) only when it is exposed: the Core API's 503 `unavailable` as its 429.
  const exposed = headers['access-control-expose-headers'];
  if (headers['retry-after'] !== undefined && exposed !== undefined && !/\bretry-after\b/i.test(exposed)) headers['access-control-expose-headers'] = `${exposed}, Retry-After`;
  // The challenge a 401 carries (RFC 7235): the token endpoint takes Basic, the APIs a Bearer token or key (RFC 6750 §3),
  // unless the error names its own (a token sent and refused: `Bearer error="invalid_token"`, RFC 6750 §3.1).
  if (apiError.status === 401) headers['www-authenticate'] ??= flavor === 'oauth' ? 'Basic realm="oauth2"' : 'Bearer';
  return { statusCode: apiError.status, headers, body: JSON.stringify(errorBody(flavor, apiError, requestId)) };
}

/**
 * How deep a request body may nest (the body itself is level 1). Stored JSON values allow 32
 * levels, checked precisely by the schemas; this bound only keeps every recursive walk after it
 * (zod, the DynamoDB marshaller, JSON.stringify) far from the stack's limit.
 */
export const MAX_BODY_DEPTH = 64;

interface Visit {
  value: unknown;
  level: number;
  key: string;
  parent: Visit | undefined;
}

function pathOf(v: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | undefined = v; at?.parent; at = at.parent) keys.push(at.key);
  return keys.length === 0 ? 'body' : keys.reverse().join('.');
}

/**
 * Half of a UTF-16 surrogate pair alone, which JSON's escapes can write ("\ud800") but no text
 * holds: stored as UTF-8 it becomes U+FFFD, so two user ids sent so would become one user.
 */
const LONE_SURROGATE = /\p{Cs}/u;
const notText = (at: string) => {
  const message = 'A string holds half of a UTF-16 surrogate pair alone (an escape \\ud800-\\udfff without its other half): it is no text.';
  return new ValidationError(message, { [at]: [message] });
};

/**
 * Walks a parsed body without recursion: too deep a nesting, an object key `__proto__` (which
 * every object rebuilt by assignment, as zod does, turns into the prototype instead of a key) or
 * a lone surrogate in a string or key is the 400 here, before anything walks the body recursively.
 */
export function checkBodyShape(body: unknown): void {
  const stack: Visit[] = [{ value: body, level: 1, key: '', parent: undefined }];
  for (let v = stack.pop(); v; v = stack.pop()) {
    const { value, level } = v;
    if (typeof value === 'string' && LONE_SURROGATE.test(value)) throw notText(pathOf(v));
    if (value === null || typeof value !== 'object') continue;
    if (level > MAX_BODY_DEPTH) {
      const message = `The request body nests more than ${MAX_BODY_DEPTH} levels deep.`;
      throw new ValidationError(message, { [pathOf(v)]: [message] });
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], level: level + 1, key: String(i), parent: v });
      continue;
    }
    const keys = Object.keys(value);
    const odd = keys.find((k) => LONE_SURROGATE.test(k));
    if (odd !== undefined) throw notText(pathOf({ value: undefined, level, key: odd, parent: v }));
    if (keys.includes('__proto__')) {
      const at = pathOf({ value: undefined, level, key: '__proto__', parent: v });
      throw new ValidationError('Invalid request body.', { [at]: ['__proto__ is not allowed as a field name.'] });
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      stack.push({ value: (value as Record<string, unknown>)[key], level: level + 1, key, parent: v });
    }
  }
}

/**
 * Whether a `Content-Encoding` names no coding but identity: a list (RFC 9110 §8.4, §5.6.1; a
 * header sent twice arrives as one, joined by commas, from API Gateway and from the local server)
 * whose elements, any case, with whitespace around the commas, are each `identity` or empty
 * (until 2026-12-07 `identity, identity` was refused as compressed).
 */
const identityOnly = (encoding: string): boolean => encoding.split(',').every((c) => /^[ \t]*(?:identity)?[ \t]*$/i.test(c));

/**
 * The body's JSON text: a body sent compressed (a `Content-Encoding` other than identity, which
 * neither API Gateway's HTTP API nor the local server decodes) is refused saying so, where its
 * bytes would be told they are no UTF-8 or no JSON; a byte order mark before it is ignored, as
 * RFC 8259 §8.1 lets a parser do (a text editor's or PowerShell's UTF-8 file starts with one).
 * The local token endpoint reads its form body so too (a compressed one told so, in its codes).
 */
export function bodyText(event: HttpEvent): string | undefined {
  const encoding = header(event, 'content-encoding')?.trim().toLowerCase();
  if (encoding && !identityOnly(encoding) && event.body)
    throw new InvalidJson(`The request body is sent compressed (Content-Encoding: ${encoding.slice(0, 40)}), which this API does not read: send it uncompressed.`);
  const raw = rawBody(event);
  return raw?.startsWith('\uFEFF') ? raw.slice(1) : raw;
}

/** The 413 of a body over the size limit (`MAX_BODY_BYTES`), blank or not. */
function withinLimit(raw: string | undefined): void {
  const max = config().maxBodyBytes;
  if (raw !== undefined && Buffer.byteLength(raw) > max) throw new PayloadTooLarge(max);
}

/**
 * No body: none, or only JSON's whitespace (space, tab, CR, LF). Other blanks (a form feed, a
 * no-break space, U+2028) are no JSON, so `invalid_json` (until 2026-12-07 they read as no body,
 * as String.prototype.trim reads them: `parameter_missing`).
 */
const blank = (raw: string | undefined): raw is undefined => raw === undefined || /^[ \t\r\n]*$/.test(raw);

/** A request body within the size limit as JSON; undefined when there is none (absent or blank). */
function parsedBody(raw: string | undefined): unknown {
  withinLimit(raw);
  if (blank(raw)) return undefined;
  try {
    // V8 parses iteratively: any depth that fits the size limit parses without overflowing.
    return JSON.parse(raw);
  } catch {
    throw new InvalidJson();
  }
}

/** Parses the JSON body (and checks its shape, see checkBodyShape); a route with a body schema requires one. */
export function jsonBody(): HttpMiddleware {
  return {
    before: (req) => {
      const body = parsedBody(bodyText(req.event));
      if (body === undefined) throw new ParameterMissing('A JSON request body is required.');
      checkBodyShape(body);
      req.context.state.body = body;
    },
  };
}

/**
 * A route that takes no body: none, a blank one or `{}` is fine; anything else is refused as a
 * body with a field would be (unknown fields are 400, Stripe-style), not ignored, and a body that
 * is not JSON is 400 `invalid_json`.
 */
export function noBody(): HttpMiddleware {
  return {
    before: (req) => {
      const raw = bodyText(req.event);
      // Blank is no body, but one over the limit is 413 as any other (until 2026-12-07 2 MiB of
      // spaces was taken as none: a DELETE so sent answered 200, where `{}` and as many spaces was 413).
      withinLimit(raw);
      if (blank(raw)) return;
      const body = parsedBody(raw);
      if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
        const keys = Object.keys(body);
        if (keys.length === 0) return;
        throw new ValidationError('Invalid request body.', Object.fromEntries(keys.slice(0, 20).map((k) => [k, ['Unknown field.']])));
      }
      throw new ValidationError('Invalid request body.', { body: ['This route takes no request body.'] });
    },
  };
}

/** A middy chain that starts with Powertools (trace, log context, metrics flush) and the envelope. */
export function baseChain(flavor: Flavor) {
  const chain = middy<HttpEvent, HttpResult, Error, ApiContext>();
  // Responses hold plaintext keys, client secrets and tenant data: never X-Ray metadata (and see
  // observability.ts for errors). Events hold bearer tokens and Basic credentials: never logged,
  // whatever POWERTOOLS_LOGGER_LOG_EVENT says.
  if (tracer) chain.use(captureLambdaHandler(tracer, { captureResponse: false }));
  chain.use(injectLambdaContext(logger, { logEvent: false }));
  // The local server runs many invocations at once in one process, which a per-invocation
  // metrics flush cannot serve; locally metrics are off anyway.
  if (config().observability.metrics) chain.use(logMetrics(metrics));
  return chain.use(errorEnvelope(flavor));
}
