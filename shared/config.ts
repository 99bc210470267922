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
  /**
   * Training runs (shared/recs/launcher.ts): a run whose tenant has at least `taskMinEvents`
   * events (TRAINING_TASK_MIN_EVENTS, estimated from the latest event id) runs as a container
   * task, not in the training worker. `task`: the ECS Fargate task on AWS (set by the stack);
   * absent locally, where a child process stands in.
   */
  training: { taskMinEvents: number; task: TrainingTaskSettings | undefined };
}

/** Where the training worker starts a run's ECS task (lib/training-task.ts sets these). */
export interface TrainingTaskSettings {
  clusterArn: string;
  taskDefinitionArn: string;
  containerName: string;
  subnets: string[];
  securityGroups: string[];
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

/** A comma-separated list, each entry non-empty. */
function list(env: Env, name: string): string[] {
  const items = required(env, name).split(',').map((x) => x.trim());
  if (items.some((x) => x === '')) throw new Error(`Environment variable ${name} must be a comma-separated list without empty entries, got "${env[name]}"`);
  return items;
}

/** TRAINING_TASK_MIN_EVENTS (default 500,000), and the task's TRAINING_TASK_* (all or none). */
function training(env: Env): Config['training'] {
  const taskMinEvents = positiveInt(env, 'TRAINING_TASK_MIN_EVENTS', 500_000);
  if (!env.TRAINING_TASK_DEFINITION) return { taskMinEvents, task: undefined };
  return {
    taskMinEvents,
    task: {
      clusterArn: required(env, 'TRAINING_TASK_CLUSTER'),
      taskDefinitionArn: required(env, 'TRAINING_TASK_DEFINITION'),
      containerName: required(env, 'TRAINING_TASK_CONTAINER'),
      subnets: list(env, 'TRAINING_TASK_SUBNETS'),
      securityGroups: list(env, 'TRAINING_TASK_SECURITY_GROUPS'),
    },
  };
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
    training: training(env),
  };
}

let cached: Config | undefined;

/** The container's configuration, read on first use. */
export function config(): Config {
  cached ??= readConfig();
  return cached;
}

/**
 * The local server's own settings (`npm start`, bin/server.ts), read once at its start; an
 * invalid value fails with the variable's name.
 */
export interface ServerConfig {
  /** DATA_DIR (default `.data`). */
  dataDir: string;
  /** PORT (default 3000; 0 picks a free port). */
  port: number;
  /** HOST (default 127.0.0.1). */
  host: string;
  /** LOG_FORMAT: `text` (default), readable lines; `json`, one JSON object per line. */
  logFormat: 'text' | 'json';
  /** DEMO: 1 (default) seeds a fresh data directory's demo tenant with the demo shop; 0 starts it empty. */
  demo: boolean;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.toLowerCase();
  if (!(allowed as readonly string[]).includes(v)) throw new Error(`Environment variable ${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return v as T;
}

export function readServerConfig(env: Env = process.env): ServerConfig {
  const rawPort = env.PORT;
  const port = rawPort === undefined || rawPort === '' ? 3000 : Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`Environment variable PORT must be a port number from 0 to 65535 (0: any free port), got "${rawPort}"`);
  return {
    dataDir: env.DATA_DIR || '.data',
    port,
    host: env.HOST || '127.0.0.1',
    logFormat: oneOf(env, 'LOG_FORMAT', ['text', 'json'], 'text'),
    demo: ['1', 'true', 'yes', 'on'].includes(oneOf(env, 'DEMO', ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], '1')),
  };
}
