import { Aws, Duration, RemovalPolicy, Token } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { CORE_SCOPES } from '../shared/routes.ts';

export const RESOURCE_SERVER = 'service-api';

/**
 * Cognito's rule for a prefix domain (CreateUserPoolDomain): 1 to 63 lowercase letters, digits
 * and hyphens, a hyphen neither first nor last. CDK checks only the characters, so a prefix that
 * broke the rest failed the deploy, after the retained table, buckets and pool were made.
 */
const DOMAIN_PREFIX = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Text Cognito refuses anywhere in a prefix domain (CreateUserPoolDomain fails on it at deploy). */
const RESERVED_IN_PREFIX = /aws|amazon|cognito/;

/**
 * Cognito issues the Core API's client-credentials tokens, and holds the console's users
 * (email, password, TOTP MFA; `custom:tenant` and `custom:role`). Its OAuth app
 * clients (one per application, created by the admin CLI or POST /api/clients) use the
 * client-credentials flow against a resource server whose scopes are exactly
 * service-api/read and service-api/write. Access tokens live 60 minutes (set per app client).
 */
export class AuthConstruct extends Construct {
  readonly userPool: cognito.UserPool;
  readonly authUrl: string;
  /** The console's app client (ADMIN_USER_PASSWORD_AUTH only). */
  readonly consoleClient: cognito.UserPoolClient;

  constructor(scope: Construct, id: string, props: { domainPrefix?: string } = {}) {
    super(scope, id);
    if (props.domainPrefix !== undefined && !Token.isUnresolved(props.domainPrefix) && !DOMAIN_PREFIX.test(props.domainPrefix)) {
      throw new Error(`authDomainPrefix must be 1 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen (Cognito's rule), got ${props.domainPrefix}`);
    }
    if (props.domainPrefix !== undefined && !Token.isUnresolved(props.domainPrefix) && RESERVED_IN_PREFIX.test(props.domainPrefix)) {
      throw new Error(`authDomainPrefix must not contain aws, amazon or cognito (Cognito's rule), got ${props.domainPrefix}`);
    }
    this.userPool = new cognito.UserPool(this, 'Pool', {
      selfSignUpEnabled: false,
      signInAliases: { username: true },
      passwordPolicy: { minLength: 14, requireDigits: true, requireLowercase: true, requireUppercase: true, requireSymbols: true, tempPasswordValidity: Duration.days(1) },
      mfa: cognito.Mfa.REQUIRED,
      mfaSecondFactor: { sms: false, otp: true },
      accountRecovery: cognito.AccountRecovery.NONE,
      // Console users: the tenant they work in and their role (admin, viewer), set by an administrator.
      customAttributes: {
        tenant: new cognito.StringAttribute({ minLen: 1, maxLen: 63, mutable: true }),
        role: new cognito.StringAttribute({ minLen: 1, maxLen: 16, mutable: true }),
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const scopes = CORE_SCOPES.map((s) => s.split('/')[1] as string).map((name) => new cognito.ResourceServerScope({ scopeName: name, scopeDescription: `${name} access to the Core API` }));
    this.userPool.addResourceServer('ResourceServer', { identifier: RESOURCE_SERVER, userPoolResourceServerName: 'Core API', scopes });
    const domain = this.userPool.addDomain('Domain', {
      cognitoDomain: { domainPrefix: props.domainPrefix ?? `recsearch-${Aws.ACCOUNT_ID}` },
    });
    this.authUrl = domain.baseUrl();
    // The console's sign-in (POST /console/session) checks passwords server-side through this
    // client: no secret (the call is IAM-authorised AdminInitiateAuth), no OAuth flows, and it may
    // read but never write the tenant and role attributes.
    const standard = new cognito.ClientAttributes().withStandardAttributes({ email: true, emailVerified: true });
    this.consoleClient = this.userPool.addClient('ConsoleClient', {
      userPoolClientName: 'console',
      generateSecret: false,
      authFlows: { adminUserPassword: true },
      disableOAuth: true,
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      accessTokenValidity: Duration.minutes(60),
      idTokenValidity: Duration.minutes(60),
      refreshTokenValidity: Duration.hours(8),
      readAttributes: standard.withCustomAttributes('tenant', 'role'),
      writeAttributes: new cognito.ClientAttributes().withStandardAttributes({ email: true }),
    });
  }
}
