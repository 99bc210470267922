/**
 * The fetch every client call goes through: bearer credentials, retries with backoff, and (Core)
 * one token re-fetch on a 401.
 *
 * What is retried:
 * - 429: always (a 429 stores nothing), after `Retry-After` seconds when the answer gives them.
 * - Network errors, 500, 502, 503, 504: only when the request is safe to repeat: GET, HEAD,
 *   OPTIONS, PUT, a request carrying an `Idempotency-Key` (the server answers a repeat with
 *   the first answer and writes nothing), or one the client marks safe (reads sent as POST, such
 *   as search). Never a POST or PATCH without a key, nor a DELETE: its first attempt may have
 *   deleted, and a repeat would then answer 404 (or an erasure 0 events) for a call that worked.
 * - 409 `idempotency_key_in_use` (the first attempt is still running): retried, same key.
 * - 409 `changed_meanwhile` (the record kept changing under the server's own tries; nothing was
 *   written, and docs/api.md says retry): retried as a 429 is, whatever the method.
 * Every attempt of one call re-sends the same body and headers, so the same `Idempotency-Key`.
 * A `Retry-After` longer than `maxRetryAfterMs` is not waited for: the answer is returned.
 *
 * Each attempt ends after `timeoutMs` (default 60 s) without a complete answer: a connection that
 * hangs is then treated as a network error (retried when safe), and the last attempt's timeout is
 * thrown as a `TimeoutError` (a `DOMException`, as `AbortSignal.timeout` raises it).
 */

/** The fetch the client needs (`globalThis.fetch` fits; a test may wrap it). */
export type FetchLike = (input: Request) => Promise<Response>;

/** How long one attempt may take, answer read included, unless the client says otherwise (Stripe's clients wait 80 s). */
export const DEFAULT_TIMEOUT_MS = 60_000;

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** First backoff (default 250 ms), doubled per attempt, with full jitter. */
  baseDelayMs?: number;
  /** Longest backoff between attempts (default 8 s). */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the answer is returned (default 60 s). */
  maxRetryAfterMs?: number;
  /**
   * How long a keyed request waits, asking about once a second, while its key's first attempt
   * still holds the key (409 `idempotency_key_in_use`), before that 409 is returned (default 30 s:
   * an attempt runs at most 29 s behind API Gateway). One cut off by a crashed container holds its
   * key up to 120 s: 125_000 waits that out too.
   */
  inUseWaitMs?: number;
}

/** Whether a request may be repeated after a network error or 5xx. `auto`: decided from method and `Idempotency-Key`. */
export type RetryMode = 'auto' | 'safe' | 'unsafe';

export interface Authorizer {
  /** The bearer credential to send; waiting for it ends when `signal` aborts. */
  token(signal?: AbortSignal | null): Promise<string>;
  /** Called on a 401 with the token that was refused; answers whether a retry with a new token makes sense. */
  invalidate?(refused: string): boolean;
}

const RETRY_STATUSES = new Set([500, 502, 503, 504]);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT']);

export const sleep = (ms: number, signal?: AbortSignal | null): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * `Retry-After` as milliseconds: whole seconds or an HTTP date; undefined when absent or unreadable.
 * An HTTP date names its day and month in letters; a value without any (`1.5`, `-1`) is neither
 * form, where Date.parse reads "1.5" as a date in 2001 (no wait at all: until 2026-12-08).
 */
