import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { UserPool } from 'aws-cdk-lib/aws-cognito';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceStack, type ServiceStackProps } from '../../lib/stack.ts';
import { TokenEndpointFirewall } from '../../lib/protection.ts';
import { WORKER_CONCURRENCY } from '../../lib/workers.ts';
import { keys } from '../../shared/data/keys.ts';
import { deployedRoutes } from '../../shared/routes.ts';
import { schedules, workers } from '../../shared/queue/workers.ts';
import { functionOf, modulesOutside, roleStatements, serviceTemplate } from '../helpers/template.ts';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };

/** The stack's resources, bundling skipped (test/infra/synth.test.ts bundles for real). */
function synth(props: Partial<ServiceStackProps> = {}, context: Record<string, unknown> = {}): Record<string, Resource> {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new ServiceStack(app, 'FairStack', { env: { account: '123456789012', region: 'eu-west-1' }, ...props });
  return serviceTemplate(stack).toJSON().Resources as Record<string, Resource>;
}

let resources: Record<string, Resource>;
beforeAll(() => {
  resources = synth();
});

const ofType = (r: Record<string, Resource>, type: string) => Object.entries(r).filter(([, x]) => x.Type === type);
// Statements limited to the quota rows (the console-session rows' are test/infra/console.test.ts's).
const quotaStatements = (r: Record<string, Resource>, fn: Resource) =>
  roleStatements(r, fn).filter((s) => (s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? []).some((k: string) => k.startsWith(keys.quotaPkPrefix)));

describe('token endpoint firewall (AWS WAF)', () => {
  it('is a regional web ACL whose rate-based rule blocks a source address past 300 requests in 5 minutes, with 429 slow_down', () => {
    const acls = ofType(resources, 'AWS::WAFv2::WebACL');
    expect(acls).toHaveLength(1);
    const acl = acls[0]![1].Properties;
    expect(acl.Scope).toBe('REGIONAL');
    expect(acl.DefaultAction).toEqual({ Allow: {} });
    expect(acl.Rules).toHaveLength(1);
    // Blocked with the token endpoint's own answer (api-decisions.md): 429 slow_down, not WAF's 403 page.
    expect(acl.Rules[0].Action).toEqual({ Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'slow_down', ResponseHeaders: [{ Name: 'Retry-After', Value: '300' }] } } });
    expect(acl.CustomResponseBodies.slow_down.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(acl.CustomResponseBodies.slow_down.Content)).toMatchObject({ error: 'slow_down' });
    expect(acl.Rules[0].Statement).toEqual({ RateBasedStatement: { AggregateKeyType: 'IP', Limit: 300, EvaluationWindowSec: 300 } });
    expect(acl.Rules[0].VisibilityConfig.CloudWatchMetricsEnabled).toBe(true);
  });

  it('protects the Cognito user pool (its token endpoint), the one public endpoint WAF can attach to; HTTP APIs it cannot', () => {
    const assoc = ofType(resources, 'AWS::WAFv2::WebACLAssociation');
    expect(assoc).toHaveLength(1);
    const [aclId] = ofType(resources, 'AWS::WAFv2::WebACL')[0]!;
    const [poolId] = ofType(resources, 'AWS::Cognito::UserPool')[0]!;
    expect(assoc[0]![1].Properties).toEqual({ ResourceArn: { 'Fn::GetAtt': [poolId, 'Arn'] }, WebACLArn: { 'Fn::GetAtt': [aclId, 'Arn'] } });
  });

  it("keeps its metric names inside WAF's 128 characters, whatever the stack's name", () => {
    // A stack name may be 128 characters (CloudFormation's most); WAF refuses a longer MetricName.
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const name = `R${'x'.repeat(127)}`;
    const long = new ServiceStack(app, name, { env: { account: '123456789012', region: 'eu-west-1' } });
    const acl = ofType(serviceTemplate(long).toJSON().Resources as Record<string, Resource>, 'AWS::WAFv2::WebACL')[0]![1].Properties;
    const names = [acl.VisibilityConfig.MetricName, ...acl.Rules.map((r: { VisibilityConfig: { MetricName: string } }) => r.VisibilityConfig.MetricName)] as string[];
    for (const n of names) {
      expect(n.length, n).toBeLessThanOrEqual(128);
      expect(n).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    expect(new Set(names).size).toBe(names.length);
    // A stack of a usual name keeps its metrics' names.
    const [, short] = ofType(resources, 'AWS::WAFv2::WebACL')[0]!;
    expect(short.Properties.VisibilityConfig.MetricName).toBe('FairStack-token-endpoint');
    expect(short.Properties.Rules[0].VisibilityConfig.MetricName).toBe('FairStack-token-endpoint-per-address');
  }, 60_000);

  it('gives stacks whose long names differ only past the cut metric names of their own', () => {
    // WAF's CloudWatch metrics are dimensioned by the metric names: two web ACLs of one region
    // sharing them would count into the same metrics.
    const namesOf = (stackName: string): string[] => {
      const stack = new Stack(new App(), stackName, { env: { account: '123456789012', region: 'eu-west-1' } });
      const pool = UserPool.fromUserPoolArn(stack, 'Pool', 'arn:aws:cognito-idp:eu-west-1:123456789012:userpool/eu-west-1_abc');
      new TokenEndpointFirewall(stack, 'Firewall', { userPool: pool, requestsPerAddress: 300, windowSeconds: 300 });
      const acl = ofType(Template.fromStack(stack).toJSON().Resources as Record<string, Resource>, 'AWS::WAFv2::WebACL')[0]![1].Properties;
      return [acl.VisibilityConfig.MetricName, ...acl.Rules.map((r: { VisibilityConfig: { MetricName: string } }) => r.VisibilityConfig.MetricName)];
    };
    const base = `R${'x'.repeat(126)}`;
    const [a, b] = [namesOf(`${base}a`), namesOf(`${base}b`)];
    for (const n of [...a, ...b]) {
      expect(n.length, n).toBeLessThanOrEqual(128);
      expect(n).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    for (const n of a) expect(b, n).not.toContain(n);
    expect(namesOf('FairStack')).toEqual(['FairStack-token-endpoint', 'FairStack-token-endpoint-per-address']);
    expect(namesOf('R'.repeat(101))[1]).toBe(`${'R'.repeat(101)}-token-endpoint-per-address`);
  });
});

