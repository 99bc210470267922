/**
 * The local stack's environment defaults (the environment, or StackOptions.env, overrides
 * them). They are set when this module is evaluated, and stack.ts imports it before anything
 * else: modules read some of them as they load (observability.ts decides then whether to load
 * the X-Ray SDK, whose async hooks tax every promise of the process, and whether metrics print).
 */
const defaults: Record<string, string> = {
  // No CloudWatch or X-Ray locally: Powertools metrics and tracing stay off.
  POWERTOOLS_METRICS_DISABLED: 'true',
  POWERTOOLS_TRACE_ENABLED: 'false',
  // A laptop catalog is small: fold changes into the index sooner than on AWS.
  INDEX_MAX_AGE_SECONDS: '30',
  INDEX_CHECK_SECONDS: '2',
  EMBED_GRACE_SECONDS: '30',
  // The per-tenant quota (200/s on AWS) stays out of the way of benchmarks that drive one tenant
  // at thousands of requests per second over loopback; set lower to try it (the fairness test does).
  TENANT_RATE_PER_SECOND: '20000',
  TENANT_BURST: '40000',
};
/** Sets each default the environment leaves unset; an empty variable counts as unset, as everywhere (docs/configuration.md). */
export function applyLocalDefaults(env: NodeJS.ProcessEnv): void {
  const unset = (k: string) => env[k] === undefined || env[k] === '';
  // A rate set without a burst gets the service's own default burst (twice the rate), not the laptop's.
  const ownRate = !unset('TENANT_RATE_PER_SECOND');
  for (const [k, v] of Object.entries(defaults)) if (unset(k) && !(ownRate && k === 'TENANT_BURST')) env[k] = v;
}
applyLocalDefaults(process.env);
