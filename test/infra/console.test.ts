import { App, type CfnResource } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_PATHS } from '../../lib/console.ts';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../../shared/console-auth/headers.ts';
import { applyNag } from '../../lib/nag.ts';
import { ServiceStack } from '../../lib/stack.ts';
import { keys } from '../../shared/data/keys.ts';
import { deployedRoutes } from '../../shared/routes.ts';
import { functionOf, modulesOutside, roleStatements, serviceTemplate } from '../helpers/template.ts';

// Issue 21 item 3: the console deployed by the stack (private bucket, CloudFront with origin
// access control and security headers, the Platform API on the same origin) and its Cognito users.

type Resource = { Type: string; Properties: Record<string, any>; Metadata?: Record<string, string> };
/** The service's stack, and the console's nested stack (the service's is near the 500-resource limit). */
let template: Template;
let resources: Record<string, Resource>;
let web: Template;
let webResources: Record<string, Resource>;
let stack: ServiceStack;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const webOfType = (type: string) => Object.entries(webResources).filter(([, r]) => r.Type === type);

beforeAll(() => {
  // Bundling skipped (synth.test.ts bundles for real); cdk-nag runs: synthesis throws on a finding nobody acknowledged.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new ServiceStack(app, 'ConsoleTest', { env: { account: '123456789012', region: 'eu-west-1' } });
  applyNag(app, stack);
  app.synth();
  template = serviceTemplate(stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
  web = Template.fromStack(stack.console);
  webResources = web.toJSON().Resources as Record<string, Resource>;
}, 120_000);

describe('console hosting', () => {
  it('keeps the app in a private, TLS-only bucket that only the distribution reads', () => {
    const site = webOfType('AWS::S3::Bucket').find(([id]) => id.startsWith('Site'));
    expect(site).toBeDefined();
    const [siteId, bucket] = site as [string, Resource];
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    const policy = webOfType('AWS::S3::BucketPolicy').find(([, p]) => p.Properties.Bucket.Ref === siteId)?.[1];
    const statements = policy?.Properties.PolicyDocument.Statement as any[];
    expect(statements.some((s) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false')).toBe(true);
    const read = statements.find((s) => s.Effect === 'Allow');
    expect(read.Principal).toEqual({ Service: 'cloudfront.amazonaws.com' });
    expect(read.Action).toBe('s3:GetObject');
    expect(JSON.stringify(read.Condition)).toContain('AWS:SourceArn');
  });

  it('serves it through CloudFront with origin access control, HTTPS and the security headers', () => {
    web.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: Match.objectLike({ OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' }),
    });
    const [, dist] = webOfType('AWS::CloudFront::Distribution')[0] as [string, Resource];
    const cfg = dist.Properties.DistributionConfig;
    expect(cfg.DefaultCacheBehavior.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(cfg.Origins.find((o: any) => o.S3OriginConfig)?.OriginAccessControlId).toBeDefined();
    expect(cfg.Logging).toBeDefined();
    const [, headers] = webOfType('AWS::CloudFront::ResponseHeadersPolicy')[0] as [string, Resource];
    const sec = headers.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    expect(sec.ContentSecurityPolicy.ContentSecurityPolicy).toContain("frame-ancestors 'none'");
    expect(sec.ContentSecurityPolicy.ContentSecurityPolicy).toContain("script-src 'self'");
    expect(sec.ContentTypeOptions.Override).toBe(true);
    expect(sec.FrameOptions.FrameOption).toBe('DENY');
    expect(sec.ReferrerPolicy.ReferrerPolicy).toBe('no-referrer');
    expect(sec.StrictTransportSecurity.AccessControlMaxAgeSec).toBe(31_536_000);
    // Every behavior carries the headers.
    for (const b of [cfg.DefaultCacheBehavior, ...cfg.CacheBehaviors]) expect(b.ResponseHeadersPolicyId).toBeDefined();
  });

  it('puts the Platform API behind the same origin, uncached, with every method', () => {
    const [, dist] = webOfType('AWS::CloudFront::Distribution')[0] as [string, Resource];
    const behaviors = dist.Properties.DistributionConfig.CacheBehaviors as any[];
    expect(behaviors.map((b) => b.PathPattern).sort()).toEqual([...API_PATHS].sort());
    for (const b of behaviors) {
      expect(b.AllowedMethods).toContain('POST');
      expect(b.AllowedMethods).toContain('DELETE');
      expect(b.CachePolicyId).toBe('4135ea2d-6df8-44a3-9df3-4b5a84be39ad'); // CachingDisabled
      expect(b.ViewerProtocolPolicy).toBe('https-only');
    }
  });

  it('deploys the built app under console/ and invalidates it', () => {
    web.hasResourceProperties('Custom::CDKBucketDeployment', { DestinationBucketKeyPrefix: 'console/', DistributionPaths: ['/console/*'], Prune: true });
  });

  it('names its account-wide CloudFront resources per region, so the same stack deploys in a second region of the account', () => {
    // CloudFront takes each response headers policy, origin access control and function name once
    // per account, whatever the region; stack names are per region.
    const names = (t: Template) =>
      Object.values(t.toJSON().Resources as Record<string, Resource>).flatMap((r) => {
        const p = r.Properties;
        if (r.Type === 'AWS::CloudFront::ResponseHeadersPolicy') return [p.ResponseHeadersPolicyConfig.Name];
        if (r.Type === 'AWS::CloudFront::OriginAccessControl') return [p.OriginAccessControlConfig.Name];
        if (r.Type === 'AWS::CloudFront::Function') return [p.Name];
        return [];
      });
    const here = names(web);
    expect(here).toHaveLength(4);
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const elsewhere = names(Template.fromStack(new ServiceStack(app, 'ConsoleTest', { env: { account: '123456789012', region: 'us-east-1' } }).console));
    for (const name of here) expect(elsewhere, name).not.toContain(name);
    // Within CloudFront's limits: 64 characters for an origin access control, 128 for a policy.
    for (const [, r] of webOfType('AWS::CloudFront::OriginAccessControl')) expect(r.Properties.OriginAccessControlConfig.Name.length).toBeLessThanOrEqual(64);
    for (const [, r] of webOfType('AWS::CloudFront::ResponseHeadersPolicy')) expect(r.Properties.ResponseHeadersPolicyConfig.Name.length).toBeLessThanOrEqual(128);
  }, 60_000);
});

describe('sign-in limits count the browser, not the edge server', () => {
  it("sends the viewer's address from a viewer-request function and the origin secret the sign-in function checks", () => {
    const [fnId, fn] = webOfType('AWS::CloudFront::Function').find(([, f]) => String(f.Properties.FunctionCode).includes(VIEWER_ADDRESS_HEADER)) as [string, Resource];
    expect(fn.Properties.FunctionCode).toContain('event.viewer.ip');
    const [, dist] = webOfType('AWS::CloudFront::Distribution')[0] as [string, Resource];
    const cfg = dist.Properties.DistributionConfig;
    // Every API behavior replaces whatever address the browser sent; the app's files need none.
    for (const b of cfg.CacheBehaviors as any[]) {
      expect(b.FunctionAssociations, b.PathPattern).toEqual([{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [fnId, 'FunctionARN'] } }]);
    }
    const apiOrigin = (cfg.Origins as any[]).find((o) => o.CustomOriginConfig);
    const sent = (apiOrigin.OriginCustomHeaders as any[]).find((h) => h.HeaderName === ORIGIN_VERIFY_HEADER);
    expect(sent?.HeaderValue).toBeDefined();
    // The same value reaches the sign-in function: the UUID of the Platform's nested stack, which
    // the function reads as its own AWS::StackId and the distribution as the Ref of that stack's
    // resource in the parent (both the stack's ARN, .../stack/<name>/<uuid>).
    const uuidOf = (id: unknown) => ({ 'Fn::Select': [2, { 'Fn::Split': ['/', id] }] });
    const platform = Template.fromStack(stack.platformStack).toJSON().Resources as Record<string, Resource>;
    const signIn = Object.values(platform).find((f) => f.Type === 'AWS::Lambda::Function' && f.Properties.Description === 'functions/console-session/session.ts') as Resource;
    expect(signIn.Properties.Environment.Variables.CONSOLE_ORIGIN_VERIFY).toEqual(uuidOf({ Ref: 'AWS::StackId' }));
    const param = sent.HeaderValue['Fn::Select'][1]['Fn::Split'][1].Ref as string;
    expect(sent.HeaderValue).toEqual(uuidOf({ Ref: param }));
    const parent = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
    const platformId = stack.resolve((stack.platformStack.nestedStackResource as CfnResource).logicalId) as string;
    const consoleResource = Object.values(parent).find((r) => r.Type === 'AWS::CloudFormation::Stack' && param in (r.Properties.Parameters ?? {})) as Resource;
    expect(consoleResource.Properties.Parameters[param]).toEqual({ Ref: platformId });
  });
});

describe('console users in Cognito', () => {
  it('gives the pool tenant and role attributes, and a console client that may only sign in server-side', () => {
    const [, pool] = ofType('AWS::Cognito::UserPool')[0] as [string, Resource];
    const names = (pool.Properties.Schema as { Name: string; Mutable: boolean }[]).map((a) => a.Name);
    expect(names).toEqual(expect.arrayContaining(['tenant', 'role']));
    const client = ofType('AWS::Cognito::UserPoolClient').find(([, c]) => c.Properties.ClientName === 'console')?.[1] as Resource;
    expect(client.Properties.ExplicitAuthFlows).toEqual(expect.arrayContaining(['ALLOW_ADMIN_USER_PASSWORD_AUTH']));
    expect(client.Properties.ExplicitAuthFlows).not.toContain('ALLOW_USER_PASSWORD_AUTH');
    expect(client.Properties.GenerateSecret).toBe(false);
    expect(client.Properties.AllowedOAuthFlows ?? []).toEqual([]);
    expect(client.Properties.WriteAttributes).not.toContain('custom:tenant');
    expect(client.Properties.WriteAttributes).not.toContain('custom:role');
    expect(client.Properties.ReadAttributes).toEqual(expect.arrayContaining(['custom:tenant', 'custom:role']));
  });

  it('lets only the sign-in function call the admin auth APIs, with the console client id', () => {
    const fns = ofType('AWS::Lambda::Function');
    const signIn = fns.find(([, f]) => f.Properties.Description === 'functions/console-session/session.ts');
    expect(signIn).toBeDefined();
    const [signInId, fn] = signIn as [string, Resource];
    expect(fn.Properties.Environment.Variables.CONSOLE_CLIENT_ID).toBeDefined();
    const grants = ofType('AWS::IAM::Policy').filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('cognito-idp:AdminInitiateAuth'));
    expect(grants.length).toBe(1);
    const role = fn.Properties.Role['Fn::GetAtt'][0];
    expect(grants[0]?.[1].Properties.Roles).toEqual([{ Ref: role }]);
    expect(signInId).toBeTruthy();
    template.hasOutput('ConsoleWebUrl', {});
  });

  it('lets the sign-in function put and delete console-session rows only (sign-in, sign-out), no other row', () => {
    const st = roleStatements(resources, functionOf(resources, 'console-session/session')[1]);
    const writes = st.filter((s) => [s.Action].flat().some((a: string) => a === 'dynamodb:PutItem' || a === 'dynamodb:DeleteItem'));
    expect(writes).toHaveLength(1);
    expect(writes[0].Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${keys.consoleSessionPkPrefix}*`] } });
  });

  it("lets every function that authenticates console sessions read a session's user again (AdminGetUser on the pool) and record that check on console-session rows only; no other function", () => {
    const [poolId] = ofType('AWS::Cognito::UserPool')[0] as [string, Resource];
    const statementsOf = (module: string) => roleStatements(resources, functionOf(resources, module)[1]);
    const actions = (s: any): string[] => [s.Action].flat();
    const sessionRows = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${keys.consoleSessionPkPrefix}*`] } };
    // Every Platform route accepts a session cookie instead of an API key; the console's routes only it.
    const sessions = new Set(
      deployedRoutes('platform')
        .filter((r) => r.api === 'platform')
        .map((r) => r.handler),
    );
    expect(sessions).toContain('console-session/session');
    expect(sessions).toContain('console-session/reads');
    expect(sessions).toContain('platform/contexts/list');
    for (const m of sessions) {
      const st = statementsOf(m);
      const getUser = st.filter((s) => actions(s).includes('cognito-idp:AdminGetUser'));
      expect(getUser, m).toHaveLength(1);
      expect(getUser[0].Resource, m).toEqual({ 'Fn::GetAtt': [poolId, 'Arn'] });
      const rows = st.filter((s) => JSON.stringify(s.Condition ?? {}).includes(keys.consoleSessionPkPrefix));
      expect(rows, m).toHaveLength(1);
      // The sign-in function also opens and ends sessions there (PutItem, DeleteItem).
      expect(rows[0].Action, m).toEqual(m === 'console-session/session' ? ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'] : 'dynamodb:UpdateItem');
      expect(rows[0].Condition, m).toEqual(sessionRows);
      expect(JSON.stringify(rows[0].Resource), m).not.toContain('index');
    }
    for (const m of modulesOutside('platform')) {
      const text = JSON.stringify(statementsOf(m));
      expect(text, m).not.toContain('cognito-idp:AdminGetUser');
      expect(text, m).not.toContain(keys.consoleSessionPkPrefix);
    }
  });
});
