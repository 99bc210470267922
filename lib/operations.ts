import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Alarms: any message in a dead-letter queue, 5xx rate per API, Lambda throttles. */
export class OperationsConstruct extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: { apis: Record<string, HttpApi>; dlqs: Record<string, IQueue>; functions: IFunction[] }) {
    super(scope, id);
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
    // One alarm per function: alarms on math expressions take at most 10 metrics.
    props.functions.forEach((f, i) => {
      this.alarms.push(
        new cloudwatch.Alarm(this, `Throttles${i}`, {
          alarmDescription: `Invocations of ${f.node.path} are being throttled`,
          metric: f.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    });
  }
}
