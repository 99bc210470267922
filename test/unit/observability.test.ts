import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Loads shared/observability.ts in a fresh process and reports what it brought with it. */
function load(traceEnabled: string | undefined) {
  const script = `const o = await import('./shared/observability.ts');
const { createRequire } = await import('node:module');
const cache = createRequire(import.meta.url).cache;
console.log(JSON.stringify({ tracer: o.tracer !== undefined, xray: Object.keys(cache).some((k) => k.includes('aws-xray-sdk-core')) }));`;
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR' };
  delete env.POWERTOOLS_TRACE_ENABLED;
  if (traceEnabled !== undefined) env.POWERTOOLS_TRACE_ENABLED = traceEnabled;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() as string) as { tracer: boolean; xray: boolean };
}

describe('observability', () => {
  it('never loads the X-Ray SDK (and its async hooks) where tracing is off', () => {
    expect(load('false')).toEqual({ tracer: false, xray: false });
  });

  it('traces by default, as on Lambda', () => {
    expect(load(undefined)).toEqual({ tracer: true, xray: true });
  });
});
