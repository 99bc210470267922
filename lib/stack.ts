import { Aws, CfnOutput, Fn, NestedStack, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AuthConstruct } from './auth.ts';
import { ConsoleWeb } from './console.ts';
import { DataConstruct } from './data.ts';
import { ServiceHttpApi } from './http-api.ts';
import { OperationsConstruct } from './operations.ts';
import { TokenEndpointFirewall } from './protection.ts';
import { TrainingTask } from './training-task.ts';
import type { TenantQuota } from './service-function.ts';
import { WorkersConstruct } from './workers.ts';

export interface ServiceStackProps extends StackProps {
  /** Cognito domain prefix (unique in its region); default `recsearch-<account id>`. */
  authDomainPrefix?: string;
  /** Steady-state requests per second and burst per API stage. */
  throttle?: { rateLimit: number; burstLimit: number };
  /** Embedding model: the local hashing embedding (default) or Bedrock Titan Text Embeddings V2. */
  embeddingProvider?: 'local' | 'bedrock';
  /**
   * The Core API's request quota per tenant, across all its functions and containers
   * (default 200 requests per second, bursts of 400; context `tenantRatePerSecond`, `tenantBurst`).
   */
  tenantQuota?: TenantQuota;
  /** Each API's `$default` route (unknown paths): default 50 requests per second, burst 100. */
  unmatchedThrottle?: { rateLimit: number; burstLimit: number };
  /**
   * Token-endpoint firewall: requests one source address may make to the Cognito user pool per
   * window (default 300 per 300 s).
   */
  tokenEndpointLimit?: { requests: number; windowSeconds: 60 | 120 | 300 | 600 };
  /** The built console web app to deploy (default: console/dist, built at synthesis if missing or stale). */
  consoleAssetDir?: string;
  /** Reserve the workers' concurrency (lib/workers.ts); default true, context `reserveWorkerConcurrency=false` turns it off. */
  reserveWorkerConcurrency?: boolean;
  /** An address the alarms mail (context `alarmEmail`); default none: subscribe to the `AlarmTopicArn` output's topic. */
  alarmEmail?: string;
}

/** The `alarmEmail` context: an email address, or absent. */
function emailContext(scope: Construct): string | undefined {
  const raw = scope.node.tryGetContext('alarmEmail') as unknown;
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw)) return raw;
  throw new Error(`Context alarmEmail must be an email address, got ${String(raw)}`);
}

const positiveContext = (scope: Construct, name: string): number | undefined => {
  const raw = scope.node.tryGetContext(name) as string | number | undefined;
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`Context ${name} must be a positive integer, got ${String(raw)}`);
  return n;
};

/** A true/false context value (`-c name=false`), `fallback` when absent; anything else fails synthesis. */
function booleanContext(scope: Construct, name: string, fallback: boolean): boolean {
  const raw = scope.node.tryGetContext(name) as unknown;
  if (raw === undefined) return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new Error(`Context ${name} must be true or false, got ${String(raw)}`);
}

/** The `embeddingProvider` context (`local` when absent); any other value fails synthesis. */
function embeddingContext(scope: Construct): 'local' | 'bedrock' {
  const raw = scope.node.tryGetContext('embeddingProvider') as unknown;
  if (raw === undefined || raw === 'local' || raw === 'bedrock') return raw ?? 'local';
  throw new Error(`Context embeddingProvider must be local or bedrock, got ${String(raw)}`);
}

export class ServiceStack extends Stack {
  readonly data: DataConstruct;
  readonly auth: AuthConstruct;
  readonly core: ServiceHttpApi;
  readonly platform: ServiceHttpApi;
  /** The nested stack holding the Platform API. */
  readonly platformStack: NestedStack;
  readonly workers: WorkersConstruct;
  readonly firewall: TokenEndpointFirewall;
  /** The training run as an ECS Fargate task, for tenants past the training worker's Lambda. */
  readonly training: TrainingTask;
  readonly console: ConsoleWeb;

