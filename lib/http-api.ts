import { Duration, Stack } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpRoute, HttpRouteKey, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { deployedRoutes, notFoundHandlers, type Access } from '../shared/routes.ts';
import { ServiceFunction, type ServiceResources } from './service-function.ts';

export interface HttpApiProps {
  api: 'core' | 'platform';
  resources: ServiceResources;
  throttle: { rateLimit: number; burstLimit: number };
}

/**
 * One HTTP API whose routes come from the route table: one function per handler module
 * (POST and PATCH item update share `items/update`; every Core path's OPTIONS shares
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
      apiName: `${Stack.of(this).stackName}-${props.api}`,
      createDefaultStage: false,
    });
    this.httpApi.addStage('Stage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogs) },
    });

    const fn = (module: string, access: Access) => {
      let f = this.functions.get(module);
      if (!f) {
        const heavy = Boolean(access.bucket);
        f = new ServiceFunction(this, module.replace(/[^A-Za-z0-9]/g, '-'), {
          handler: module,
          timeout: Duration.seconds(heavy ? 29 : 10),
          // Search holds the tenant's index in memory: more memory, and more CPU with it.
          memorySize: heavy ? 3008 : 1024,
          embeddingProvider: props.resources.embeddingProvider,
        });
        f.bindAccess(props.resources, access, { verifiesTokens: true });
        this.functions.set(module, f);
      }
      return f;
    };

    for (const r of deployedRoutes(props.api)) {
      new HttpRoute(this, `${r.method}${r.path}`.replace(/[^A-Za-z0-9]/g, '_'), {
        httpApi: this.httpApi,
        routeKey: HttpRouteKey.with(r.path, HttpMethod[r.method]),
        integration: new HttpLambdaIntegration(`${r.method}${r.path}Integration`.replace(/[^A-Za-z0-9]/g, '_'), fn(r.handler, r.access)),
      });
    }
    const notFound = fn(notFoundHandlers[props.api], {});
    new HttpRoute(this, 'DefaultRoute', {
      httpApi: this.httpApi,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('DefaultIntegration', notFound),
    });
  }

  get url(): string {
    return this.httpApi.apiEndpoint;
  }
}
