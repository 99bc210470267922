import type { MessagePort } from 'node:worker_threads';
import type { HttpHandlerOptions, HttpRequest, HttpResponse } from '@smithy/types';
import { dropLocalTransport, useLocalTransport, type LocalTransport } from '../shared/data/client.ts';
import { deniedCall } from './grants.ts';

/** How long a read waits for the dynalite thread's answer before it fails as timed out (and the SDK retries it). */
export const PORT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * How long a write (any operation but a read: `READ_OPERATIONS`) waits: what the SDK's DynamoDB
 * client waits on AWS (its default socket timeout, 300 s: client-dynamodb's runtime config). A
 * write failed as timed out is sent again by the SDK (and signed.ts) while the thread may still be
 * applying the first: an `ADD` counted twice (an id block skipped: counters.ts; a quota refund
 * given twice: quota.ts), a conditional put or a transaction failing on its own first attempt.
 * Under the reads' 30 s a busy machine could get there; on AWS only 5 minutes of silence does.
 */
export const PORT_WRITE_TIMEOUT_MS = 300_000;

/** The operations that change nothing, sent again after a time out without harm. */
const READ_OPERATIONS = new Set(
  ['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems', 'DescribeTable', 'ListTables', 'DescribeTimeToLive', 'ListTagsOfResource', 'DescribeLimits', 'DescribeEndpoints'].map(
    (op) => `DynamoDB_20120810.${op}`,
  ),
);

type Reply = { id: number; status: number; headers: Record<string, string>; body: string } | { id: number; error: string };

/**
 * The SDK's HTTP handler for the local stack's own threads: each request, serialised and signed
 * by the SDK as for any endpoint, goes over a MessagePort to the dynalite thread, which hands it
 * to dynalite's request handler (dynalite-thread.mjs). It replaces the loopback socket and the
 * HTTP parsing on both sides, the largest share of a small read's CPU locally; the SDK's
 * serialisation, signing, retries and error mapping run as they do against DynamoDB.
 */
export class PortHttpHandler implements LocalTransport {
  private readonly pending = new Map<number, { resolve: (r: { response: HttpResponse }) => void; reject: (e: Error) => void; settle: () => void }>();
  private next = 0;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly writeTimeoutMs: number;

  constructor(
    private readonly port: MessagePort,
    opts: { timeoutMs?: number; writeTimeoutMs?: number } = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? PORT_REQUEST_TIMEOUT_MS;
    this.writeTimeoutMs = opts.writeTimeoutMs ?? PORT_WRITE_TIMEOUT_MS;
    port.on('message', (m: Reply) => {
      const p = this.take(m.id);
      if (!p) return;
      if ('error' in m) p.reject(new Error(`local DynamoDB: ${m.error}`));
      else p.resolve({ response: { statusCode: m.status, headers: m.headers, body: Buffer.from(m.body) } });
    });
    port.on('close', () => {
      this.closed = true;
      for (const id of [...this.pending.keys()]) this.take(id)?.reject(new Error('local DynamoDB: the connection closed'));
    });
    port.unref();
  }

  /** The request `id` waits no more (answered, timed out or aborted): its waiter, if it still waited. */
  private take(id: number) {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    p.settle();
    if (this.pending.size === 0) this.port.unref();
    return p;
  }

  /**
   * A read the thread does not answer within `timeoutMs` (a write: `writeTimeoutMs`) fails as a
   * `TimeoutError` (which the SDK retries, as it retries a socket's timeout); one whose abort signal fires (a request's
   * deadline: shared/data/client.ts and signed.ts) fails then as an `AbortError`, as
   * NodeHttpHandler's does. A late answer is dropped. Until 2026-12-07 neither was honoured: a
   * thread that never answered held its caller, and the SDK's retries, for good.
   */
  handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
    if (this.closed) return Promise.reject(new Error('local DynamoDB: the connection closed'));
    // The SDK's signals are the platform's (cutAtDeadline's AbortSignal.any); an older kind, with only `onabort`, is not watched.
    const given = options?.abortSignal;
    const signal = given instanceof AbortSignal ? given : undefined;
    if (given?.aborted) return Promise.reject(aborted());
    const query = Object.entries(request.query ?? {}).flatMap(([k, v]) =>
      (Array.isArray(v) ? v : [v]).map((x) => (x === null ? encodeURIComponent(k) : `${encodeURIComponent(k)}=${encodeURIComponent(x)}`)),
    );
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(request.headers)) headers[k.toLowerCase()] = v;
    const body = utf8(request.body);
    // What the calling function's IAM role would refuse (local/grants.ts).
    const denied = deniedCall(headers['x-amz-target'], body);
    if (denied) return Promise.resolve(denied);
    return new Promise((resolve, reject) => {
      const id = this.next++;
      // A write waits longer (PORT_WRITE_TIMEOUT_MS): until 2026-12-07 it timed out as a read, and the SDK applied it again.
      const limit = READ_OPERATIONS.has(headers['x-amz-target'] ?? '') ? this.timeoutMs : this.writeTimeoutMs;
      const timer = setTimeout(() => this.take(id)?.reject(timedOut(limit)), limit);
      const onAbort = () => this.take(id)?.reject(aborted());
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      this.pending.set(id, { resolve, reject, settle });
      this.port.ref();
      this.port.postMessage({ id, method: request.method, path: request.path + (query.length ? `?${query.join('&')}` : ''), headers, body });
    });
  }

  /** The SDK's handler-configuration hooks: this handler has nothing to configure. */
  updateHttpClientConfig(): void {}

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {}
}

function timedOut(ms: number): Error {
  const e = new Error(`local DynamoDB: no answer within ${ms} ms`);
  e.name = 'TimeoutError';
  return e;
}

function aborted(): Error {
  const e = new Error('local DynamoDB: the request was aborted');
  e.name = 'AbortError';
  return e;
}

/**
 * The request body as text. The SDK's JSON bodies are bytes whose `valueOf` is a (deprecated)
 * string view, which `Buffer.from(body)` would call: read the bytes in place instead.
 */
export function utf8(body: unknown): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  throw new Error('local DynamoDB: unsupported request body (a stream)');
}

/** This thread's tables on `endpoint` (the local dynalite) talk to it over `port` until it closes. */
export function useDynamoPort(endpoint: string, port: MessagePort): void {
  const handler = new PortHttpHandler(port);
  useLocalTransport(endpoint, handler);
  port.once('close', () => dropLocalTransport(endpoint, handler));
}