describe('API stages', () => {
  it("throttle each API's $default route (unknown paths) on its own, after the route exists", () => {
    const stages = ofType(resources, 'AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(2);
    for (const [id, stage] of stages) {
      expect(stage.Properties.RouteSettings, id).toEqual({ $default: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 } });
      expect(stage.Properties.DefaultRouteSettings, id).toMatchObject({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 });
      const defaultRoute = ofType(resources, 'AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === '$default' && r.Properties.ApiId.Ref === stage.Properties.ApiId.Ref);
      expect(stage.DependsOn ?? [], id).toContain(defaultRoute?.[0]);
    }
  });
});

describe('per-tenant quota', () => {
  const authenticated = [
    ...new Set(
      deployedRoutes('core')
        .filter((r) => 'scope' in r && r.scope)
        .map((r) => r.handler),
    ),
  ];

  it('configures every Core function that authenticates a client, with UpdateItem on QUOTA# rows only', () => {
    expect(authenticated.length).toBeGreaterThan(5);
    for (const m of authenticated) {
      const [, fn] = functionOf(resources, m);
      expect(fn.Properties.Environment.Variables.TENANT_RATE_PER_SECOND, m).toBe('200');
      expect(fn.Properties.Environment.Variables.TENANT_BURST, m).toBe('400');
      const q = quotaStatements(resources, fn);
      expect(q, m).toHaveLength(1);
      expect(q[0].Action).toBe('dynamodb:UpdateItem');
      expect(q[0].Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${keys.quotaPkPrefix}*`] } });
      expect(JSON.stringify(q[0].Resource)).not.toContain('index');
    }
  });

  it('is not granted where no Core client is authenticated (Platform API, preflight, 404s, workers)', () => {
    for (const m of modulesOutside('core')) {
      const [, fn] = functionOf(resources, m);
      expect(quotaStatements(resources, fn), m).toEqual([]);
      expect(fn.Properties.Environment.Variables.TENANT_RATE_PER_SECOND, m).toBeUndefined();
    }
  });

  it('takes its rate and burst from stack props or the tenantRatePerSecond / tenantBurst context', () => {
    const viaContext = synth({}, { tenantRatePerSecond: '1000', tenantBurst: '1500' });
    const [, fn] = functionOf(viaContext, 'core/items/get');
    expect(fn.Properties.Environment.Variables).toMatchObject({ TENANT_RATE_PER_SECOND: '1000', TENANT_BURST: '1500' });
    const viaProps = synth({ tenantQuota: { ratePerSecond: 7, burst: 9 } });
    expect(functionOf(viaProps, 'core/search/search')[1].Properties.Environment.Variables).toMatchObject({ TENANT_RATE_PER_SECOND: '7', TENANT_BURST: '9' });
  });
});

describe('worker concurrency', () => {
  it('reserves concurrency for each worker, caps its SQS event source at the same number, and for no API function', () => {
    const all = [...workers.map((w) => w.handler), ...schedules.map((s) => s.handler)];
    expect(Object.keys(WORKER_CONCURRENCY).sort()).toEqual([...all].sort());
    for (const m of all) expect(functionOf(resources, m)[1].Properties.ReservedConcurrentExecutions, m).toBe(WORKER_CONCURRENCY[m]);
    for (const w of workers) {
      const [fnId] = functionOf(resources, w.handler);
      const mapping = ofType(resources, 'AWS::Lambda::EventSourceMapping').find(([, e]) => e.Properties.FunctionName.Ref === fnId);
      expect(mapping?.[1].Properties.ScalingConfig, w.handler).toEqual({ MaximumConcurrency: WORKER_CONCURRENCY[w.handler] });
    }
    const reserved = ofType(resources, 'AWS::Lambda::Function').filter(([, f]) => f.Properties.ReservedConcurrentExecutions !== undefined);
    expect(reserved).toHaveLength(all.length);
    // What the API functions keep of the default account quota (AWS requires 100 unreserved).
    expect(1000 - reserved.reduce((n, [, f]) => n + (f.Properties.ReservedConcurrentExecutions as number), 0)).toBe(986);
  });

  it('can leave the reservation out for accounts with a small concurrency quota, the event sources staying capped', () => {
    const r = synth({}, { reserveWorkerConcurrency: 'false' });
    expect(ofType(r, 'AWS::Lambda::Function').filter(([, f]) => f.Properties.ReservedConcurrentExecutions !== undefined)).toEqual([]);
    for (const [, e] of ofType(r, 'AWS::Lambda::EventSourceMapping')) expect(e.Properties.ScalingConfig.MaximumConcurrency).toBeGreaterThanOrEqual(2);
  });
});

describe('context values', () => {
  it('fails synthesis on a value it would misread, naming the context: a boolean other than true/false, an unknown embedding provider', () => {
    const stackWith = (context: Record<string, unknown>) => () =>
      new ServiceStack(new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } }), 'Ctx', { env: { account: '123456789012', region: 'eu-west-1' } });
    expect(stackWith({ reserveWorkerConcurrency: 'no' })).toThrow(/Context reserveWorkerConcurrency must be true or false, got no/);
    expect(stackWith({ embeddingProvider: 'foo' })).toThrow(/Context embeddingProvider must be local or bedrock, got foo/);
    // A Cognito domain prefix Cognito would refuse at deploy (CDK checks only its characters).
    const withPrefix = (authDomainPrefix: string) => () =>
      new ServiceStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Ctx', { authDomainPrefix, env: { account: '123456789012', region: 'eu-west-1' } });
    for (const bad of ['recsearch-', '-recsearch', 'r'.repeat(64)]) expect(withPrefix(bad), bad).toThrow(/authDomainPrefix must be 1 to 63 lowercase letters/);
    expect(withPrefix(`recsearch-${'9'.repeat(53)}`)).not.toThrow();
    // Cognito also refuses a prefix holding the text aws, amazon or cognito, anywhere in it.
    for (const bad of ['acme-cognito', 'awsome-shop', 'shop-amazon-eu']) expect(withPrefix(bad), bad).toThrow(/authDomainPrefix must not contain aws, amazon or cognito/);
    expect(withPrefix('acme-auth')).not.toThrow();
    const bedrock = synth({}, { embeddingProvider: 'bedrock' });
    expect(ofType(bedrock, 'AWS::IAM::Policy').some(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('bedrock:InvokeModel'))).toBe(true);
  });
});
