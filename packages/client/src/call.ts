import { randomUUID } from 'node:crypto';
import { ApiError, type ErrorSource } from './errors.ts';

/** What openapi-fetch answers (its success/error union, loosened to what `unwrap` reads). */
export interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/**
 * What a successful call's HTTP answer said beside its body, as `lastResponse` on what the call
 * answers (Stripe's name): `item.lastResponse.requestId` is the `X-Request-Id` to quote about it.
 */
export interface ResponseInfo {
  /** `X-Request-Id` (null only when a proxy in between dropped it). */
  requestId: string | null;
  /** The HTTP status: 200, or 201 for a create. */
  statusCode: number;
  /** `Idempotent-Replayed: true`: the stored answer to an earlier call with this `Idempotency-Key`, nothing done again. */
  idempotentReplayed: boolean;
  headers: Headers;
}

/** A call's answer with its `lastResponse` (not enumerable: JSON, spreads and `Object.keys` leave it out). */
export type Answered<T> = T extends object ? T & { readonly lastResponse: ResponseInfo } : T;

/** `value` with `lastResponse` set to what `response` said (a primitive as it is). */
export function answered<T>(value: T, response: Response): Answered<T> {
  return withInfo(value, {
    requestId: response.headers.get('x-request-id'),
    statusCode: response.status,
    idempotentReplayed: response.headers.get('idempotent-replayed') === 'true',
    headers: response.headers,
  });
}

/** A part of an answer (a list's `data`, which a method answers alone) with the answer's `lastResponse`. */
export const answeredPart = <T>(part: T, whole: { readonly lastResponse: ResponseInfo }): Answered<T> => withInfo(part, whole.lastResponse);

function withInfo<T>(value: T, info: ResponseInfo): Answered<T> {
  if (typeof value === 'object' && value !== null) Object.defineProperty(value, 'lastResponse', { value: info, enumerable: false, configurable: true });
  return value as Answered<T>;
}

/** The data of a 2xx answer, with its `lastResponse`; an `ApiError` for anything else. */
export async function unwrap<D>(call: Promise<Answer<D>>, source: ErrorSource): Promise<Answered<D>> {
  const r = await call;
  if (!r.response.ok) throw ApiError.from(r.response, r.error, source);
  if (r.data === undefined) {
    throw new ApiError({ status: r.response.status, type: 'api_error', code: 'empty_response', message: 'The response had no body.', source, headers: r.response.headers });
  }
  return answered<D>(r.data, r.response);
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Per-call options of a create: the `Idempotency-Key` (a random UUID when not given) is sent on every attempt. */
export interface CreateOptions extends CallOptions {
  idempotencyKey?: string;
}

/** An `Idempotency-Key` as the API takes it (docs/api.md): 1-255 visible ASCII characters other than a comma. */
const IDEMPOTENCY_KEY = /^[\x21-\x2b\x2d-\x7e]{1,255}$/;
/** A create's `Idempotency-Key` header: `o.idempotencyKey`, or a new random UUID for this call (every attempt of it sends the same). */
export const idempotencyHeader = (o: CreateOptions | undefined) => {
  const key = o?.idempotencyKey ?? randomUUID();
  // Said before anything is sent (a letter beyond ASCII failed in fetch as "Cannot convert argument to a ByteString").
  if (!IDEMPOTENCY_KEY.test(key)) throw new TypeError(`idempotencyKey must be 1-255 visible ASCII characters other than a comma, not ${JSON.stringify(key.slice(0, 40))}`);
  return { 'Idempotency-Key': key };
};
