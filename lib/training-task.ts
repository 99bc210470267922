import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Names, NestedStack, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { DEFAULT_TASK_MIN_EVENTS } from '../shared/config.ts';
import type { Construct } from 'constructs';
import { tableActions } from '../shared/routes.ts';
import { trainingTask } from '../shared/queue/workers.ts';
import type { ServiceFunction } from './service-function.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

export interface TrainingTaskProps {
  table: ITable;
  bucket: IBucket;
  /** The training worker: it starts the task (RunTask, PassRole) and decides when. */
  worker: ServiceFunction;
  /** The maintenance function: it asks after started tasks (DescribeTasks) and ends the runs of those that stopped. */
  maintainer: ServiceFunction;
  /** Tenants with at least this many events train in the task (TRAINING_TASK_MIN_EVENTS; default DEFAULT_TASK_MIN_EVENTS, 200,000). */
  minEvents?: number;
  /** The task's size: default 2 vCPU and 16 GB (training is mostly one thread; the memory is what Lambda's 10 GB lacks). */
  cpu?: number;
  memoryMiB?: number;
}

/**
 * The training run as an ECS Fargate task, for tenants past what the training worker's Lambda
 * affords (15 minutes, 10 GB): the same training code (functions/workers/train-task.ts, bundled
 * into the image by Dockerfile.training from this repository), started by the training worker
 * with the run in its environment (shared/recs/launcher.ts).
 * - Network: a VPC of its own, public subnets only (no NAT gateway to pay for), the task with a
 *   public address for the image pull and logs, and gateway endpoints keeping DynamoDB and S3
 *   traffic inside AWS; a security group with no inbound rule.
 * - Grants, least privilege: the task role gets the training worker's table actions on the table
 *   and PutObject under models/ (a run stores its artifact and nothing else); the worker gets
 *   RunTask on this task definition in this cluster and PassRole for the task's two roles; the
 *   maintenance function DescribeTasks on this cluster's tasks.
 * Synthesis only stages the image's build context (the files .dockerignore keeps); Docker builds
 * it at `cdk deploy`, so tests and `npm run synth` need no Docker engine. A nested stack: the
 * service's stack is near CloudFormation's 500 resources per stack.
 */
export class TrainingTask extends NestedStack {
  readonly cluster: ecs.Cluster;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly container: ecs.ContainerDefinition;
  readonly securityGroup: ec2.SecurityGroup;
  readonly vpc: ec2.Vpc;

