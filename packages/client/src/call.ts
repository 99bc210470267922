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
