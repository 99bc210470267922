import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiContext } from '../../shared/http/types.ts';
import { apiEvent } from '../helpers/api-event.ts';

const context = { awsRequestId: '9f1c2a3b-0000-4000-8000-000000000001', getRemainingTimeInMillis: () => 10_000 } as unknown as ApiContext; // state is filled in by the first middleware

beforeAll(() => {
  // Handlers fail before touching the table in these cases; the values only satisfy config.
  process.env.TABLE_NAME = 'unit';
  process.env.AUTH_ISSUER = 'http://localhost:1';
  process.env.DYNAMODB_ENDPOINT = 'http://127.0.0.1:9';
});

describe('handlers without a token (no I/O)', () => {
  it('answer 401 in the Core envelope with the Lambda request id', async () => {
    const { handler } = await import('../../functions/core/items/get.ts');
    const res = await handler(apiEvent('GET', '/v1/items/1', '/v1/items/{item_id}', { pathParameters: { item_id: '1' } }), context);
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(res.body as string)).toEqual({
      error: { type: 'authentication_error', code: 'unauthorized_no_client_id_in_jwt', message: expect.any(String), request_id: '9f1c2a3b-0000-4000-8000-000000000001' },
    });
    expect(res.headers?.['access-control-allow-origin']).toBe('*');
  });

  it('a 405 names each allowed method once, also on a path two routes match', async () => {
    const { handler } = await import('../../functions/errors/not-found-platform.ts');
    // `/api/models/compare` is its own GET route and a `{version}` of GET and PATCH /api/models/{version}.
    const res = await handler(apiEvent('DELETE', '/api/models/compare', '$default'), context);
    expect(res.statusCode).toBe(405);
    expect(res.headers?.allow).toBe('GET, PATCH');
    expect(JSON.parse(res.body as string)).toEqual({ error: 'DELETE is not allowed on /api/models/compare; use GET, PATCH.' });
  });

  it('answer 401 in the Platform envelope', async () => {
    const { handler } = await import('../../functions/platform/clients/list.ts');
    const res = await handler(apiEvent('GET', '/api/clients', '/api/clients'), context);
    expect(res.statusCode).toBe(401);
    expect(Object.keys(JSON.parse(res.body as string))).toEqual(['error']);
  });

  it('preflight lists the methods of its path', async () => {
    const { handler } = await import('../../functions/cors/preflight.ts');
    const res = await handler(apiEvent('OPTIONS', '/v1/items/5', '/v1/items/{item_id}'), context);
    expect(res.statusCode).toBe(204);
    expect(res.headers?.['access-control-allow-methods']).toBe('GET, POST, PATCH, DELETE');
    // No body, so no content type.
    expect(res.headers?.['content-type']).toBeUndefined();
  });

  it('a token the verifier cannot check is a 401, never a 500', async () => {
    // A well-formed token whose JWKS cannot be fetched (unreachable issuer)
    const { handler } = await import('../../functions/core/items/list.ts');
    const fake = ['eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ', Buffer.from(JSON.stringify({ iss: 'http://localhost:1', exp: 9e9, token_use: 'access', client_id: 'c' })).toString('base64url'), 'c2ln'].join(
      '.',
    );
    const res = await handler(apiEvent('GET', '/v1/items', '/v1/items', { headers: { authorization: `Bearer ${fake}` } }), context);
    expect(res.statusCode).toBe(401);
  });
});

describe('a handler that outlives its time', () => {
  it('answers 503 timeout in the envelope, not an unexpected 500', async () => {
    const { httpHandler } = await import('../../shared/http/handler.ts');
    const { ok } = await import('../../shared/http/respond.ts');
    const slow = httpHandler('core', undefined, {}, () => new Promise((r) => setTimeout(() => r(ok({ late: true })), 1000)));
    const short = { ...context, getRemainingTimeInMillis: () => 50 } as ApiContext;
    const res = await slow(apiEvent('GET', '/v1/slow', '/v1/slow'), short);
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body as string)).toEqual({
      error: { type: 'api_error', code: 'timeout', message: expect.any(String), request_id: '9f1c2a3b-0000-4000-8000-000000000001' },
    });
  });
});

