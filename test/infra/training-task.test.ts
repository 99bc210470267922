import { existsSync, readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { applyNag } from '../../lib/nag.ts';
import { ServiceStack } from '../../lib/stack.ts';
import { TRAINING_DOCKERFILE, TRAINING_TASK_ACKNOWLEDGED } from '../../lib/training-task.ts';
import { tableActions } from '../../shared/routes.ts';
import { workers } from '../../shared/queue/workers.ts';

type Resource = { Type: string; Properties: Record<string, any> };
/** The training task's nested stack, and the service's stack (the training worker). */
let template: Template;
let resources: Record<string, Resource>;
let parent: Record<string, Resource>;
let stack: ServiceStack;

/** What cdk-nag reported at synthesis (empty when it passed). */
let nagReport = '';

beforeAll(() => {
  // No Docker engine here: the image's asset is only staged at synthesis (built at deploy).
  const env = { account: '123456789012', region: 'eu-west-1' };
  // cdk-nag runs at synthesis and fails it on a finding nobody acknowledged; only the training
  // task's findings are this file's to check (the rest of the stack has its own tests).
  const nagged = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  applyNag(nagged, new ServiceStack(nagged, 'TrainingTaskStack', { env }));
  try {
    nagged.synth();
  } catch (e) {
    if (!(e instanceof Error) || !/Validation/.test(`${e.name} ${e.message}`)) throw e;
    nagReport = e.message;
  }
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new ServiceStack(app, 'TrainingTaskStack', { env });
  template = Template.fromStack(stack.training);
  resources = template.toJSON().Resources as Record<string, Resource>;
  parent = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
}, 120_000);

const ofType = (type: string, in_ = resources) => Object.entries(in_).filter(([, r]) => r.Type === type);
const logicalId = (c: { node: { defaultChild?: unknown } }, of: { resolve(x: unknown): unknown } = stack.training) => of.resolve((c.node.defaultChild as { logicalId: string }).logicalId) as string;
/** Every statement of the policies attached to a role (by the role's logical id). */
function statementsOf(roleId: string, in_ = resources): { Action: string | string[]; Resource: unknown; Condition?: unknown }[] {
  return ofType('AWS::IAM::Policy', in_)
    .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
}
const actionsOf = (s: { Action: string | string[] }) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

describe('the training task (ECS Fargate)', () => {
  it('is a Fargate task definition of 2 vCPU and 16 GB running the image built from this repository', () => {
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      RequiresCompatibilities: ['FARGATE'],
      Cpu: '2048',
      Memory: '16384',
      NetworkMode: 'awsvpc',
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
      ContainerDefinitions: [
        Match.objectLike({
          Name: 'train',
          Command: ['node', '--max-old-space-size=13926', '--enable-source-maps', 'train-task.mjs'],
          Image: { 'Fn::Sub': Match.stringLikeRegexp('container-assets') },
          LogConfiguration: Match.objectLike({ LogDriver: 'awslogs' }),
          Environment: Match.arrayWith([
            { Name: 'TABLE_NAME', Value: Match.anyValue() },
            { Name: 'ARTIFACT_BUCKET', Value: Match.anyValue() },
          ]),
        }),
      ],
    });
    expect(existsSync(TRAINING_DOCKERFILE)).toBe(true);
    expect(readFileSync(TRAINING_DOCKERFILE, 'utf8')).toContain('functions/workers/train-task.ts');
    template.resourceCountIs('AWS::ECS::Cluster', 1);
  });

  it("grants its role the training worker's table actions on the table, and PutObject and GetObject under models/ only", () => {
    const td = stack.training.taskDefinition;
    const statements = statementsOf(logicalId(td.taskRole as unknown as { node: { defaultChild?: unknown } }));
    const spec = workers.find((w) => w.handler === 'workers/train');
    const table = statements.find((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
    expect(actionsOf(table as { Action: string[] }).sort()).toEqual(
      tableActions(spec!.access)
        .map((a) => `dynamodb:${a}`)
        .sort(),
    );
    // The table's ARN, passed in from the service's stack.
    expect(JSON.stringify(table?.Resource)).toMatch(/referenceto.*DataTable.*Arn/);
    const s3 = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
    // GetObject: the version it stored, read back to take out a user erased meanwhile (withoutErased).
    expect(s3.map(actionsOf).sort()).toEqual([['s3:GetObject'], ['s3:PutObject']]);
    for (const s of s3) expect(JSON.stringify(s.Resource)).toContain('/models/*');
    for (const s of s3) expect(JSON.stringify(s.Resource)).not.toContain('/search/*');
    // Nothing else: no wildcard actions, no other service.
    expect(statements.flatMap(actionsOf).every((a) => a.startsWith('dynamodb:') || a === 's3:PutObject' || a === 's3:GetObject')).toBe(true);
  });

  it("lets the maintenance function describe this cluster's tasks only, and tells it where", () => {
    const maintainer = stack.workers.functions.find((f) => f.module === 'workers/maintain');
    const roleId = logicalId(maintainer!.role as unknown as { node: { defaultChild?: unknown } }, stack);
    const describe = statementsOf(roleId, parent).find((s) => actionsOf(s).includes('ecs:DescribeTasks'));
    expect(actionsOf(describe!)).toEqual(['ecs:DescribeTasks']);
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const output = (v: unknown) => JSON.stringify(outputs[JSON.stringify(v).match(/Outputs\.([A-Za-z0-9]+)/)?.[1] ?? '']?.Value);
    // Tasks of the training cluster (task/<cluster name>/*), and a condition naming the cluster.
    expect(JSON.stringify(describe!.Resource)).toMatch(/:task\//);
    expect(output(describe!.Resource)).toContain(logicalId(stack.training.cluster));
    expect(output((describe!.Condition as { ArnEquals: Record<string, unknown> }).ArnEquals['ecs:cluster'])).toContain(logicalId(stack.training.cluster));
    // No other function may, and the maintenance function may not start or stop a task.
    const describers = ofType('AWS::IAM::Policy', parent).filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('ecs:DescribeTasks'));
    expect(describers.map(([, p]) => p.Properties.Roles)).toEqual([[{ Ref: roleId }]]);
    expect(
      statementsOf(roleId, parent)
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('ecs:') || a === 'iam:PassRole'),
    ).toEqual(['ecs:DescribeTasks']);
    const env = (parent[logicalId(maintainer!, stack)] as Resource).Properties.Environment.Variables as Record<string, unknown>;
    for (const k of ['TRAINING_TASK_CLUSTER', 'TRAINING_TASK_DEFINITION', 'TRAINING_TASK_CONTAINER', 'TRAINING_TASK_SUBNETS', 'TRAINING_TASK_SECURITY_GROUPS']) expect(env, k).toHaveProperty(k);
  });

  it('lets the training worker run this task definition in this cluster, pass its roles, and tells it where', () => {
    const worker = stack.workers.functions.find((f) => f.module === 'workers/train');
    const roleId = logicalId(worker!.role as unknown as { node: { defaultChild?: unknown } }, stack);
    const statements = statementsOf(roleId, parent);
    // Outputs of the nested stack: what each stands for there (the task definition's Ref, the cluster's Arn).
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const output = (v: unknown) => JSON.stringify(outputs[JSON.stringify(v).match(/Outputs\.([A-Za-z0-9]+)/)?.[1] ?? '']?.Value);
    const run = statements.find((s) => actionsOf(s).includes('ecs:RunTask'));
    expect(actionsOf(run!)).toEqual(['ecs:RunTask']);
    expect(output(run!.Resource)).toContain(logicalId(stack.training.taskDefinition));
    expect(output((run!.Condition as { ArnEquals: Record<string, unknown> }).ArnEquals['ecs:cluster'])).toContain(logicalId(stack.training.cluster));
    const pass = statements.find((s) => actionsOf(s).includes('iam:PassRole'));
    expect(pass!.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } });
    expect((pass!.Resource as unknown[]).length).toBe(2);
    // Only the training worker may start it.
    const runners = ofType('AWS::IAM::Policy', parent).filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('ecs:RunTask'));
    expect(runners.map(([, p]) => p.Properties.Roles)).toEqual([[{ Ref: roleId }]]);
    expect(ofType('AWS::IAM::Policy').some(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('ecs:RunTask'))).toBe(false);
    const fn = parent[logicalId(worker!, stack)] as Resource;
    const env = fn.Properties.Environment.Variables as Record<string, unknown>;
    for (const k of ['TRAINING_TASK_MIN_EVENTS', 'TRAINING_TASK_CLUSTER', 'TRAINING_TASK_DEFINITION', 'TRAINING_TASK_CONTAINER', 'TRAINING_TASK_SUBNETS', 'TRAINING_TASK_SECURITY_GROUPS'])
      expect(env, k).toHaveProperty(k);
    expect(env.TRAINING_TASK_MIN_EVENTS).toBe('200000');
    expect(env.TRAINING_TASK_CONTAINER).toBe('train');
  });

  it('runs in public subnets without NAT, no inbound rule, DynamoDB and S3 through gateway endpoints', () => {
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    const sg = resources[logicalId(stack.training.securityGroup)] as Resource;
    expect(sg.Properties.SecurityGroupIngress).toBeUndefined();
    const endpoints = ofType('AWS::EC2::VPCEndpoint').map(([, r]) => JSON.stringify(r.Properties.ServiceName));
    expect(endpoints.some((s) => s.includes('dynamodb'))).toBe(true);
    expect(endpoints.some((s) => s.includes('.s3'))).toBe(true);
  });

  it('passes cdk-nag AwsSolutions (its acknowledgements aside)', () => {
    expect(nagReport).not.toMatch(/TrainingTaskStack\/Training\//);
  });

  it('gives every cdk-nag acknowledgement of its own a reason', () => {
    for (const a of TRAINING_TASK_ACKNOWLEDGED) expect(a.reason.length, a.id).toBeGreaterThan(40);
  });
});
