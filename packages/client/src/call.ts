import { randomUUID } from 'node:crypto';
import { ApiError, type ErrorSource } from './errors.ts';

/** What openapi-fetch answers (its success/error union, loosened to what `unwrap` reads). */
export interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** The data of a 2xx answer; an `ApiError` for anything else. */
export async function unwrap<D>(call: Promise<Answer<D>>, source: ErrorSource): Promise<D> {
  const r = await call;
  if (!r.response.ok) throw ApiError.from(r.response, r.error, source);
  if (r.data === undefined) {
    throw new ApiError({ status: r.response.status, type: 'api_error', code: 'empty_response', message: 'The response had no body.', source, headers: r.response.headers });
  }
  return r.data;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Per-call options of a create: the `Idempotency-Key` (a random UUID when not given) is sent on every attempt. */
export interface CreateOptions extends CallOptions {
  idempotencyKey?: string;
}

/** An `Idempotency-Key` as the API takes it (docs/api.md): 1-255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** A create's `Idempotency-Key` header: `o.idempotencyKey`, or a new random UUID for this call (every attempt of it sends the same). */
export const idempotencyHeader = (o: CreateOptions | undefined) => {
  const key = o?.idempotencyKey ?? randomUUID();
  // Said before anything is sent (a letter beyond ASCII failed in fetch as "Cannot convert argument to a ByteString").
  if (!IDEMPOTENCY_KEY.test(key)) throw new TypeError(`idempotencyKey must be 1-255 visible ASCII characters, not ${JSON.stringify(key.slice(0, 40))}`);
  return { 'Idempotency-Key': key };
};