export function retryAfterMs(h: string | null, now = Date.now()): number | undefined {
  if (h === null || h.trim() === '') return undefined;
  if (/^\d+$/.test(h.trim())) return Number(h.trim()) * 1000;
  if (!/[a-z]/i.test(h)) return undefined;
  const at = Date.parse(h);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class Transport {
  readonly fetch: FetchLike;
  private readonly maxRetries: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly inUseWaitMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly opts: {
      fetch?: FetchLike | undefined;
      retry?: RetryOptions | false | undefined;
      auth?: Authorizer | undefined;
      userAgent?: string;
      /** Each attempt's limit in milliseconds, answer read included (default 60 s; 0: none). */
      timeoutMs?: number | undefined;
    },
  ) {
    const r = opts.retry === false ? { maxRetries: 0 } : (opts.retry ?? {});
    this.maxRetries = r.maxRetries ?? 3;
    this.baseDelayMs = r.baseDelayMs ?? 250;
    this.maxDelayMs = r.maxDelayMs ?? 8000;
    this.maxRetryAfterMs = r.maxRetryAfterMs ?? 60_000;
    this.inUseWaitMs = r.inUseWaitMs ?? IN_USE_WAIT_MS;
    // NaN would compare false for ever: a keyed request would wait on a held key without end.
    for (const [name, v] of Object.entries({
      maxRetries: this.maxRetries,
      baseDelayMs: this.baseDelayMs,
      maxDelayMs: this.maxDelayMs,
      maxRetryAfterMs: this.maxRetryAfterMs,
      inUseWaitMs: this.inUseWaitMs,
    }))
      if (!(Number.isFinite(v) && v >= 0)) throw new TypeError(`retry.${name} must be a finite number, 0 or more, not ${v}`);
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(Number.isFinite(timeoutMs) && timeoutMs >= 0)) throw new TypeError(`timeoutMs must be a finite number of milliseconds, 0 or more (0: no limit), not ${timeoutMs}`);
    this.timeoutMs = timeoutMs;
    this.fetch = (req) => this.send(req, 'auto');
  }

  /** A fetch for one call with its retry mode (openapi-fetch's per-request `fetch` option). */
  fetchWith(mode: RetryMode): FetchLike {
    return (req) => this.send(req, mode);
  }

  /** The longest wait before retry `attempt` (0-based): the base doubled per attempt, at most the maximum. */
  private cap(attempt: number): number {
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** attempt);
  }

  /** Full jitter: anywhere from 0 to the cap, so that clients failing together do not retry together. */
  private backoff(attempt: number): number {
    return Math.round(Math.random() * this.cap(attempt));
  }

  async send(request: Request, mode: RetryMode = 'auto'): Promise<Response> {
    const impl: FetchLike = this.opts.fetch ?? ((r) => globalThis.fetch(r));
    // Read the body once: every attempt sends the same bytes.
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const safe = mode === 'safe' || (mode === 'auto' && (SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key')));
    const keyed = request.headers.has('idempotency-key');
    const auth = this.opts.auth;
    let reauthorized = false;
    let inUseSince: number | undefined;
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers(request.headers);
      let token: string | undefined;
      if (auth) {
        token = await auth.token(request.signal);
        headers.set('authorization', `Bearer ${token}`);
      }
      if (this.opts.userAgent && !headers.has('user-agent')) headers.set('user-agent', this.opts.userAgent);
      // The attempt's own limit beside the caller's signal; the timer does not keep the process alive.
      const timeout = this.timeoutMs > 0 ? AbortSignal.timeout(this.timeoutMs) : undefined;
      const signal = timeout ? AbortSignal.any([request.signal, timeout]) : request.signal;
      const init: RequestInit = { method: request.method, headers, signal, redirect: request.redirect };
      if (body !== undefined) init.body = body;
      let res: Response;
      try {
        const answered = await untilAborted(impl(new Request(request.url, init)), signal);
        // The whole answer within the attempt: a body that stalls is the attempt's timeout (named,
        // and retried when safe), not a raw abort of the caller's later read (until 2026-12-05).
        const bytes = await untilAborted(answered.arrayBuffer(), signal);
        res = new Response(NULL_BODY.has(answered.status) ? null : bytes, { status: answered.status, statusText: answered.statusText, headers: answered.headers });
      } catch (err) {
        if (request.signal.aborted) throw err;
        const failure = timeout?.aborted ? new DOMException(`${request.method} ${new URL(request.url).pathname}: no answer within ${this.timeoutMs} ms (timeoutMs)`, 'TimeoutError') : err;
        if (!safe || attempt >= this.maxRetries) throw failure;
        await sleep(this.backoff(attempt), request.signal);
        continue;
      }
      // An expired or revoked token: one new token, one more try (a 401 wrote nothing).
      if (res.status === 401 && auth && token !== undefined && !reauthorized && (auth.invalidate?.(token) ?? false)) {
        reauthorized = true;
        await res.body?.cancel();
        attempt--;
        continue;
      }
      const conflict = res.status === 409 ? await conflictOf(res) : undefined;
      if (conflict === 'in_use' && keyed && this.maxRetries > 0) {
        // The key's first attempt still runs: its answer comes once it ends (a function runs at
        // most 29 s behind API Gateway), so this waits for it, about a second at a time, up to
        // `inUseWaitMs`, whatever retries came before (until 2026-12-05 three backoffs, 1.75 s at most).
        inUseSince ??= Date.now();
        if (Date.now() - inUseSince >= this.inUseWaitMs) return res;
        await res.body?.cancel();
        await sleep(IN_USE_POLL_MS / 2 + Math.round(Math.random() * IN_USE_POLL_MS), request.signal);
        attempt--;
        continue;
      }
      if (attempt >= this.maxRetries) return res;
      let retry = false;
      let wait = this.backoff(attempt);
      if (conflict === 'changed_meanwhile') {
        // Nothing written (a 409 of the server's own optimistic retries): another try may find the
        // record settled. Until 2026-12-08 thrown, though the API's answer says "retry".
        retry = true;
      } else if (res.status === 429) {
        retry = true;
        const after = retryAfterMs(res.headers.get('retry-after'));
        if (after !== undefined) {
          if (after > this.maxRetryAfterMs) return res;
          // Not before the server says; then spread as a backoff would be, so that clients
          // refused together do not all come back in the same instant.
          wait = after + this.backoff(attempt);
        }
      } else if (RETRY_STATUSES.has(res.status)) {
        retry = safe;
        const after = retryAfterMs(res.headers.get('retry-after'));
        // As for a 429: a server that asks for a longer wait than the client takes gets its answer back, not an early retry.
        if (retry && after !== undefined) {
          if (after > this.maxRetryAfterMs) return res;
          wait = Math.max(wait, after);
        }
      }
      if (!retry) return res;
      await res.body?.cancel();
      await sleep(wait, request.signal);
    }
  }
}

