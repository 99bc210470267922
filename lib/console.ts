import { Duration, Fn, Lazy, Names, NestedStack, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import type { Construct, IConstruct } from 'constructs';
import { CONSOLE_CSP, ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../shared/console-auth/headers.ts';
import { buildConsoleSync } from '../local/console-static.ts';

export interface ConsoleWebProps {
  /** The Platform API: `/api/*` and the console's own routes are forwarded to it, same origin as the app. */
  platformApi: HttpApi;
  /**
   * Sent to the Platform API in `x-origin-verify` with every request the distribution forwards:
   * the sign-in function (CONSOLE_ORIGIN_VERIFY) then believes the `x-viewer-address` it sends.
   */
  originVerify: string;
  /** The built web app (default: console/dist, built now with Vite if missing or stale). */
  assetDir?: string;
}

/** Paths CloudFront forwards to the Platform API (never cached); everything else is the app in S3. */
export const API_PATHS = ['/api/*', '/console/session', '/console/api/*'] as const;

/**
 * The console web app: a private S3 bucket (no public access, TLS only) read by CloudFront
 * through origin access control, with the console's security headers on every response. The
 * Platform API sits behind the same distribution, so the session cookie (SameSite=Strict,
 * HttpOnly, Secure) and the app share one origin: the browser talks to nothing else.
 * A nested stack: the service's stack is near CloudFormation's 500-resource limit.
 */
export class ConsoleWeb extends NestedStack {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;

  constructor(scope: Construct, id: string, props: ConsoleWebProps) {
    super(scope, id);
    const logs = new s3.Bucket(this, 'Logs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      // CloudFront standard logging writes with ACLs.
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.bucket = new s3.Bucket(this, 'Site', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      versioned: true,
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: 's3/',
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // CloudFront takes each response headers policy and origin access control name once per
    // account, and CDK names them after the stack and construct only: the same stack in a second
    // region of the account failed on them. With the region, as CDK names CloudFront functions;
    // still after the construct, so that a resource replaced under a new id gets a new name.
    const regionalName = (of: () => IConstruct) => Lazy.string({ produce: () => `${Names.uniqueResourceName(of(), { maxLength: 48 })}-${Stack.of(this).region}` });

    const headers: cloudfront.ResponseHeadersPolicy = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      responseHeadersPolicyName: regionalName(() => headers),
      comment: 'Console security headers (shared/console-auth/headers.ts)',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: CONSOLE_CSP, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
      customHeadersBehavior: {
        customHeaders: [
          { header: 'Cross-Origin-Opener-Policy', value: 'same-origin', override: true },
          { header: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=()', override: true },
        ],
      },
    });

    // /console and /console/ are the app's index.html; / goes to the app.
    const rewrite = new cloudfront.Function(this, 'IndexRewrite', {
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(`function handler(event) {
  var r = event.request;
  if (r.uri === '/' || r.uri === '/console') {
    return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '/console/' } } };
  }
  if (r.uri.endsWith('/')) r.uri += 'index.html';
  return r;
}`),
    });

    // The browser's address for the API (API Gateway sees the edge server's): set here, so a
    // value the browser sent is replaced; believed with the origin's secret (signInAddress).
    const viewerAddress = new cloudfront.Function(this, 'ViewerAddress', {
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(`function handler(event) {
  event.request.headers['${VIEWER_ADDRESS_HEADER}'] = { value: event.viewer.ip };
  return event.request;
}`),
    });

    // API Gateway answers on its own host name: the viewer's Host header is not forwarded.
    const apiDomain = Fn.select(2, Fn.split('/', props.platformApi.apiEndpoint));
    const api: cloudfront.BehaviorOptions = {
      origin: new origins.HttpOrigin(apiDomain, { protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY, customHeaders: { [ORIGIN_VERIFY_HEADER]: props.originVerify } }),
      functionAssociations: [{ function: viewerAddress, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      responseHeadersPolicy: headers,
    };

    const siteAccess: cloudfront.S3OriginAccessControl = new cloudfront.S3OriginAccessControl(this, 'SiteAccess', { originAccessControlName: regionalName(() => siteAccess) });
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'RecSearch console',
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket, {
          originAccessControl: siteAccess,
        }),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: headers,
        functionAssociations: [{ function: rewrite, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: Object.fromEntries(API_PATHS.map((p) => [p, api])),
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'cloudfront/',
    });

    new s3deploy.BucketDeployment(this, 'Deploy', {
      sources: [s3deploy.Source.asset(props.assetDir ?? buildConsoleSync())],
      destinationBucket: this.bucket,
      destinationKeyPrefix: 'console/',
      distribution: this.distribution,
      distributionPaths: ['/console/*'],
      prune: true,
      memoryLimit: 512,
    });
    this.acknowledge(this.resolve((this.bucket.node.defaultChild as s3.CfnBucket).logicalId) as string);
  }

  /** The cdk-nag findings this construct accepts, each with its reason. */
  private acknowledge(siteBucketId: string): void {
    const parent = Stack.of(this.nestedStackParent ?? this);
    const account = Token.isUnresolved(parent.account) ? '<AWS::AccountId>' : parent.account;
    const region = Token.isUnresolved(parent.region) ? '<AWS::Region>' : parent.region;
    const deploy =
      "CDK's BucketDeployment custom resource copies the built console from the CDK asset bucket into the site bucket and prunes old files; its CDK-generated policy uses wildcard S3 actions on those two buckets only.";
    const findings: { id: string; reason: string }[] = [
      { id: 'AwsSolutions-CFR1', reason: 'The console is for tenants anywhere; who may use it is decided by sign-in (Cognito users), not by country.' },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'A CloudFront-scope web ACL must be created in us-east-1 while this stack is regional; the Platform API behind the distribution is throttled per stage and sign-in is rate limited and locked out per email and address.',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'Without a custom domain the distribution uses the default *.cloudfront.net certificate, whose minimum protocol CloudFront fixes; browsers negotiate TLS 1.2+ anyway. Add a domain and ACM certificate to set TLSv1.2_2021.',
      },
      ...['s3:GetObject*', 's3:GetBucket*', 's3:List*', 's3:DeleteObject*', 's3:Abort*'].map((a) => ({ id: `AwsSolutions-IAM5[Action::${a}]`, reason: deploy })),
      { id: `AwsSolutions-IAM5[Resource::<${siteBucketId}.Arn>/*]`, reason: deploy },
      // The partition is known once the region is (synthesis with CDK_DEFAULT_REGION set), else a token.
      ...['<AWS::Partition>', 'aws'].map((partition) => ({ id: `AwsSolutions-IAM5[Resource::arn:${partition}:s3:::cdk-hnb659fds-assets-${account}-${region}/*]`, reason: deploy })),
    ];
    for (const f of findings) Validations.of(this).acknowledge(f);
  }

  /** The console's URL (and, through the same origin, the Platform API's). */
  get url(): string {
    return `https://${this.distribution.distributionDomainName}/console/`;
  }
}
