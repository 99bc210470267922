import type { HttpEvent } from '../../shared/http/types.ts';

/** An API Gateway v2 event for a route (`routePath` its template), as API Gateway would send it. */
export function apiEvent(method: string, path: string, routePath = path, opts: { headers?: Record<string, string>; body?: string; pathParameters?: Record<string, string> } = {}): HttpEvent {
  return {
    version: '2.0',
    routeKey: `${method} ${routePath}`,
    rawPath: path,
    rawQueryString: '',
    headers: opts.headers ?? {},
    ...(opts.pathParameters ? { pathParameters: opts.pathParameters } : {}),
    requestContext: {
      accountId: '1',
      apiId: 'a',
      domainName: 'x',
      domainPrefix: 'x',
      requestId: 'r',
      routeKey: `${method} ${routePath}`,
      stage: '$default',
      time: '',
      timeEpoch: 0,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
    },
    ...(opts.body !== undefined ? { body: opts.body } : {}),
    isBase64Encoded: false,
  };
}
