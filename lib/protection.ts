import { createHash } from 'node:crypto';
import { Stack } from 'aws-cdk-lib';
import type { IUserPool } from 'aws-cdk-lib/aws-cognito';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export interface TokenEndpointFirewallProps {
  userPool: IUserPool;
  /** Requests one source address may make in `windowSeconds` before the rest are blocked (AWS WAF's minimum is 10). */
  requestsPerAddress: number;
  windowSeconds: 60 | 120 | 300 | 600;
}

/** The longest MetricName AWS WAF takes (a web ACL's and each rule's VisibilityConfig). */
const METRIC_NAME_MAX = 128;

/** The blocked requests' answer (its key among the web ACL's custom response bodies). */
const SLOW_DOWN = 'slow_down';

/**
 * A regional AWS WAF web ACL with a rate-based rule per source address, associated with the
 * Cognito user pool: it covers the pool's public endpoints, among them the token endpoint
 * (`{auth_url}/oauth2/token`), the one part of the service anyone can call without credentials
 * that does not run our code.
 *
 * Why not on the two HTTP APIs: AWS WAF protects API Gateway REST API stages, not HTTP APIs
 * (its regional resources are ALB, REST API, AppSync, Cognito user pools, App Runner, Amplify and
 * Verified Access), and a CLOUDFRONT-scoped web ACL in front of them must be created in
 * us-east-1, which a single-region stack deployed elsewhere cannot do; CloudFront would also leave
 * the execute-api endpoints reachable around it. The HTTP APIs are protected instead by the stage
 * throttles, the `$default` route's own throttle (anonymous requests to unknown paths), token and
 * key checks that fail before any table read, and the per-tenant quota (see docs/api.md).
 */
export class TokenEndpointFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: TokenEndpointFirewallProps) {
    super(scope, id);
    // WAF takes a MetricName of at most 128 characters, and a stack name may be 128 itself: a name
    // too long is cut to leave room for the metric's own (a longer one failed the deploy), with a
    // digest of the whole stack name, as WAF's CloudWatch metrics are dimensioned by these names:
    // stacks of one region whose names differ only past the cut would count into the same ones.
    const stackName = Stack.of(this).stackName;
    const metric = (name: string) => {
      const whole = `${stackName}-${name}`;
      const digest = createHash('sha256').update(stackName).digest('hex').slice(0, 8);
      return {
        cloudWatchMetricsEnabled: true,
        sampledRequestsEnabled: true,
        metricName: whole.length <= METRIC_NAME_MAX ? whole : `${stackName.slice(0, METRIC_NAME_MAX - name.length - digest.length - 2)}-${digest}-${name}`,
      };
    };
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: 'Cognito user pool token endpoint - requests per source address',
      defaultAction: { allow: {} },
      visibilityConfig: metric('token-endpoint'),
      // The token endpoint's own rate limit answers as the local one does (api-decisions.md: 429
      // `slow_down`, RFC 6749's envelope), not with WAF's default 403 page.
      customResponseBodies: {
        [SLOW_DOWN]: { contentType: 'APPLICATION_JSON', content: JSON.stringify({ error: 'slow_down', error_description: 'Too many requests from this address; retry later.' }) },
      },
      rules: [
        {
          name: 'RequestsPerSourceAddress',
          priority: 0,
          action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: SLOW_DOWN, responseHeaders: [{ name: 'Retry-After', value: String(props.windowSeconds) }] } } },
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: props.requestsPerAddress, evaluationWindowSec: props.windowSeconds } },
          visibilityConfig: metric('token-endpoint-per-address'),
        },
      ],
    });
    new wafv2.CfnWebACLAssociation(this, 'UserPool', { resourceArn: props.userPool.userPoolArn, webAclArn: this.webAcl.attrArn });
  }
}
