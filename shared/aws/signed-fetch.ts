import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, Checksum, HttpRequest, SourceData } from '@smithy/types';
import { withRetry } from '../retry.ts';
import { awsJsonError } from './json-error.ts';

/**
 * A small SigV4 HTTP client for the S3 calls the functions make (GetObject, PutObject,
 * DeleteObject of artifacts), the training worker's ECS RunTask (shared/recs/launcher.ts) and the
 * console's Cognito user calls (shared/console-auth/cognito.ts).
 * It is not a second signer: it signs with the SDK's own SignatureV4 and credential chain, and
 * sends with `fetch`. It is kept because it pays in bundle size, which `npm run bench:bundle`
 * measures: the S3 client (its model, checksums and endpoint rules) is ≈ 130 KB minified
 * (docs/benchmarks.md, "Bundle size and init"), on functions of 239-299 KB whose largest sit
 * 1-4 KB under their size budget; every function that reads an index or a model would carry it;
 * the Cognito client is as large, and every Platform function checks console sessions.
 * Every other service keeps its SDK client.
 */

/** SHA-256 / HMAC-SHA-256 on node:crypto, in the shape the signer asks for. */
class NodeSha256 implements Checksum {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(this.secret));
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

function toBytes(data: SourceData): Uint8Array {
  if (typeof data === 'string') return new TextEncoder().encode(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

export interface AwsEndpoint {
  /** `https://bucket.s3.eu-west-1.amazonaws.com`, or a local stand-in in tests. */
  url: string;
  region: string;
  /** The signing name, e.g. `s3`. */
  service: string;
  /** S3 signs the path as sent (no second escaping); every other service escapes it again. */
  s3?: boolean;
}

export interface AwsCallOptions {
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Attempts for throttling, 5xx and network errors (default 3), with jittered backoff. */
  maxAttempts?: number;
}

/** A non-2xx answer: the HTTP status and the AWS error code (`NoSuchKey`, `ThrottlingException`). */
export class AwsHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${code} (HTTP ${status}): ${message}`);
    this.name = 'AwsHttpError';
  }
}

/** S3's codes for a call worth retrying, and the JSON protocols' throttling (ECS, Cognito: HTTP 400). */
const RETRYABLE_CODES = new Set(['SlowDown', 'RequestTimeout', 'ServiceUnavailable', 'InternalError', 'ThrottlingException', 'TooManyRequestsException']);

/** The error code and message of a failed call, from S3's XML error body (or a JSON protocol's `__type` and `message`). */
async function errorOf(res: Response): Promise<AwsHttpError> {
  const text = await res.text().catch(() => '');
  const json = text.startsWith('{') ? awsJsonError(text) : undefined;
  if (json) return new AwsHttpError(res.status, json.code || `Http${res.status}`, json.message || res.statusText);
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? '';
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? '';
  return new AwsHttpError(res.status, code || `Http${res.status}`, message || res.statusText);
}

/** Cache of one: the container's credential chain, shared by every client of this module. */
let lambdaCredentials: AwsCredentialIdentityProvider | undefined;

export class AwsClient {
  private readonly signer: SignatureV4;
  private readonly base: URL;
  private readonly maxAttempts: number;

  constructor(
    readonly endpoint: AwsEndpoint,
    options: AwsCallOptions = {},
  ) {
    this.base = new URL(endpoint.url);
    this.maxAttempts = options.maxAttempts ?? 3;
    this.signer = new SignatureV4({
      service: endpoint.service,
      region: endpoint.region,
      credentials: options.credentials ?? (lambdaCredentials ??= defaultProvider()),
      sha256: NodeSha256,
      uriEscapePath: !endpoint.s3,
      applyChecksum: true,
    });
  }

  /**
   * Signs and sends one request; `path` is already URI-encoded. Retries throttling, 5xx and
   * network failures; any other non-2xx answer throws an AwsHttpError. Once `signal` is aborted
   * no attempt (a retry included) is sent, and the one in flight is abandoned (its answer, body
   * included, is not waited for: until 2026-12-06 a call whose answer never came held its caller
   * past the request's 503): its reason is thrown. `onFailure` is told each failed attempt's error
   * (an AwsHttpError, or the network's), the retried ones too: a caller that must know what every
   * attempt met (ECS RunTask: whether any may have started a task) reads them there.
   */
  async send(
    method: 'GET' | 'PUT' | 'DELETE' | 'POST',
    path: string,
    init: { headers?: Record<string, string>; body?: Uint8Array | string; signal?: AbortSignal | undefined; onFailure?: (failure: unknown) => void } = {},
  ): Promise<Response> {
    const body = typeof init.body === 'string' ? new TextEncoder().encode(init.body) : init.body;
    return withRetry<Response>({ attempts: this.maxAttempts, baseMs: 100, jitter: 'full' }, async () => {
      init.signal?.throwIfAborted();
      const request: HttpRequest = {
        method,
        protocol: this.base.protocol,
        hostname: this.base.hostname,
        ...(this.base.port ? { port: Number(this.base.port) } : {}),
        path: `${this.base.pathname.replace(/\/$/, '')}${path}`,
        query: {},
        headers: { host: this.base.host, ...(body ? { 'content-length': String(body.byteLength) } : {}), ...init.headers },
        body,
      };
      const signed = await this.signer.sign(request);
      let res: Response | undefined;
      let failure: unknown;
      try {
        const headers = Object.fromEntries(Object.entries(signed.headers).filter(([k]) => k !== 'host' && k !== 'content-length'));
        res = await fetch(`${this.base.origin}${signed.path}`, { method, headers, ...(body ? { body } : {}), ...(init.signal ? { signal: init.signal } : {}) });
      } catch (e) {
        init.signal?.throwIfAborted();
        failure = e;
      }
      if (res?.ok) return { value: res };
      const error = res ? await errorOf(res) : failure;
      // An error answer whose body the abort cut off reads as empty (no code): not the service's
      // answer, the abort's (until 2026-12-06 a Cognito 400 cut so was thrown as Http400, a 500).
      init.signal?.throwIfAborted();
      init.onFailure?.(error);
      return { failure: error, retryable: !res || res.status >= 500 || res.status === 429 || (error instanceof AwsHttpError && RETRYABLE_CODES.has(error.code)) };
    });
  }
}

/** `a/b c` → `/a/b%20c`: each key segment encoded once (RFC 3986), as S3 expects of a signed path. */
export function encodeKeyPath(key: string): string {
  const segment = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `/${key.split('/').map(segment).join('/')}`;
}
