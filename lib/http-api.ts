import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { type CfnRoute, type CfnStage, HttpApi, HttpMethod, HttpRoute, HttpRouteKey, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { chargesQuota } from '../shared/grants.ts';
import { deployedRoutes, notFoundHandlers, type Access } from '../shared/routes.ts';
import { ServiceFunction, type ServiceResources, type TenantQuota } from './service-function.ts';

export interface HttpApiProps {
  api: 'core' | 'platform';
  resources: ServiceResources;
  throttle: { rateLimit: number; burstLimit: number };
  /**
   * The `$default` route's own throttle (unknown paths, answered 404/405 by a function): anonymous
   * callers probing paths cannot spend more Lambda than this.
   */
  unmatchedThrottle: { rateLimit: number; burstLimit: number };
  /** Core API: the per-tenant request quota its authenticated routes enforce (shared/http/quota.ts). */
  tenantQuota?: TenantQuota;
  /**
   * Functions of the public routes (on both APIs: the OpenAPI document, the health check) that
   * the other API made: reused, so each public route has one function behind both APIs.
   */
  publicFunctions?: ReadonlyMap<string, ServiceFunction>;
}

/**
 * A stage's access log line, in the variables HTTP APIs have. CDK's default for an HTTP API
 * stage is the REST APIs' Common Log Format, whose `$context.resourcePath`,
 * `$context.identity.caller` and `$context.identity.user` HTTP APIs do not set (each line said
 * `-` for the path). One JSON object a line: the request id (the answer's `x-amzn-requestid`,
 * and the Lambda's), the route it matched, the status and the latencies, and why an integration
 * failed. The route key, not the path: a path can name a user (`DELETE /api/users/{user_id}`), and
 * these logs are kept 3 months, past an erasure.
 */
const HTTP_API_ACCESS_LOG = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    requestTime: '$context.requestTime',
    httpMethod: '$context.httpMethod',
    routeKey: '$context.routeKey',
    status: '$context.status',
    protocol: '$context.protocol',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
    userAgent: '$context.identity.userAgent',
  }),
);

/**
 * One HTTP API whose routes come from the route table: one function per handler module
 * (POST and PATCH item update share `core/items/update`; every Core path's OPTIONS shares
 * `cors/preflight`), plus a `$default` route answering 404/405 in the API's envelope.
 * Tokens and keys are verified in the handlers (aws-jwt-verify), exactly as locally.
 */
export class ServiceHttpApi extends Construct {
  readonly httpApi: HttpApi;
  readonly functions = new Map<string, ServiceFunction>();

  constructor(scope: Construct, id: string, props: HttpApiProps) {
    super(scope, id);
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS });
    this.httpApi = new HttpApi(this, 'Api', {
      apiName: `${serviceStackOf(this).stackName}-${props.api}`,
      createDefaultStage: false,
    });
    const stage = this.httpApi.addStage('Stage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogs), format: HTTP_API_ACCESS_LOG },
    });

    // One log group for the API's functions (Lambda names each stream after its function).
    const functionLogs = new LogGroup(this, 'FunctionLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    const fn = (module: string, access: Access, verifiesTokens = true) => {
      let f = this.functions.get(module);
      if (!f) {
        const heavy = Boolean(access.bucket);
        f = new ServiceFunction(this, module.replace(/[^A-Za-z0-9]/g, '-'), {
          handler: module,
          timeout: Duration.seconds(heavy ? 29 : 10),
          // Search holds the tenant's index in memory: more memory, and more CPU with it.
          memorySize: heavy ? 3008 : 1024,
          embeddingProvider: props.resources.embeddingProvider,
          logGroup: functionLogs,
        });
        f.bindAccess(props.resources, access, { verifiesTokens });
        this.functions.set(module, f);
      }
      return f;
    };

    const quotaBound = new Set<string>();
    // One integration per function, and one invoke permission for it (scoped to this API):
    // routes of one handler module share them (resources per route: its route only).
    const integrations = new Map<string, HttpLambdaIntegration>();
    const integrationOf = (module: string, f: ServiceFunction) => {
      let i = integrations.get(module);
      if (!i) integrations.set(module, (i = new HttpLambdaIntegration(`${module}Integration`.replace(/[^A-Za-z0-9]/g, '_'), f, { scopePermissionToRoute: false })));
      return i;
    };
    for (const r of deployedRoutes(props.api)) {
      // Public routes (the OpenAPI document, the health check) take no credentials, and share
      // their function with the other API.
      const shared = r.api === 'public' ? props.publicFunctions?.get(r.handler) : undefined;
      const f = shared ?? fn(r.handler, r.access, r.api !== 'public');
      // Routes that authenticate a Core client (coreAuth) charge its tenant's quota.
      if (props.tenantQuota && chargesQuota(r) && !quotaBound.has(r.handler)) {
        f.bindQuota(props.resources.table, props.tenantQuota);
        quotaBound.add(r.handler);
      }
      new HttpRoute(this, `${r.method}${r.path}`.replace(/[^A-Za-z0-9]/g, '_'), {
        httpApi: this.httpApi,
        routeKey: HttpRouteKey.with(r.path, HttpMethod[r.method]),
        integration: integrationOf(r.handler, f),
      });
    }
    const notFound = fn(notFoundHandlers[props.api], {});
    const defaultRoute = new HttpRoute(this, 'DefaultRoute', {
      httpApi: this.httpApi,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('DefaultIntegration', notFound),
    });
    // Route settings name a route by its key, which must exist first.
    const cfnStage = stage.node.defaultChild as CfnStage;
    cfnStage.routeSettings = {
      [HttpRouteKey.DEFAULT.key]: { ThrottlingRateLimit: props.unmatchedThrottle.rateLimit, ThrottlingBurstLimit: props.unmatchedThrottle.burstLimit },
    };
    cfnStage.addResourceDependency(defaultRoute.node.defaultChild as CfnRoute);
  }

  get url(): string {
    return this.httpApi.apiEndpoint;
  }
}

/** The top-level stack (an API may sit in a nested stack): its name names the APIs. */
function serviceStackOf(scope: Construct): Stack {
  let s = Stack.of(scope);
  while (s.nestedStackParent) s = s.nestedStackParent;
  return s;
}
