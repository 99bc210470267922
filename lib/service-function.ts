import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, LayerVersion, Runtime, Tracing, type ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import { NodejsFunction, OutputFormat, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IUserPool } from 'aws-cdk-lib/aws-cognito';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keys } from '../shared/data/keys.ts';
import { ARTIFACT_PREFIXES } from '../shared/grants.ts';
import { tableActions, type Access } from '../shared/routes.ts';
import type { QueueName } from '../shared/queue/workers.ts';

/** The stack's shared resources a function may be bound to. */
export interface ServiceResources {
  table: ITable;
  userPool: IUserPool;
  bucket: IBucket;
  queues: ReadonlyMap<QueueName, IQueue>;
  /** `local` (default) or `bedrock` (Titan Text Embeddings V2). */
  embeddingProvider: 'local' | 'bedrock';
}

/** The Core API's request quota per tenant (TENANT_RATE_PER_SECOND, TENANT_BURST). */
export interface TenantQuota {
  ratePerSecond: number;
  burst: number;
}

export const TITAN_MODEL_ID = 'amazon.titan-embed-text-v2:0';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Powertools packages the functions load from the AWS-published Powertools layer instead of
 * their bundles (Tracer alone brings the X-Ray SDK, ~115 KB minified). The batch utility stays
 * bundled (workers only); it imports commons from the layer like the rest.
 */
export const POWERTOOLS_FROM_LAYER = ['@aws-lambda-powertools/commons', '@aws-lambda-powertools/logger', '@aws-lambda-powertools/metrics', '@aws-lambda-powertools/tracer'] as const;
/** The installed Powertools version: the layer is pinned to exactly the code the tests ran. */
export const POWERTOOLS_VERSION = (JSON.parse(readFileSync(join(root, 'node_modules/@aws-lambda-powertools/logger/package.json'), 'utf8')) as { version: string }).version;
/** esbuild aliases of every Lambda bundle: the SDK's default credential chain becomes the env provider. */
const LAMBDA_ALIASES = { '@aws-sdk/credential-provider-node': join(root, 'shared/aws/lambda-credentials.ts') } as const;
/**
 * The esbuild aliases of a stack's bundles. A stack that embeds locally carries no Bedrock client,
 * the only client here with event-stream operations, so its bundles also drop the SDK's
 * event-stream code (see shared/aws/no-event-streams.ts).
 */
export function lambdaAliases(embeddingProvider: 'local' | 'bedrock'): Record<string, string> {
  return embeddingProvider === 'bedrock' ? { ...LAMBDA_ALIASES } : { ...LAMBDA_ALIASES, '@smithy/core/event-streams': join(root, 'shared/aws/no-event-streams.ts') };
}

/** One layer per stack: its ARN comes from the SSM parameter AWS publishes for each Powertools release. */
function powertoolsLayer(scope: Construct): ILayerVersion {
  const stack = Stack.of(scope);
  const id = 'PowertoolsLayer';
  const existing = stack.node.tryFindChild(id) as ILayerVersion | undefined;
  if (existing) return existing;
  const arn = StringParameter.valueForStringParameter(stack, `/aws/service/powertools/typescript/generic/all/${POWERTOOLS_VERSION}`);
  return LayerVersion.fromLayerVersionArn(stack, id, arn);
}

export interface ServiceFunctionProps {
  /** Handler module under functions/, e.g. `core/items/get`. */
  handler: string;
  /** The stack's embedding provider, a build-time constant: `local` leaves the Bedrock client out of the bundle. */
  embeddingProvider: 'local' | 'bedrock';
  environment?: Record<string, string>;
  timeout?: Duration;
  memorySize?: number;
  logRetention?: RetentionDays;
  /**
   * A log group shared with other functions (each API's functions share one: a stack has at
   * most 500 resources, and a group per function was 60 of them). Lambda names the streams of a
   * shared group after the function. Default: a group of its own.
   */
  logGroup?: ILogGroup;
  /** Concurrency set aside for this function alone (and the most it may use). */
  reservedConcurrentExecutions?: number;
}

