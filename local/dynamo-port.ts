import type { MessagePort } from 'node:worker_threads';
import type { HttpRequest, HttpResponse } from '@smithy/types';
import { dropLocalTransport, useLocalTransport, type LocalTransport } from '../shared/data/client.ts';
import { deniedCall } from './grants.ts';

type Reply = { id: number; status: number; headers: Record<string, string>; body: string } | { id: number; error: string };

/**
 * The SDK's HTTP handler for the local stack's own threads: each request, serialised and signed
 * by the SDK as for any endpoint, goes over a MessagePort to the dynalite thread, which hands it
 * to dynalite's request handler (dynalite-thread.mjs). It replaces the loopback socket and the
 * HTTP parsing on both sides, the largest share of a small read's CPU locally; the SDK's
 * serialisation, signing, retries and error mapping run as they do against DynamoDB.
 */
export class PortHttpHandler implements LocalTransport {
  private readonly pending = new Map<number, { resolve: (r: { response: HttpResponse }) => void; reject: (e: Error) => void }>();
  private next = 0;
  private closed = false;

  constructor(private readonly port: MessagePort) {
    port.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) port.unref();
      if ('error' in m) p.reject(new Error(`local DynamoDB: ${m.error}`));
      else p.resolve({ response: { statusCode: m.status, headers: m.headers, body: Buffer.from(m.body) } });
    });
    port.on('close', () => {
      this.closed = true;
      for (const p of this.pending.values()) p.reject(new Error('local DynamoDB: the connection closed'));
      this.pending.clear();
    });
    port.unref();
  }

  /**
   * No abort signal is honoured here (a request's deadline gives one: shared/data/client.ts and
   * signed.ts): the stand-in answers within milliseconds, and a call past the deadline is refused before it is sent.
   */
  handle(request: HttpRequest): Promise<{ response: HttpResponse }> {
    if (this.closed) return Promise.reject(new Error('local DynamoDB: the connection closed'));
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
      this.pending.set(id, { resolve, reject });
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
