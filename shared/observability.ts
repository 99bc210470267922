import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { config } from './config.ts';

/**
 * Powertools singletons, one per container. Service name and namespace come from
 * POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE (set by the CDK function defaults;
 * `config().observability`). The local stack disables metrics and tracing
 * (POWERTOOLS_METRICS_DISABLED, POWERTOOLS_TRACE_ENABLED).
 */
const settings = config().observability;
export const logger = new Logger({ serviceName: settings.serviceName });
export const metrics = new Metrics({ namespace: settings.metricsNamespace, serviceName: settings.serviceName });
/**
 * The X-Ray tracer, only where tracing is on (on Lambda it is). Importing the X-Ray SDK installs
 * async hooks that tax every promise of the process, traced or not, so where tracing is off
 * (the local stack, tests) it is never loaded.
 *
 * It never records a response or an error as metadata: responses hold plaintext API keys, client
 * secrets and tenant data, and errors can carry request values (the error is logged, and the
 * segment still gets its error flag). The Tracer reads these two settings only from the
 * environment, as it is built; the CDK functions set them too (lib/service-function.ts).
 */
function newTracer(Tracer: typeof import('@aws-lambda-powertools/tracer').Tracer): Tracer {
  process.env.POWERTOOLS_TRACER_CAPTURE_RESPONSE = 'false';
  process.env.POWERTOOLS_TRACER_CAPTURE_ERROR = 'false';
  return new Tracer({ serviceName: settings.serviceName });
}
export const tracer: Tracer | undefined = settings.tracing ? newTracer((await import('@aws-lambda-powertools/tracer')).Tracer) : undefined;