/** `p`, or the signal's reason as soon as it is aborted (`p` goes on): a fetch given as an option, or a token request, may not heed the signal. */
export function untilAborted<T>(p: Promise<T>, signal?: AbortSignal | null): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * Which retryable conflict a 409 is: `in_use`, the Idempotency-Key's first request still runs;
 * `changed_meanwhile`, the record kept changing while the server tried (nothing written). The Core
 * envelope's code (`idempotency_key_in_use`, `changed_meanwhile`), or the Platform envelope's
 * message (it has no code; until 2026-12-05 a Platform create's in-use 409 was not recognised, and
 * the caller got a 409 for a create that succeeded).
 */
async function conflictOf(res: Response): Promise<'in_use' | 'changed_meanwhile' | undefined> {
  try {
    const b: unknown = await res.clone().json();
    if (typeof b !== 'object' || b === null || !('error' in b)) return undefined;
    const e = b.error;
    if (typeof e === 'string') return PLATFORM_IN_USE.test(e) ? 'in_use' : PLATFORM_CHANGED_MEANWHILE.test(e) ? 'changed_meanwhile' : undefined;
    const code = typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
    return code === 'idempotency_key_in_use' ? 'in_use' : code === 'changed_meanwhile' ? 'changed_meanwhile' : undefined;
  } catch {
    return undefined;
  }
}

/** The Platform API's message for a key whose first request still runs (shared/http/idempotency.ts). */
const PLATFORM_IN_USE = /^A request with this Idempotency-Key is still being processed/;
/** The Platform API's message for a 409 `changed_meanwhile` (`Rule 12 kept changing meanwhile; retry.`: shared/control/records.ts, shared/domain). */
const PLATFORM_CHANGED_MEANWHILE = / kept changing meanwhile; retry\.$/;
/** How long a keyed request waits for its key's first attempt to end (409 idempotency_key_in_use) by default, and about how often it asks. */
export const IN_USE_WAIT_MS = 30_000;
const IN_USE_POLL_MS = 1000;
/** Statuses whose answer has no body (a Response with one would be refused). */
const NULL_BODY = new Set([101, 204, 205, 304]);
