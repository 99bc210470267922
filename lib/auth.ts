import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { CORE_SCOPES } from '../shared/routes.ts';

export const RESOURCE_SERVER = 'service-api';

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
