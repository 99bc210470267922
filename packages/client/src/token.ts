import { ApiError } from './errors.ts';
import type { components } from './schema.ts';
import { untilAborted, type Authorizer, type Transport } from './transport.ts';

type AccessToken = components['schemas']['AccessToken'];

export interface TokenOptions {
  /** The token endpoint (default `<baseUrl>/oauth2/token`; the spec's `{auth_url}/oauth2/token`). */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Scopes to ask for (space-separated or a list); default: every scope of the client. */
  scope?: string | string[] | undefined;
  /**
   * Refresh this long before expiry. Default: 10 % of the token's lifetime, at least 1 s and at
   * most 60 s (60 s for the default 3600 s tokens; 1 s for 5 s tokens). A token is kept at least
   * a quarter of its lifetime whatever the margin (one longer than the token lives would otherwise
   * have every call fetch another token). A finite number (negative: only once expired).
   */
  refreshMarginMs?: number | undefined;
  /** The clock (tests). */
  now?: () => number;
}

interface Cached {
  token: string;
  /** When the token stops being accepted, by our clock (conservative). */
  expiresAt: number;
  /** When to fetch the next one. */
  refreshAt: number;
}

/**
 * Client-credentials access tokens: fetched with HTTP Basic and a form body, cached, replaced
 * before they expire (per the spec: compute `expires_at` from `expires_in`, refresh before
 * expiry), one token request at a time however many calls wait for it.
 */
/** How long after a failed early refresh the next is tried (the token in hand still works meanwhile). */
const REFRESH_RETRY_MS = 5000;

export class TokenManager implements Authorizer {
  private cached: Cached | undefined;
  private pending: Promise<Cached> | undefined;
  /** No early refresh before this (one failed: `REFRESH_RETRY_MS`). */
  private retryRefreshAt = 0;
  private readonly now: () => number;
  /** How many tokens were fetched (for tests and metrics). */
  fetches = 0;

  constructor(
    private readonly transport: Transport,
    private readonly opts: TokenOptions,
  ) {
    this.now = opts.now ?? Date.now;
    // NaN would make every token due for refresh at once: a token request beside every call.
    if (opts.refreshMarginMs !== undefined && !Number.isFinite(opts.refreshMarginMs)) throw new TypeError(`refreshMarginMs must be a finite number of milliseconds, not ${opts.refreshMarginMs}`);
  }

  /**
   * The token to send. Past `refreshAt` a token still accepted is sent while a new one is fetched
   * beside the call (a failed refresh fails no call: it is tried again `REFRESH_RETRY_MS` later,
   * until the token expires); without one, callers wait for the one shared request, each as long as
   * its own `signal` lets it (the request goes on for the others).
   */
  async token(signal?: AbortSignal | null): Promise<string> {
    signal?.throwIfAborted();
    const c = this.cached;
    const now = this.now();
    if (c && now < c.refreshAt) return c.token;
    if (c && now < c.expiresAt) {
      if (!this.pending && now >= this.retryRefreshAt) {
        this.refresh().catch(() => {
          this.retryRefreshAt = this.now() + REFRESH_RETRY_MS;
        });
      }
      return c.token;
    }
    return (await untilAborted(this.pending ?? this.refresh(), signal)).token;
  }

  /** The one token request (shared by every caller while it runs). */
  private refresh(): Promise<Cached> {
    const p = this.fetchToken().finally(() => {
      if (this.pending === p) this.pending = undefined;
    });
    this.pending = p;
    return p;
  }

  /** Forgets a token the server refused; answers true when a retry with a new token makes sense. */
  invalidate(refused: string): boolean {
    if (this.cached?.token === refused) this.cached = undefined;
    return true;
  }

  /** The cached token's expiry (ms since the epoch), if any. */
  get expiresAt(): number | undefined {
    return this.cached?.expiresAt;
  }

  private async fetchToken(): Promise<Cached> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    const scope = Array.isArray(this.opts.scope) ? this.opts.scope.join(' ') : this.opts.scope;
    if (scope) form.set('scope', scope);
    const basic = Buffer.from(`${encodeURIComponent(this.opts.clientId)}:${encodeURIComponent(this.opts.clientSecret)}`).toString('base64');
    const started = this.now();
    const res = await this.transport.send(
      new Request(this.opts.tokenUrl, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
      }),
      // A repeated client-credentials grant only issues another token.
      'safe',
    );
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    if (!res.ok) throw ApiError.from(res, body, 'oauth');
    if (!isAccessToken(body))
      throw new ApiError({
        status: res.status,
        type: 'api_error',
        code: 'invalid_token_response',
        message: 'The token endpoint answered no usable access_token.',
        source: 'oauth',
        // Without the tokens it may hold: an error is printed and logged (until 2026-12-05 it held them).
        body: withoutTokens(body),
        headers: res.headers,
      });
    this.fetches++;
    const lifetime = body.expires_in * 1000;
    // Expiry is a whole second (JWT exp), so a token may stop working up to 1 s before
    // started + expires_in; counted from when the request started, not when it ended.
    const expiresAt = started + lifetime - Math.min(1000, lifetime / 2);
    const margin = this.opts.refreshMarginMs ?? Math.min(60_000, Math.max(1000, lifetime / 10));
    // Not before a quarter of the token's life has passed: a margin as long as the token lives
    // (60 s asked of 5 s tokens) made every token due at once, and each call fetched another
    // (until 2026-12-08).
    const refreshAt = Math.max(expiresAt - margin, started + (expiresAt - started) / 4);
    const cached: Cached = { token: body.access_token, expiresAt, refreshAt };
    this.cached = cached;
    return cached;
  }
}

function isAccessToken(v: unknown): v is AccessToken {
  return typeof v === 'object' && v !== null && 'access_token' in v && typeof v.access_token === 'string' && 'expires_in' in v && typeof v.expires_in === 'number' && v.expires_in > 0;
}

/** A token answer with its tokens masked, for an error to carry. */
function withoutTokens(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...body };
  for (const k of ['access_token', 'refresh_token', 'id_token']) if (k in out) out[k] = '[redacted]';
  return out;
}
