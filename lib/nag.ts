import { Names, Token, Validations, type App, type CfnElement } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ARTIFACT_PREFIXES } from '../shared/grants.ts';
import type { ServiceStack } from './stack.ts';

/** Every cdk-nag AwsSolutions finding this design accepts, each with its reason. */
export const ACKNOWLEDGED: readonly { id: string; reason: string }[] = [
  {
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    reason:
      "Only CDK's own helper functions (the console's BucketDeployment handler) keep AWSLambdaBasicExecutionRole, the documented minimum for Lambda; the service's functions have roles of their own, with CreateLogStream and PutLogEvents on their log group only (lib/service-function.ts).",
  },
  {
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'Actions with no resource-level permissions: X-Ray PutTraceSegments/PutTelemetryRecords (every function), ecr:GetAuthorizationToken (the training task execution role), cloudfront:CreateInvalidation/GetInvalidation (the console deployment helper).',
  },
  { id: 'AwsSolutions-L1', reason: 'The project targets the nodejs22.x runtime on purpose (its tested Node line); moving runtimes is a deliberate change.' },
  {
    id: 'AwsSolutions-APIG4',
    reason: 'Routes are authorised inside each handler (aws-jwt-verify for Cognito access tokens, hashed Platform API keys), so one code path and one error envelope serve AWS and the local stack.',
  },
  {
    id: 'AwsSolutions-COG8',
    reason:
      "The pool's users are the console's people, created by an admin (no self sign-up), with TOTP MFA required and a WAF rate rule on the pool; Plus-tier threat protection would add per-user cost for sign-ins those already guard. Its machine app clients (client credentials) are not sign-ins.",
  },
  { id: 'AwsSolutions-COG4', reason: 'No API Gateway Cognito authorizer: tokens are verified in the handlers (see APIG4).' },
  {
    id: 'AwsSolutions-SNS2',
    reason:
      "The alarm topic: CloudWatch alarms cannot publish to a topic encrypted with SNS's AWS-managed key, and its messages hold alarm names and metric values only (no tenant data); a customer-managed key for them would cost more than the topic.",
  },
];

/** Object-prefix grants on the artifact bucket (`<bucket>/search/*`, `<bucket>/models/*`). */
function artifactPrefixAcknowledgements(stack: ServiceStack): { id: string; reason: string }[] {
  const bucketId = stack.resolve((stack.data.artifacts.node.defaultChild as CfnElement).logicalId) as string;
  // In the parent stack the bucket's ARN is its attribute; in the Platform API's nested stack, the
  // parameter that passes it.
  const arns = [`${bucketId}.Arn`, `referenceto${Names.uniqueId(stack.data.artifacts.node.defaultChild as CfnElement)}Arn`];
  return ARTIFACT_PREFIXES.flatMap((p) =>
    arns.map((arn) => ({
      id: `AwsSolutions-IAM5[Resource::<${arn}>/${p}/*]`,
      reason: `Artifacts are objects under the ${p}/ prefix, one key per tenant and build or version; grants are limited to that prefix and to GetObject/PutObject.`,
    })),
  );
}

/**
 * The maintenance function's DescribeTasks on the training cluster's tasks
 * (`task/<cluster name>/*`: a task's ARN ends in its random id; lib/training-task.ts). The
 * cluster's name comes from the training task's nested stack as an output.
 */
function trainingTaskAcknowledgements(stack: ServiceStack): { id: string; reason: string }[] {
  const nested = stack.resolve((stack.training.nestedStackResource as CfnElement).logicalId) as string;
  const clusterName = `<${nested}.Outputs.${Names.uniqueId(stack.training.cluster.node.defaultChild as CfnElement)}Ref>`;
  const [region, account] = [stack.region, stack.account].map((v, i) => (Token.isUnresolved(v) ? (i ? '<AWS::AccountId>' : '<AWS::Region>') : v));
  // The partition is known once the region is (synthesis with CDK_DEFAULT_REGION set), else a token.
  return ['<AWS::Partition>', 'aws'].map((partition) => ({
    id: `AwsSolutions-IAM5[Resource::arn:${partition}:ecs:${region}:${account}:task/${clusterName}/*]`,
    reason: "The maintenance pass asks after the training cluster's tasks (DescribeTasks, whose resource is a task ARN ending in the task's random id); the grant is limited to that cluster's tasks.",
  }));
}

/** Runs the AwsSolutions pack over the app at synthesis, with this stack's acknowledgements. */
export function applyNag(app: App, stack: ServiceStack): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  // The Platform API's nested stack holds functions of the same kind: the same acknowledgements.
  for (const a of [...ACKNOWLEDGED, ...artifactPrefixAcknowledgements(stack)]) for (const s of [stack, stack.platformStack]) Validations.of(s).acknowledge(a);
  for (const a of trainingTaskAcknowledgements(stack)) Validations.of(stack).acknowledge(a);
}
