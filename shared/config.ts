/**
 * Configuration, read once from the environment. A missing required variable fails fast
 * with its name. The local stack (shared/local/stack.ts) sets these before the first handler runs.
 */
export interface Config {
  tableName: string;
  /** Set only for local stand-ins (dynalite, DynamoDB Local). */
  dynamodbEndpoint: string | undefined;
  region: string;
  auth: {
    /** Deployed stack: the Cognito user pool whose app clients are the OAuth clients. */
    userPoolId: string | undefined;
    /** Required by the token verifier (API handlers); workers do without. */
    issuer: string | undefined;
    jwksUri: string;
    /** Local stack: a JWKS file to preload, so verification never fetches. */
    jwksFile: string | undefined;
    /** Local stack only: PEM private key the local token endpoint signs with. */
    signingKeyFile: string | undefined;
    tokenLifetimeSeconds: number;
    tokenRatePerSecond: number;
    tokenBurst: number;
  };
  corsAllowOrigin: string;
  maxBodyBytes: number;
  idempotencyTtlSeconds: number;
  /**
   * Core API request quota per tenant, across every container (shared/http/quota.ts): a token
   * bucket refilled at `ratePerSecond`, holding at most `burst` requests.
   */
  tenantQuota: { ratePerSecond: number; burst: number };
}

type Env = Record<string, string | undefined>;

export function required(env: Env, name: string): string {
  const v = env[name];
  if (v === undefined || v === '') throw new Error(`Missing required environment variable ${name}`);
  return v;
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`Environment variable ${name} must be a positive integer, got "${raw}"`);
  return n;
}

/** TENANT_RATE_PER_SECOND (default 200) and TENANT_BURST (default twice the rate). */
function tenantQuota(env: Env): Config['tenantQuota'] {
  const ratePerSecond = positiveInt(env, 'TENANT_RATE_PER_SECOND', 200);
  return { ratePerSecond, burst: positiveInt(env, 'TENANT_BURST', 2 * ratePerSecond) };
}

export function readConfig(env: Env = process.env): Config {
  const issuer = env.AUTH_ISSUER || undefined;
  return {
    tableName: required(env, 'TABLE_NAME'),
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    region: env.AWS_REGION || 'us-east-1',
    auth: {
      userPoolId: env.USER_POOL_ID || undefined,
      issuer,
      jwksUri: env.AUTH_JWKS_URI || (issuer ? `${issuer}/.well-known/jwks.json` : ''),
      jwksFile: env.AUTH_JWKS_FILE || undefined,
      signingKeyFile: env.AUTH_SIGNING_KEY_FILE || undefined,
      tokenLifetimeSeconds: positiveInt(env, 'TOKEN_LIFETIME_SECONDS', 3600),
      tokenRatePerSecond: positiveInt(env, 'TOKEN_RATE_PER_SECOND', 10),
      tokenBurst: positiveInt(env, 'TOKEN_BURST', 20),
    },
    corsAllowOrigin: env.CORS_ALLOW_ORIGIN || '*',
    maxBodyBytes: positiveInt(env, 'MAX_BODY_BYTES', 1_048_576),
    idempotencyTtlSeconds: positiveInt(env, 'IDEMPOTENCY_TTL_SECONDS', 86_400),
    tenantQuota: tenantQuota(env),
  };
}

let cached: Config | undefined;

/** The container's configuration, read on first use. */
export function config(): Config {
  cached ??= readConfig();
  return cached;
}
