import { getHeapStatistics } from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
import { readConfig, readLocalConfig } from '../../shared/config.ts';

// Importing the local defaults sets them on this process: they are taken back after the file.
const before = { ...process.env };
const { applyLocalDefaults } = await import('../../local/defaults.ts');
afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in before)) delete process.env[k];
  Object.assign(process.env, before);
});

// docs/configuration.md: "an empty variable counts as unset", for every setting, the local
// stack's own defaults included.
describe('settings', () => {
  const base = { TABLE_NAME: 't', AUTH_ISSUER: 'x', USER_REF_KEY: 'k' };

  it('reads an empty Powertools variable as unset', () => {
    const o = readConfig({ ...base, POWERTOOLS_SERVICE_NAME: '', POWERTOOLS_METRICS_NAMESPACE: '', POWERTOOLS_METRICS_DISABLED: '', POWERTOOLS_TRACE_ENABLED: '' }).observability;
    expect(o).toEqual({ serviceName: 'recsearch', metricsNamespace: 'recsearch', metrics: true, tracing: true });
  });

  it('gives the local stack its defaults where a variable is unset or empty, and keeps what is set', () => {
    const env: NodeJS.ProcessEnv = { TENANT_RATE_PER_SECOND: '', TENANT_BURST: '7', POWERTOOLS_METRICS_DISABLED: '' };
    applyLocalDefaults(env);
    expect(env).toMatchObject({ TENANT_RATE_PER_SECOND: '20000', TENANT_BURST: '7', POWERTOOLS_METRICS_DISABLED: 'true', INDEX_MAX_AGE_SECONDS: '30' });
    expect(readConfig({ ...base, ...env }).tenantQuota).toEqual({ ratePerSecond: 20000, burst: 7 });
  });

  it("leaves the burst to the service's own default (twice the rate) when only the rate is set", () => {
    const env: NodeJS.ProcessEnv = { TENANT_RATE_PER_SECOND: '1' };
    applyLocalDefaults(env);
    expect(env.TENANT_BURST).toBeUndefined();
    expect(readConfig({ ...base, ...env }).tenantQuota).toEqual({ ratePerSecond: 1, burst: 2 });
  });

  it('keeps an Idempotency-Key for 24 hours unless told otherwise (api-decisions: a retry within 24 h returns the first response)', () => {
    expect(readConfig({ ...base }).idempotencyTtlSeconds).toBe(86_400);
    expect(readConfig({ ...base, IDEMPOTENCY_TTL_SECONDS: '' }).idempotencyTtlSeconds).toBe(86_400);
    expect(readConfig({ ...base, IDEMPOTENCY_TTL_SECONDS: '60' }).idempotencyTtlSeconds).toBe(60);
  });

  it("keeps search views in half the Lambda function's memory (elsewhere half of V8's heap limit) unless SEARCH_MEMORY_MB says otherwise", () => {
    expect(readConfig({ ...base }).search.memoryBytes).toBe(getHeapStatistics().heap_size_limit / 2);
    expect(readConfig({ ...base, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '3008' }).search.memoryBytes).toBe(1504 * 1024 * 1024);
    expect(readConfig({ ...base, SEARCH_MEMORY_MB: '512' }).search.memoryBytes).toBe(512 * 1024 * 1024);
    for (const bad of ['0', '-1', 'lots']) expect(() => readConfig({ ...base, SEARCH_MEMORY_MB: bad }), bad).toThrow(/SEARCH_MEMORY_MB/);
  });

  it("keeps loaded models in a quarter of the Lambda function's memory (elsewhere of V8's heap limit) unless MODEL_MEMORY_MB says otherwise", () => {
    expect(readConfig({ ...base }).recs.modelMemoryBytes).toBe(getHeapStatistics().heap_size_limit / 4);
    expect(readConfig({ ...base, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '3008' }).recs.modelMemoryBytes).toBe(752 * 1024 * 1024);
    expect(readConfig({ ...base, MODEL_MEMORY_MB: '100' }).recs.modelMemoryBytes).toBe(100 * 1024 * 1024);
    expect(() => readConfig({ ...base, MODEL_MEMORY_MB: '0' })).toThrow(/MODEL_MEMORY_MB/);
  });

  it('refuses values that would be misread: a negative grace, half the training task, a timer Node cannot hold, an unknown CONSOLE_BUILD', () => {
    expect(() => readConfig({ ...base, EMBED_GRACE_SECONDS: '-3600' })).toThrow(/EMBED_GRACE_SECONDS/);
    expect(() => readConfig({ ...base, TRAINING_TASK_CLUSTER: 'arn:aws:ecs:x' })).toThrow(/TRAINING_TASK_DEFINITION/);
    expect(readConfig({ ...base }).training.task).toBeUndefined();
    expect(() => readLocalConfig({ MAINTENANCE_SECONDS: '3000000' })).toThrow(/MAINTENANCE_SECONDS/);
    expect(readLocalConfig({ MAINTENANCE_SECONDS: '2147483' }).maintenanceSeconds).toBe(2147483);
    expect(() => readLocalConfig({ LOCAL_RETRY_DELAY_MS: '1e12' })).toThrow(/LOCAL_RETRY_DELAY_MS/);
    expect(() => readLocalConfig({ CONSOLE_BUILD: 'xyz' })).toThrow(/CONSOLE_BUILD/);
    for (const off of ['off', 'false', '0', 'no', 'OFF']) expect(readLocalConfig({ CONSOLE_BUILD: off }).consoleBuild, off).toBe(false);
    expect(readLocalConfig({}).consoleBuild).toBe(true);
  });
});
