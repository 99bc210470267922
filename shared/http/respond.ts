import { config } from '../config.ts';
import type { Flavor, HttpResult } from './types.ts';

export const OK = 200;
export const CREATED = 201;
export const ACCEPTED = 202;
export const NO_CONTENT = 204;

/** A handler's answer: status and JSON body. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export const ok = (body: unknown): Reply => ({ status: OK, body });
export const created = (body: unknown): Reply => ({ status: CREATED, body });
export const accepted = (body: unknown): Reply => ({ status: ACCEPTED, body });
/** A create whose answer holds a secret shown once (an API key, a client secret): no cache may keep it. */
export const createdSecret = (body: unknown): Reply => ({ status: CREATED, body, headers: { 'cache-control': 'no-store' } });
/**
 * A Platform delete's answer: 200 with what was deleted, by the id it was addressed by, and
 * `deleted: true` (the spec: each Platform response is a JSON object; Stripe answers its deletes so).
 */
export const deleted = (ref: Readonly<Record<string, string | number>>): Reply => ok({ ...ref, deleted: true });

export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key';

/** Headers every response of a flavor carries. */
export function baseHeaders(flavor: Flavor, requestId: string): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': requestId };
  if (flavor === 'core') {
    h['access-control-allow-origin'] = config().corsAllowOrigin;
    h['access-control-expose-headers'] = 'X-Request-Id, Idempotent-Replayed';
  }
  // RFC 6749 §5.1: a token response is never cached (Pragma for HTTP/1.0 caches).
  if (flavor === 'oauth') Object.assign(h, { 'cache-control': 'no-store', pragma: 'no-cache' });
  return h;
}

export function toResult(flavor: Flavor, requestId: string, r: Reply): HttpResult {
  const headers = { ...baseHeaders(flavor, requestId), ...r.headers };
  // No body (204): no content type either.
  if (r.body === undefined) delete headers['content-type'];
  return { statusCode: r.status, headers, body: r.body === undefined ? '' : JSON.stringify(r.body) };
}
