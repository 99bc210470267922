import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Functions whose throttles one alarm sums. */
const THROTTLE_GROUP = 10;

/**
 * Alarms: any message in a dead-letter queue, 5xx rate per API, Lambda throttles. Each notifies
 * the alarm topic when it goes into alarm and when it recovers; `alarmEmail` subscribes an
 * address to it (AWS mails a confirmation first), and anything else can subscribe to the topic
 * (its ARN is the stack's `AlarmTopicArn` output).
 */
export class OperationsConstruct extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: { apis: Record<string, HttpApi>; dlqs: Record<string, IQueue>; functions: IFunction[]; alarmEmail?: string }) {
    super(scope, id);
    // Not encrypted with SNS's AWS-managed key: CloudWatch cannot publish to a topic under it (lib/nag.ts).
    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: 'RecSearch alarms', enforceSSL: true });
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    for (const [name, dlq] of Object.entries(props.dlqs)) {
      this.alarms.push(
        new cloudwatch.Alarm(this, `${name}DlqDepth`, {
          alarmDescription: `Messages are waiting in the ${name} dead-letter queue`,
          metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    for (const [name, api] of Object.entries(props.apis)) {
      const rate = new cloudwatch.MathExpression({
        expression: 'IF(requests > 0, 100 * errors / requests, 0)',
        usingMetrics: {
          errors: api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }),
          requests: api.metricCount({ period: Duration.minutes(5), statistic: 'Sum' }),
        },
        label: `${name} 5xx %`,
        period: Duration.minutes(5),
      });
      this.alarms.push(
        new cloudwatch.Alarm(this, `${name}5xxRate`, {
          alarmDescription: `More than 1% of ${name} API requests fail with 5xx`,
          metric: rate,
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 2,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    // Throttles of every function, ten to an alarm (an alarm's math expression takes at most 10
    // metrics): a stack holds at most 500 resources, and an alarm per function was 60 of them.
    // Each function named by its path below the stack: with the stack's name (up to 128
    // characters) ten times over, a description passed CloudWatch's 1,024 characters and the
    // deploy failed for stack names past about 50.
    const stackPath = `${Stack.of(this).node.path}/`;
    const nameOf = (f: IFunction) => (f.node.path.startsWith(stackPath) ? f.node.path.slice(stackPath.length) : f.node.path);
    for (let g = 0; g * THROTTLE_GROUP < props.functions.length; g++) {
      const group = props.functions.slice(g * THROTTLE_GROUP, (g + 1) * THROTTLE_GROUP);
      const usingMetrics = Object.fromEntries(group.map((f, k) => [`t${k}`, f.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' })]));
      this.alarms.push(
        new cloudwatch.Alarm(this, `Throttles${g}`, {
          alarmDescription: `Invocations are being throttled in one of: ${group.map(nameOf).join(', ')}`,
          // Each term filled with 0: Lambda publishes no data point for a function not invoked in
          // the period, and a sum of series has a value only where every series has one.
          metric: new cloudwatch.MathExpression({
            expression: Object.keys(usingMetrics)
              .map((t) => `FILL(${t}, 0)`)
              .join(' + '),
            usingMetrics,
            label: `throttles ${g}`,
            period: Duration.minutes(5),
          }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    const notify = new SnsAction(this.topic);
    for (const a of this.alarms) {
      a.addAlarmAction(notify);
      a.addOkAction(notify);
    }
  }
}
