import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * Loads shared/observability.ts in a fresh process (after `first`, if given) and reports what it
 * brought with it, and whether a metric it publishes is printed.
 */
function load(traceEnabled: string | undefined, first?: string) {
  const script = `${first ? `await import('${first}');` : ''}
const o = await import('./shared/observability.ts');
o.metrics.addMetric('Probe', 'Count', 1);
o.metrics.publishStoredMetrics();
const { createRequire } = await import('node:module');
const cache = createRequire(import.meta.url).cache;
console.log(JSON.stringify({ tracer: o.tracer !== undefined, xray: Object.keys(cache).some((k) => k.includes('aws-xray-sdk-core')) }));`;
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR' };
  delete env.POWERTOOLS_TRACE_ENABLED;
  delete env.POWERTOOLS_METRICS_DISABLED;
  if (traceEnabled !== undefined) env.POWERTOOLS_TRACE_ENABLED = traceEnabled;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env, encoding: 'utf8' });
  const lines = out.trim().split('\n');
  const seen = JSON.parse(lines.pop() as string) as { tracer: boolean; xray: boolean };
  return { ...seen, metricsPrinted: lines.some((l) => l.includes('"Probe"')) };
}

describe('observability', () => {
  it('never loads the X-Ray SDK (and its async hooks) where tracing is off', () => {
    expect(load('false')).toMatchObject({ tracer: false, xray: false });
  });

  it('traces and prints metrics by default, as on Lambda', () => {
    expect(load(undefined)).toEqual({ tracer: true, xray: true, metricsPrinted: true });
  });

  it('is off in the local stack from its first import, before any handler module loads', () => {
    expect(load(undefined, './local/stack.ts')).toEqual({ tracer: false, xray: false, metricsPrinted: false });
  });
});