describe('a handler that meets the table refusing for load', () => {
  it('answers 503 unavailable with a Retry-After a browser can read (exposed, as the 429 is)', async () => {
    const { ThrottlingException } = await import('@aws-sdk/client-dynamodb');
    const { httpHandler } = await import('../../shared/http/handler.ts');
    const throttled = httpHandler('core', undefined, {}, async () => {
      throw new ThrottlingException({ message: 'Rate exceeded', $metadata: {} });
    });
    const { logger } = await import('../../shared/observability.ts');
    const warned = vi.spyOn(logger, 'warn');
    const res = await throttled(apiEvent('GET', '/v1/busy', '/v1/busy'), context);
    expect(res.statusCode).toBe(503);
    // Said where operators look (a mapped error is not the 'unhandled error' line).
    expect(warned).toHaveBeenCalledWith('answered 503 unavailable', expect.objectContaining({ requestId: context.awsRequestId }));
    warned.mockRestore();
    expect(JSON.parse(res.body as string)).toMatchObject({ error: { type: 'api_error', code: 'unavailable' } });
    expect(res.headers?.['retry-after']).toBe('1');
    // Until 2026-12-07 only X-Request-Id and Idempotent-Replayed were: a browser client saw no Retry-After.
    expect(res.headers?.['access-control-expose-headers']?.toString().split(/,\s*/)).toEqual(['X-Request-Id', 'Idempotent-Replayed', 'Retry-After']);
  });
});

describe('the token endpoint envelope', () => {
  it("answers a server failure with RFC 6749's codes, never a Core API code", async () => {
    const { httpHandler } = await import('../../shared/http/handler.ts');
    const { ok } = await import('../../shared/http/respond.ts');
    const failing = httpHandler('oauth', undefined, {}, async () => {
      throw new Error('boom');
    });
    const res = await failing(apiEvent('POST', '/oauth2/token', '/oauth2/token'), context);
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body as string)).toEqual({ error: 'server_error', error_description: expect.any(String) });
    const slow = httpHandler('oauth', undefined, {}, () => new Promise((r) => setTimeout(() => r(ok({ late: true })), 1000)));
    const late = await slow(apiEvent('POST', '/oauth2/token', '/oauth2/token'), { ...context, getRemainingTimeInMillis: () => 50 } as ApiContext);
    expect(late.statusCode).toBe(503);
    expect(JSON.parse(late.body as string)).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
  });
});

describe("a request body's Content-Encoding", () => {
  const body = '{"name":"plain"}';
  const read = async (encoding: string) => {
    const { bodyText } = await import('../../shared/http/base.ts');
    return bodyText(apiEvent('POST', '/v1/items', '/v1/items', { headers: { 'content-encoding': encoding }, body }));
  };

  it('takes a list of identity codings as identity (RFC 9110: a coding list), any case, with whitespace around the commas', async () => {
    // Until 2026-12-07 `identity, identity` was refused as a compressed body.
    for (const encoding of ['identity', 'IDENTITY', 'identity, identity', 'Identity,IDENTITY', ' identity ,\tidentity ', 'identity,,identity', 'identity, identity, identity'])
      expect(await read(encoding), encoding).toBe(body);
  });

  it('refuses any other coding, alone or in a list with identity, as before', async () => {
    for (const encoding of ['gzip', 'br', 'identity, gzip', 'gzip, identity', 'identity identity', 'identityx', 'x-identity', 'identity;q=1'])
      await expect(read(encoding), encoding).rejects.toThrow(/sent compressed \(Content-Encoding: /);
  });

  it('reads a header sent twice as the local server joins it', async () => {
    // The local server joins repeated Content-Encoding lines with "," as API Gateway does (until
    // 2026-12-07 with Node's ", "): the event it makes holds one list.
    const { createServer } = await import('node:http');
    const { toApiGatewayEvent } = await import('../../local/http-adapter.ts');
    const { bodyText } = await import('../../shared/http/base.ts');
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const event = toApiGatewayEvent(req, Buffer.concat(chunks), 'POST /v1/items', undefined);
        let answer: string;
        try {
          answer = `${event.headers['content-encoding']}|${bodyText(event)}`;
        } catch (e) {
          answer = `${event.headers['content-encoding']}|refused: ${(e as Error).message}`;
        }
        res.end(answer);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    // Each coding on a header line of its own, as a client may send them.
    const { connect } = await import('node:net');
    const send = (codings: string[]) =>
      new Promise<string>((resolve, reject) => {
        const lines = [
          'POST /v1/items HTTP/1.1',
          'Host: local',
          'Content-Type: application/json',
          `Content-Length: ${body.length}`,
          ...codings.map((c) => `Content-Encoding: ${c}`),
          'Connection: close',
        ];
        const socket = connect(port, '127.0.0.1', () => socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`));
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString()));
        socket.on('error', reject);
        socket.on('close', () => resolve(text.slice(text.indexOf('\r\n\r\n') + 4)));
      });
    try {
      expect(await send(['identity', 'IDENTITY'])).toBe(`identity,IDENTITY|${body}`);
      expect(await send(['identity', 'gzip'])).toMatch(/^identity,gzip\|refused: The request body is sent compressed/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
