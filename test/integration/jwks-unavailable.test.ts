import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectCoreError, startTestStack, type TestStack } from '../helpers/stack.ts';

// The verifier starts with a JWKS that lacks the signing key (as a Lambda container starts with
// none: on AWS it fetches Cognito's on first use) and fetches it (aws-jwt-verify fetches over
// HTTPS only) from a server that fails (it speaks plain HTTP, so the TLS handshake fails): the service cannot tell whether a token is valid, which is its own failure to
// retry, not the client's token refused.

let t: TestStack;
let failing: Server;
beforeAll(async () => {
  failing = createServer((_req, res) => res.writeHead(500).end('down'));
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  const port = (failing.address() as { port: number }).port;
  const emptyJwks = join(tmpdir(), `empty-jwks-${process.pid}.json`);
  writeFileSync(emptyJwks, JSON.stringify({ keys: [] }));
  t = await startTestStack({ AUTH_JWKS_FILE: emptyJwks, AUTH_JWKS_URI: `https://127.0.0.1:${port}/.well-known/jwks.json` });
});
afterAll(async () => {
  await t?.stop();
  await new Promise((resolve) => failing?.close(resolve));
});

it('a token the service cannot check for want of the signing keys is 503 unavailable (retry), not 401 invalid_token', async () => {
  const token = await t.demo.accessToken();
  const r = await t.demo.core('GET', '/v1/items', undefined, { token });
  expectCoreError(r, 503, 'api_error', 'unavailable');
  expect(r.headers.get('retry-after')).toBe('1');
  expect(r.headers.get('www-authenticate')).toBeNull();
  // A request without a token is still the 401 it always was.
  const none = await fetch(`${t.base}/v1/items`);
  expect(none.status).toBe(401);
});