/**
 * Owns the defaults of every Lambda: Node.js 22 on arm64, X-Ray tracing (no response or error
 * capture), esbuild bundle
 * (minified ESM with source maps, AWS SDK bundled, Powertools from its layer), a log group
 * with retention (its own, or its API's), Powertools settings. `bind*` grant least privilege and merge environment variables.
 */
export class ServiceFunction extends NodejsFunction {
  readonly module: string;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const logGroup =
      props.logGroup ??
      new LogGroup(scope, `${id}Logs`, {
        retention: props.logRetention ?? RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
    // A role of its own without AWSLambdaBasicExecutionRole, whose CreateLogGroup, CreateLogStream
    // and PutLogEvents are on every log group of the account ("*"): the function writes to
    // `logGroup` alone, which exists, so it is granted CreateLogStream and PutLogEvents there only.
    const role = new iam.Role(scope, `${id}Role`, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description: `functions/${props.handler}.ts` });
    const fnProps: NodejsFunctionProps = {
      entry: join(root, 'functions', `${props.handler}.ts`),
      role,
      description: `functions/${props.handler}.ts`,
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.seconds(10),
      ...(props.reservedConcurrentExecutions !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions } : {}),
      tracing: Tracing.ACTIVE,
      layers: [powertoolsLayer(scope)],
      logGroup,
      projectRoot: root,
      depsLockFilePath: join(root, 'package-lock.json'),
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'recsearch',
        POWERTOOLS_METRICS_NAMESPACE: 'recsearch',
        ...props.environment,
        // Never X-Ray metadata: responses hold keys, client secrets and tenant data; errors can
        // carry request values (shared/observability.ts holds to this in code as well).
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        POWERTOOLS_TRACER_CAPTURE_ERROR: 'false',
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        mainFields: ['module', 'main'],
        // Bundle the AWS SDK too (a pinned version, fewer files to load at init); Powertools comes from its layer.
        externalModules: [...POWERTOOLS_FROM_LAYER],
        esbuildArgs: Object.fromEntries(Object.entries(lambdaAliases(props.embeddingProvider)).map(([from, to]) => [`--alias:${from}`, to])),
        define: { 'process.env.EMBEDDING_PROVIDER': JSON.stringify(props.embeddingProvider) },
        banner: "import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);",
      },
    };
    super(scope, id, fnProps);
    logGroup.grantWrite(role);
    this.module = props.handler;
  }

  /** Grants exactly the declared table actions (GSIs only when the handler queries them) and names the table. */
  bindTable(table: ITable, access: Access): this {
    this.addEnvironment('TABLE_NAME', table.tableName);
    const actions = tableActions(access).map((a) => `dynamodb:${a}`);
    if (actions.length === 0) return this;
    this.addToRolePolicy(new iam.PolicyStatement({ actions, resources: [table.tableArn] }));
    if (access.indexes?.length) {
      this.addToRolePolicy(new iam.PolicyStatement({ actions: ['dynamodb:Query'], resources: access.indexes.map((i) => `${table.tableArn}/index/${i}`) }));
    }
    return this;
  }

  /** Everything the declared access needs: table, pool, bucket, queues, embedding model. */
  bindAccess(r: ServiceResources, access: Access, opts: { verifiesTokens: boolean }): this {
    this.bindTable(r.table, access);
    if (opts.verifiesTokens || access.cognito?.length) this.bindUserPool(r.userPool, access);
    if (access.bucket) this.bindBucket(r.bucket, access.bucket, access.bucketPrefixes);
    if (access.bucketPuts?.length) this.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: access.bucketPuts.map((p) => `${r.bucket.bucketArn}/${p}/*`) }));
    if (access.bucketDeletes?.length) this.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:DeleteObject'], resources: access.bucketDeletes.map((p) => `${r.bucket.bucketArn}/${p}/*`) }));
    for (const q of access.queues ?? []) this.bindQueue(q, r.queues.get(q) as IQueue);
    for (const q of access.queueDepth ?? []) this.bindQueueDepth(q, r.queues.get(q) as IQueue);
    if (access.embeds) this.bindEmbeddings(r.embeddingProvider);
    if (access.consoleSessions || access.opensSessions) this.bindSessionRows(r.table, access.opensSessions ?? false);
    return this;
  }

  /**
   * A function that authenticates console sessions records its checks of a session's user
   * (shared/console-auth/recheck.ts): UpdateItem on the console-session rows only (partition keys
   * `CONSOLESESSION#...`), so a read-only route still writes no tenant data. Its AdminGetUser is
   * declared in the route's `cognito` (bindUserPool). The sign-in function also opens and ends
   * sessions (`opens`): PutItem and DeleteItem on those rows only.
   */
  bindSessionRows(table: ITable, opens: boolean): this {
    this.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:UpdateItem', ...(opens ? ['dynamodb:PutItem', 'dynamodb:DeleteItem'] : [])],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${keys.consoleSessionPkPrefix}*`] } },
      }),
    );
    return this;
  }

  /**
   * GetObject (and PutObject) on the function's artifact prefixes only (`prefixes`: both when not
   * said), plus ListBucket limited to those prefixes: without it S3 answers a missing artifact
   * with 403 instead of 404 NoSuchKey.
   */
  bindBucket(bucket: IBucket, mode: 'read' | 'readwrite', prefixes: Access['bucketPrefixes'] = ARTIFACT_PREFIXES): this {
    this.addEnvironment('ARTIFACT_BUCKET', bucket.bucketName);
    const actions = mode === 'read' ? ['s3:GetObject'] : ['s3:GetObject', 's3:PutObject'];
    this.addToRolePolicy(new iam.PolicyStatement({ actions, resources: prefixes.map((p) => `${bucket.bucketArn}/${p}/*`) }));
    this.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn], conditions: { StringLike: { 's3:prefix': prefixes.map((p) => `${p}/*`) } } }));
    return this;
  }

  /** SendMessage on one queue, whose URL goes into QUEUE_URL_<NAME>. */
  bindQueue(name: QueueName, queue: IQueue): this {
    this.addEnvironment(`QUEUE_URL_${name.toUpperCase()}`, queue.queueUrl);
    this.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
    return this;
  }

  /** GetQueueAttributes on one queue (its backlog), whose URL goes into QUEUE_URL_<NAME>. */
  bindQueueDepth(name: QueueName, queue: IQueue): this {
    this.addEnvironment(`QUEUE_URL_${name.toUpperCase()}`, queue.queueUrl);
    this.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:GetQueueAttributes'], resources: [queue.queueArn] }));
    return this;
  }

  /** The embedding provider; Bedrock needs InvokeModel on the Titan model only. */
  bindEmbeddings(provider: 'local' | 'bedrock'): this {
    this.addEnvironment('EMBEDDING_PROVIDER', provider);
    this.addEnvironment('EMBEDDING_DIMENSIONS', '512');
    if (provider === 'bedrock') {
      this.addToRolePolicy(
        new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [`arn:${Stack.of(this).partition}:bedrock:${Stack.of(this).region}::foundation-model/${TITAN_MODEL_ID}`] }),
      );
    }
    return this;
  }

  /**
   * The Core API's per-tenant request quota (shared/http/quota.ts): its rate and burst, and
   * UpdateItem on the quota rows only (partition keys `QUOTA#...`), so a read-only route still
   * writes nothing else.
   */
  bindQuota(table: ITable, quota: TenantQuota): this {
    this.addEnvironment('TENANT_RATE_PER_SECOND', String(quota.ratePerSecond));
    this.addEnvironment('TENANT_BURST', String(quota.burst));
    this.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${keys.quotaPkPrefix}*`] } },
      }),
    );
    return this;
  }

  /** Sets the token verifier's issuer and grants the declared app-client actions on the pool. */
  bindUserPool(pool: IUserPool, access: Access): this {
    this.addEnvironment('AUTH_ISSUER', `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${pool.userPoolId}`);
    this.addEnvironment('USER_POOL_ID', pool.userPoolId);
    const actions = (access.cognito ?? []).map((a) => `cognito-idp:${a}`);
    if (actions.length) this.addToRolePolicy(new iam.PolicyStatement({ actions, resources: [pool.userPoolArn] }));
    return this;
  }
}