  constructor(scope: Construct, id: string, props: ServiceStackProps = {}) {
    super(scope, id, props);
    const throttle = props.throttle ?? { rateLimit: 1000, burstLimit: 2000 };
    const unmatchedThrottle = props.unmatchedThrottle ?? { rateLimit: 50, burstLimit: 100 };
    const rate = positiveContext(this, 'tenantRatePerSecond') ?? 200;
    const tenantQuota = props.tenantQuota ?? { ratePerSecond: rate, burst: positiveContext(this, 'tenantBurst') ?? 2 * rate };
    const reserve = props.reserveWorkerConcurrency ?? booleanContext(this, 'reserveWorkerConcurrency', true);
    this.data = new DataConstruct(this, 'Data');
    this.auth = new AuthConstruct(this, 'Auth', props.authDomainPrefix ? { domainPrefix: props.authDomainPrefix } : {});
    this.workers = new WorkersConstruct(this, 'Workers');
    const base = { table: this.data.table, userPool: this.auth.userPool, bucket: this.data.artifacts, embeddingProvider: props.embeddingProvider ?? embeddingContext(this) };
    this.workers.addFunctions(base, { reserve });
    const trainWorker = this.workers.functions.find((f) => f.module === 'workers/train');
    if (!trainWorker) throw new Error('No training worker (shared/queue/workers.ts workers/train)');
    const maintainer = this.workers.functions.find((f) => f.module === 'workers/maintain');
    if (!maintainer) throw new Error('No maintenance function (shared/queue/workers.ts workers/maintain)');
    this.training = new TrainingTask(this, 'Training', { table: this.data.table, bucket: this.data.artifacts, worker: trainWorker, maintainer });
    const resources = { ...base, queues: new Map([...this.workers.queues].map(([k, v]) => [k, v.queue])) };
    this.core = new ServiceHttpApi(this, 'CoreApi', { api: 'core', resources, throttle, unmatchedThrottle, tenantQuota });
    // The Platform API (a function and three resources per route) in a nested stack of its own:
    // each stack has CloudFormation's limit of 500 resources, and the two APIs together are near it.
    this.platformStack = new NestedStack(this, 'Platform', { description: 'The Platform API: its routes and their functions' });
    this.platform = new ServiceHttpApi(this.platformStack, 'PlatformApi', { api: 'platform', resources, throttle, unmatchedThrottle, publicFunctions: this.core.functions });
    // The console web app, with the Platform API behind the same CloudFront origin; sign-in
    // checks passwords through the pool's console client.
    // The distribution's secret for the Platform API, so that the sign-in function believes the
    // viewer address only from it: the id of the Platform's nested stack (a UUID no one outside
    // the account sees), which the function reads in its own stack (AWS::StackId) and the
    // distribution from the nested stack's resource.
    const uuidOf = (stackId: string) => Fn.select(2, Fn.split('/', stackId));
    this.console = new ConsoleWeb(this, 'Console', {
      platformApi: this.platform.httpApi,
      originVerify: uuidOf(this.platformStack.stackId),
      ...(props.consoleAssetDir ? { assetDir: props.consoleAssetDir } : {}),
    });
    const signIn = this.platform.functions.get('console-session/session');
    signIn?.addEnvironment('CONSOLE_CLIENT_ID', this.auth.consoleClient.userPoolClientId);
    signIn?.addEnvironment('CONSOLE_ORIGIN_VERIFY', uuidOf(Aws.STACK_ID));
    // The key by which the maintenance pass's logs name a user (shared/domain/erasure.ts `userRef`):
    // this stack's UUID, which no one outside the account sees.
    maintainer.addEnvironment('USER_REF_KEY', uuidOf(Aws.STACK_ID));
    const limit = props.tokenEndpointLimit ?? { requests: 300, windowSeconds: 300 };
    this.firewall = new TokenEndpointFirewall(this, 'TokenEndpointFirewall', { userPool: this.auth.userPool, requestsPerAddress: limit.requests, windowSeconds: limit.windowSeconds });

    const alarmEmail = props.alarmEmail ?? emailContext(this);
    const operations = new OperationsConstruct(this, 'Operations', {
      apis: { core: this.core.httpApi, platform: this.platform.httpApi },
      dlqs: Object.fromEntries([...this.workers.queues].map(([name, pair]) => [name, pair.dlq])),
      functions: [...this.core.functions.values(), ...this.platform.functions.values(), ...this.workers.functions],
      ...(alarmEmail ? { alarmEmail } : {}),
    });

    // CloudFormation output keys are alphanumeric: BaseUrl is base_url, and so on.
    new CfnOutput(this, 'BaseUrl', { value: this.core.url, description: 'base_url: the Core API' });
    new CfnOutput(this, 'ConsoleUrl', { value: this.platform.url, description: 'console_url: the Platform API' });
    new CfnOutput(this, 'ConsoleWebUrl', { value: this.console.url, description: 'The console web app (sign in with a Cognito console user); /api on the same host is the Platform API' });
    new CfnOutput(this, 'AuthUrl', { value: this.auth.authUrl, description: 'auth_url: the token endpoint is {auth_url}/oauth2/token' });
    new CfnOutput(this, 'UserPoolId', { value: this.auth.userPool.userPoolId, description: 'Cognito user pool of the OAuth clients' });
    new CfnOutput(this, 'TableName', { value: this.data.table.tableName, description: 'The single DynamoDB table' });
    new CfnOutput(this, 'AlarmTopicArn', { value: operations.topic.topicArn, description: 'The SNS topic every alarm notifies (subscribe to it, or deploy with -c alarmEmail=...)' });
    new CfnOutput(this, 'ArtifactBucket', { value: this.data.artifacts.bucketName, description: 'Model and index artifacts' });
  }
}
