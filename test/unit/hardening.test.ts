import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

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
