import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { AuthConstruct } from './auth.ts';
import { DataConstruct } from './data.ts';
import { ServiceHttpApi } from './http-api.ts';
import { OperationsConstruct } from './operations.ts';
import { WorkersConstruct } from './workers.ts';

export interface ServiceStackProps extends StackProps {
  /** Cognito domain prefix (globally unique); default `recsearch-<account id>`. */
  authDomainPrefix?: string;
  /** Steady-state requests per second and burst per API stage. */
  throttle?: { rateLimit: number; burstLimit: number };
  /** Embedding model: the local hashing embedding (default) or Bedrock Titan Text Embeddings V2. */
  embeddingProvider?: 'local' | 'bedrock';
}

export class ServiceStack extends Stack {
  readonly data: DataConstruct;
  readonly auth: AuthConstruct;
  readonly core: ServiceHttpApi;
  readonly platform: ServiceHttpApi;
  readonly workers: WorkersConstruct;

  constructor(scope: Construct, id: string, props: ServiceStackProps = {}) {
    super(scope, id, props);
    const throttle = props.throttle ?? { rateLimit: 1000, burstLimit: 2000 };
    this.data = new DataConstruct(this, 'Data');
    this.auth = new AuthConstruct(this, 'Auth', props.authDomainPrefix ? { domainPrefix: props.authDomainPrefix } : {});
    this.workers = new WorkersConstruct(this, 'Workers');
    const base = { table: this.data.table, userPool: this.auth.userPool, bucket: this.data.artifacts, embeddingProvider: props.embeddingProvider ?? 'local' };
    this.workers.addFunctions(base);
    const resources = { ...base, queues: new Map([...this.workers.queues].map(([k, v]) => [k, v.queue])) };
    this.core = new ServiceHttpApi(this, 'CoreApi', { api: 'core', resources, throttle });
    this.platform = new ServiceHttpApi(this, 'PlatformApi', { api: 'platform', resources, throttle });

    new OperationsConstruct(this, 'Operations', {
      apis: { core: this.core.httpApi, platform: this.platform.httpApi },
      dlqs: Object.fromEntries([...this.workers.queues].map(([name, pair]) => [name, pair.dlq])),
      functions: [...this.core.functions.values(), ...this.platform.functions.values(), ...this.workers.functions],
    });

    // CloudFormation output keys are alphanumeric: BaseUrl is base_url, and so on.
    new CfnOutput(this, 'BaseUrl', { value: this.core.url, description: 'base_url: the Core API' });
    new CfnOutput(this, 'ConsoleUrl', { value: this.platform.url, description: 'console_url: the Platform API' });
    new CfnOutput(this, 'AuthUrl', { value: this.auth.authUrl, description: 'auth_url: the token endpoint is {auth_url}/oauth2/token' });
    new CfnOutput(this, 'UserPoolId', { value: this.auth.userPool.userPoolId, description: 'Cognito user pool of the OAuth clients' });
    new CfnOutput(this, 'TableName', { value: this.data.table.tableName, description: 'The single DynamoDB table' });
    new CfnOutput(this, 'ArtifactBucket', { value: this.data.artifacts.bucketName, description: 'Model and index artifacts' });
  }
}