  constructor(scope: Construct, id: string, props: TrainingTaskProps) {
    super(scope, id);
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'tasks', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 }],
      gatewayEndpoints: {
        DynamoDb: { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB },
        S3: { service: ec2.GatewayVpcEndpointAwsService.S3 },
      },
    });
    this.securityGroup = new ec2.SecurityGroup(this, 'TaskSecurityGroup', { vpc: this.vpc, description: 'Training tasks: outbound only (AWS APIs), no inbound', allowAllOutbound: true });
    this.cluster = new ecs.Cluster(this, 'Cluster', { vpc: this.vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
    this.taskDefinition = new ecs.FargateTaskDefinition(this, 'Task', {
      cpu: props.cpu ?? 2048,
      memoryLimitMiB: props.memoryMiB ?? 16_384,
      runtimePlatform: { cpuArchitecture: ecs.CpuArchitecture.ARM64, operatingSystemFamily: ecs.OperatingSystemFamily.LINUX },
    });
    const logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    const heapMb = Math.floor((props.memoryMiB ?? 16_384) * 0.85);
    this.container = this.taskDefinition.addContainer('train', {
      image: ecs.ContainerImage.fromAsset(root, { file: 'Dockerfile.training', platform: Platform.LINUX_ARM64 }),
      command: ['node', `--max-old-space-size=${heapMb}`, '--enable-source-maps', 'train-task.mjs'],
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: 'train', logGroup }),
      environment: {
        TABLE_NAME: props.table.tableName,
        ARTIFACT_BUCKET: props.bucket.bucketName,
        POWERTOOLS_SERVICE_NAME: 'recsearch',
        POWERTOOLS_METRICS_DISABLED: 'true',
        POWERTOOLS_TRACE_ENABLED: 'false',
      },
    });

    // The task role: what runTraining does, nothing more (shared/queue/workers.ts `trainingTask`;
    // the local stack checks the task's calls against the same, local/task-grants.ts).
    const { access } = trainingTask;
    this.taskDefinition.addToTaskRolePolicy(new iam.PolicyStatement({ actions: tableActions(access).map((a) => `dynamodb:${a}`), resources: [props.table.tableArn] }));
    this.taskDefinition.addToTaskRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: access.bucketPuts.map((p) => `${props.bucket.bucketArn}/${p}/*`) }));
    this.taskDefinition.addToTaskRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: access.bucketGets.map((p) => `${props.bucket.bucketArn}/${p}/*`) }));

    // The worker starts it: RunTask of this definition in this cluster only, and the roles it passes.
    const w = props.worker;
    w.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ecs:RunTask'],
        resources: [this.taskDefinition.taskDefinitionArn],
        conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
      }),
    );
    w.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.taskDefinition.taskRole.roleArn, this.taskDefinition.obtainExecutionRole().roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
      }),
    );
    // The maintenance pass asks after the tasks of this cluster only (a run whose task stopped
    // without ending it is ended there: shared/recs/launcher.ts sweepTaskRuns).
    props.maintainer.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ecs:DescribeTasks'],
        resources: [this.formatArn({ service: 'ecs', resource: 'task', resourceName: `${this.cluster.clusterName}/*` })],
        conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
      }),
    );
    const publicSubnets = this.vpc.selectSubnets({ subnetType: ec2.SubnetType.PUBLIC }).subnetIds;
    for (const f of [w, props.maintainer]) {
      f.addEnvironment('TRAINING_TASK_MIN_EVENTS', String(props.minEvents ?? DEFAULT_TASK_MIN_EVENTS));
      f.addEnvironment('TRAINING_TASK_CLUSTER', this.cluster.clusterArn);
      f.addEnvironment('TRAINING_TASK_DEFINITION', this.taskDefinition.taskDefinitionArn);
      f.addEnvironment('TRAINING_TASK_CONTAINER', this.container.containerName);
      f.addEnvironment('TRAINING_TASK_SUBNETS', publicSubnets.join(','));
      f.addEnvironment('TRAINING_TASK_SECURITY_GROUPS', this.securityGroup.securityGroupId);
    }

    for (const a of TRAINING_TASK_ACKNOWLEDGED) Validations.of(this).acknowledge(a);
    // The bucket's ARN comes into this nested stack as a parameter named after the bucket.
    const bucketArn = `referenceto${Names.nodeUniqueId((props.bucket.node.defaultChild ?? props.bucket).node)}Arn`;
    Validations.of(this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketArn}>/models/*]`,
      reason:
        'Model artifacts are objects under the models/ prefix, one key per tenant and version; the task may only PutObject there and GetObject what it stored (to rewrite it without a user erased meanwhile).',
    });
  }
}

/** cdk-nag AwsSolutions findings of the training task this design accepts, each with its reason. */
export const TRAINING_TASK_ACKNOWLEDGED: readonly { id: string; reason: string }[] = [
  {
    id: 'AwsSolutions-VPC7',
    reason:
      'The VPC only hosts short-lived training tasks with no inbound traffic; their calls are to DynamoDB and S3 (through gateway endpoints) and logged by CloudTrail; flow logs would add cost without a reader.',
  },
  { id: 'AwsSolutions-ECS2', reason: 'The environment holds only the table and bucket names and Powertools switches, no secrets; the run itself comes as a RunTask override.' },
];

/** The path of the image's Dockerfile (tests check it exists). */
export const TRAINING_DOCKERFILE = join(root, 'Dockerfile.training');
