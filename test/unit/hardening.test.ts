import { execFileSync } from 'node:child_process';
import { createSign } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyAccessToken } from '../../shared/auth/jwt.ts';
import { ensureSigningKey, loadSigningKey, signAccessToken, type SigningKey } from '../../shared/auth/signer.ts';

/**
 * Issue 18, defect 2. Runs two handlers of the shared chain in a fresh process with the tracer on
 * (as on Lambda) against a stand-in X-Ray segment, and reports everything written to it.
 */
function traced(env: Record<string, string> = {}): { recorded: unknown[][] } {
  const script = `
const o = await import('./shared/observability.ts');
const { httpHandler } = await import('./shared/http/handler.ts');
const { ok } = await import('./shared/http/respond.ts');
const recorded = [];
const segment = {
  addNewSubsegment: () => segment,
  close() {},
  addAnnotation: (k, v) => recorded.push(['annotation', k, v]),
  addMetadata: (k, v) => recorded.push(['metadata', k, v]),
  addError: (e) => recorded.push(['error', String(e)]),
  addErrorFlag: () => recorded.push(['errorFlag']),
};
o.tracer.provider.getSegment = () => segment;
o.tracer.provider.setSegment = () => undefined;
const event = { version: '2.0', routeKey: 'POST /api/x', rawPath: '/api/x', rawQueryString: '', headers: {}, isBase64Encoded: false,
  requestContext: { http: { method: 'POST', path: '/api/x', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' }, requestId: 'r', routeKey: 'POST /api/x', stage: '$default', time: '', timeEpoch: 0, accountId: '1', apiId: 'a', domainName: 'x', domainPrefix: 'x' } };
const context = { awsRequestId: '9f1c2a3b-0000-4000-8000-000000000001', getRemainingTimeInMillis: () => 10000, functionName: 'f', memoryLimitInMB: '128', invokedFunctionArn: 'arn' };
const answers = httpHandler('platform', undefined, {}, async () => ok({ key: 'SECRET-IN-RESPONSE' }));
const fails = httpHandler('platform', undefined, {}, async () => { throw new Error('SECRET-IN-ERROR'); });
const a = await answers(event, context);
const b = await fails(event, context);
console.log(JSON.stringify({ statuses: [a.statusCode, b.statusCode], recorded }));`;
  const base: NodeJS.ProcessEnv = { ...process.env, AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR', _HANDLER: 'index.handler', TABLE_NAME: 'unit' };
  delete base.POWERTOOLS_TRACE_ENABLED;
  delete base.POWERTOOLS_TRACER_CAPTURE_RESPONSE;
  delete base.POWERTOOLS_TRACER_CAPTURE_ERROR;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...base, ...env }, encoding: 'utf8' });
  const seen = JSON.parse(out.trim().split('\n').pop() as string) as { statuses: number[]; recorded: unknown[][] };
  expect(seen.statuses).toEqual([200, 500]);
  return seen;
}

describe('tracing (issue 18, defect 2)', () => {
  it('traces a handler, but records neither its response nor its error in the segment', () => {
    const { recorded } = traced();
    // The tracer is on and writes to the segment: the service annotation at least.
    expect(recorded.some(([kind]) => kind === 'annotation')).toBe(true);
    expect(JSON.stringify(recorded)).not.toContain('SECRET');
  });

  it('even where the environment asks for response and error capture', () => {
    const { recorded } = traced({ POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'true', POWERTOOLS_TRACER_CAPTURE_ERROR: 'true' });
    expect(JSON.stringify(recorded)).not.toContain('SECRET');
  });
});

describe('access tokens without a numeric exp (issue 18, defect 5)', () => {
  const issuer = 'http://127.0.0.1:1/hardening-pool';
  let key: SigningKey;
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'jwt-hardening-'));
    ensureSigningKey(join(dir, 'key.json'), join(dir, 'jwks.json'));
    key = loadSigningKey(join(dir, 'key.json'));
    process.env.TABLE_NAME = 'unit';
    process.env.AUTH_ISSUER = issuer;
    process.env.AUTH_JWKS_FILE = join(dir, 'jwks.json');
  });

  /** A token with a valid signature over exactly these claims. */
  function signed(claims: Record<string, unknown>): string {
    const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const body = `${b64({ kid: key.kid, alg: 'RS256' })}.${b64(claims)}`;
    return `${body}.${createSign('RSA-SHA256').update(body).sign(key.key).toString('base64url')}`;
  }
  const now = () => Math.floor(Date.now() / 1000);
  const claims = () => ({ iss: issuer, token_use: 'access', client_id: 'c1', scope: 'service-api/read', iat: now() });

  it('a well-formed token is accepted (the signing here is sound)', async () => {
    await expect(verifyAccessToken(signed({ ...claims(), exp: now() + 60 }))).resolves.toEqual({ clientId: 'c1', scopes: ['service-api/read'] });
    await expect(verifyAccessToken(signAccessToken(key, { issuer, clientId: 'c1', scope: 'service-api/read', lifetimeSeconds: 60 }))).resolves.toBeDefined();
  });

  it.each([
    ['no exp', {}],
    ['exp null', { exp: null }],
    ['exp a string', { exp: String(now() + 60) }],
    ['exp an array', { exp: [now() + 60] }],
    ['exp an object', { exp: { n: now() + 60 } }],
  ])('%s is refused even though its signature verifies', async (_what, exp) => {
    const token = signed({ ...claims(), ...exp });
    await expect(verifyAccessToken(token)).rejects.toThrow();
    // And again (nothing about it was remembered as verified).
    await expect(verifyAccessToken(token)).rejects.toThrow();
  });
});
