import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'aws-lambda';
import { nowMs } from '../shared/clock.ts';
import type { HttpEvent, HttpResult } from '../shared/http/types.ts';

export type LambdaHttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/** API Gateway's own payload limit for HTTP APIs. */
const MAX_PAYLOAD = 10 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD) return 'too_large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * A request's target as a URL: its path as sent, also when it starts with two slashes
 * (`//v1/items/1` is that path, not the host "v1", as a relative URL would read it).
 */
export function requestUrl(target: string | undefined): URL {
  const t = target ?? '/';
  return t.startsWith('/') ? new URL(`http://local${t}`) : new URL(t, 'http://local');
}

/** Turns a Node request into the API Gateway HTTP API (payload 2.0) event a Lambda receives. */
export function toApiGatewayEvent(req: IncomingMessage, body: Buffer, routeKey: string, pathParameters: Record<string, string> | undefined): HttpEvent {
  const url = requestUrl(req.url);
  // A header sent more than once is its values joined by commas, as API Gateway joins them, every
  // one (Node's `headers` keeps only the first Authorization, Content-Type, Host...: until
  // 2026-12-07 a request with two Authorization headers was authenticated with the first here,
  // where deployed they arrive as one malformed value); the Cookie header as Node joins it.
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headersDistinct)) {
    if (v !== undefined) headers[k.toLowerCase()] = v.join(',');
  }
  if (req.headers.cookie !== undefined) headers.cookie = req.headers.cookie;
  // Without a prototype, as API Gateway's JSON event parses: `?__proto__=1` is a parameter (an
  // unknown one, 400), not the object's prototype, and `constructor` is not found in it unsent.
  const query: Record<string, string> = Object.create(null);
  for (const [k, v] of url.searchParams) query[k] = Object.hasOwn(query, k) ? `${query[k]},${v}` : v;
  const now = new Date(nowMs());
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(pathParameters && Object.keys(pathParameters).length ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    // A body that is not UTF-8 text goes base64-encoded, as API Gateway passes a binary one.
    ...(body.length ? (isUtf8(body) ? { body: body.toString('utf8'), isBase64Encoded: false } : { body: body.toString('base64'), isBase64Encoded: true }) : { isBase64Encoded: false }),
  };
}

export function lambdaContext(functionName: string, timeoutMs = 30_000): Context {
  const started = Date.now();
  const requestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * The tenant a handler's middleware found for the request (its state on the context), for the
 * access log; undefined before authentication or when it failed.
 */
export function tenantOf(context: Context): string | undefined {
  const tenant = (context as { state?: { tenant?: unknown } }).state?.tenant;
  return typeof tenant === 'string' && tenant !== '' ? tenant : undefined;
}

/** Records on `context` the tenant a handler run elsewhere (an API thread) found. */
export function setTenant(context: Context, tenant: string | undefined): void {
  if (tenant) Object.assign(context, { state: { tenant } });
}

/** Writes a Lambda proxy result the way API Gateway does. */
export function writeResult(res: ServerResponse, result: HttpResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  const body = result.body === undefined ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(body);
}
