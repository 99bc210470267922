/**
 * Configuration: every setting the service reads from the environment, read here and nowhere
 * else, validated, with the variable's name in the error when a value is bad (a number that is not
 * one fails; it never becomes NaN). docs/configuration.md lists each variable, its default and
 * meaning.
 *
 * `config()` is the container's configuration. Each top-level setting is read on its first use and
 * kept: a module may ask for its group at import (observability.ts does) without the others being
 * required, so code that never touches the table (the search engine in a benchmark, a unit test)
 * needs no TABLE_NAME. The local stack (local/stack.ts) sets the variables before the first
 * handler runs. `readConfig(env)` reads every setting at once (tests, and a failed value fails).
 *
 * The local server and the local stack have their own small readers below (`readServerConfig`,
 * `readLocalConfig`): they are not service settings, and a process may start several stacks.
 */
import { getHeapStatistics } from 'node:v8';

export interface Config {
  tableName: string;
  /** Set only for local stand-ins (dynalite, DynamoDB Local). */
  dynamodbEndpoint: string | undefined;
  /** AWS_REGION (Lambda sets it; default us-east-1). */
  region: string;
  auth: {
    /** Deployed stack: the Cognito user pool whose app clients are the OAuth clients. */
    userPoolId: string | undefined;
    /** Required by the token verifier (API handlers); workers do without. */
    issuer: string | undefined;
    jwksUri: string;
    /** Local stack: a JWKS file to preload; with a JWKS URI that is not https (the local http issuer), the JWKS itself (shared/auth/jwt.ts). */
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
  /** Search serving and index maintenance (shared/search/). */
  search: SearchConfig;
  /** Recommendation serving (shared/recs/served-model.ts). */
  recs: {
    /**
     * MODEL_MEMORY_MB (default a quarter of the Lambda function's memory; elsewhere a quarter of
     * V8's heap limit) in bytes: the most memory, as estimated, a container keeps loaded models in.
     */
    modelMemoryBytes: number;
  };
  /** Control records (rules, experiments, segments; shared/control/serving.ts). */
  control: {
    /** CONTROL_CACHE_MS (default 5000; 0: read on every request): how long a container reuses a tenant's control records. */
    cacheMs: number;
  };
  /** The text embedding (shared/search/providers.ts). */
  embedding: EmbeddingConfig;
  /** The console's sign-in and sessions (shared/console-auth/). */
  console: ConsoleConfig;
  /** Where artifacts (index builds, models) are stored (shared/blob.ts): one of the two is required by blobs(). */
  storage: {
    /** ARTIFACT_BUCKET: the S3 bucket (deployed). */
    artifactBucket: string | undefined;
    /** BLOB_DIR: a local folder (the local stack sets it). */
    blobDir: string | undefined;
  };
  /** QUEUE_URL_<NAME>: the SQS queue URLs a function may send to (shared/queue/messages.ts; the stack sets only those it grants). */
  queues: { embedding: string | undefined; training: string | undefined };
  /** The maintenance pass (functions/workers/maintain.ts). */
  maintenance: {
    /**
     * EMBED_GRACE_SECONDS (default 60; 30 locally): an item whose embedding is older than its last
     * change by more than this is re-queued by the sweep (its message was lost).
     */
    embedGraceSeconds: number;
    /**
     * USER_REF_KEY: the key of the HMAC-SHA-256 by which the pass's logs name a user
     * (`user_ref`, shared/domain/erasure.ts `userRef`). Deployed, the UUID of the stack's id (set
     * by lib/stack.ts); locally, derived from the data folder's signing key (local/stack.ts).
     * Required (only the maintenance function reads this group): unset, the pass fails at its start
     * naming it (until 2026-12-08 a constant stood in, and the ref was as guessable as the user id).
     */
    userRefKey: string;
  };
  /** Powertools logger, metrics and tracer (shared/observability.ts; the CDK function defaults set these). */
  observability: ObservabilityConfig;
}

/** Where the training worker starts a run's ECS task (lib/training-task.ts sets these). */
export interface TrainingTaskSettings {
  clusterArn: string;
  taskDefinitionArn: string;
  containerName: string;
  subnets: string[];
  securityGroups: string[];
}

export interface SearchConfig {
  /** INDEX_CHECK_SECONDS (default 30; 2 locally) in ms: how often a container looks for a newer index artifact. */
  pointerCheckMs: number;
  /**
   * SEARCH_DELTA_TTL_MS (default 0): how long a container may reuse the delta it read. 0: every
   * search reads the changes since the build, so a deactivated or deleted item is gone from the
   * very next search.
   */
  deltaTtlMs: number;
  /**
   * SEARCH_READ_WAIT_MS (default 2000, positive): the longest a search waits for its container's
   * read of the changes since the build; past it, it is served from what the read has applied
   * (recommendations wait for the whole read).
   */
  readWaitMs: number;
  /** INDEX_REBUILD_AFTER_CHANGES (default 500): above this many changes since the build, the maintenance sweep requests a rebuild. */
  rebuildAfterChanges: number;
  /** INDEX_MAX_AGE_SECONDS (default 600; 30 locally): changes older than this are folded into a new index by the sweep. */
  maxIndexAgeSeconds: number;
  /**
   * SEARCH_CURSOR_PIN_SECONDS (default 300) in ms: how long a container keeps the index build a
   * cursor was ranked on once a newer build serves (since the last page that asked for it).
   */
  pinnedTtlMs: number;
  /** INDEX_RETAIN_SECONDS (default 3600): how long a replaced build's artifact stays stored (for cursors ranked on it). */
  retainSeconds: number;
  /** SYNONYMS_CACHE_MS (default 5000; 0: read on every search): how long a container reuses a tenant's synonym sets. */
  synonymsCacheMs: number;
  /** VECTOR_ONLY_MIN_COSINE (default 0.3, from -1 to 1): the least cosine to the query of a result found only by vector similarity. */
  vectorOnlyMinCosine: number;
  /**
   * SEARCH_MEMORY_MB (default half the Lambda function's memory; elsewhere half of V8's heap
   * limit) in bytes: the most memory, as estimated, a container keeps tenants' search views in
   * (views.ts); past it the least recently served are let go, and read again when next searched.
   */
  memoryBytes: number;
}

export interface EmbeddingConfig {
  /**
   * EMBEDDING_PROVIDER: `local` (default; hashing, no network) or `bedrock` (Titan V2). The Lambda
   * bundles get it as a build-time constant (lib/service-function.ts); providers.ts still tests
   * `process.env.EMBEDDING_PROVIDER` itself where esbuild folds it, to leave the Bedrock client
   * out of a local stack's bundles. This is its validated value.
   */
  provider: 'local' | 'bedrock';
  /** EMBEDDING_DIMENSIONS: 256, 512 (default) or 1024. */
  dimensions: 256 | 512 | 1024;
}

export interface ConsoleConfig {
  /** CONSOLE_SESSION_SECONDS (default 8 h): how long a session lasts from sign-in. */
  sessionSeconds: number;
  /**
   * CONSOLE_USER_CHECK_SECONDS (default 300): how old a session's last check of its user may be
   * before a request reads the user again (demoted, disabled, deleted: shared/console-auth/recheck.ts); 0: every request.
   */
  userCheckSeconds: number;
  /** CONSOLE_LOGIN_BURST (default 10): failed sign-ins per address (burst) before slowing down. */
  failuresPerAddress: number;
  /** CONSOLE_LOGIN_EMAIL_BURST (default 5): failed sign-ins per email before it is locked for a while. */
  failuresPerEmail: number;
  /** CONSOLE_LOGIN_REFILL_PER_SECOND (default 1/30): the failed-sign-in buckets' refill. */
  refillPerSecond: number;
  /** CONSOLE_CLIENT_ID: deployed, the pool's console app client (ADMIN_USER_PASSWORD_AUTH). */
  cognitoClientId: string | undefined;
  /**
   * CONSOLE_ORIGIN_VERIFY: deployed, the value the console's CloudFront distribution sends in
   * `x-origin-verify`; a request carrying it came through CloudFront, whose `x-viewer-address`
   * (the browser's address) then counts for the sign-in limits instead of the edge server's.
   */
  originVerify: string | undefined;
}

export interface ObservabilityConfig {
  /** POWERTOOLS_SERVICE_NAME (default recsearch). */
  serviceName: string;
  /** POWERTOOLS_METRICS_NAMESPACE (default recsearch). */
  metricsNamespace: string;
  /** POWERTOOLS_METRICS_DISABLED: metrics are emitted unless it is `true` (the local stack and tests set it). */
  metrics: boolean;
  /** POWERTOOLS_TRACE_ENABLED: the X-Ray tracer loads unless it is `false` (the local stack and tests set it). */
  tracing: boolean;
}

type Env = Record<string, string | undefined>;

const MB = 1024 * 1024;

/** The variable's value, or undefined when unset or empty (an empty variable means "not set"). */
const raw = (env: Env, name: string): string | undefined => (env[name] === '' ? undefined : env[name]);

export function required(env: Env, name: string): string {
  return requireSetting(raw(env, name), name);
}

/**
 * A setting that some containers do without but this use requires (AUTH_ISSUER: the token
 * verifier and the local token endpoint): its value, or the error naming its variable.
 */
export function requireSetting<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

/** A number within the bounds `check` accepts, or `fallback` when unset. */
function numeric(env: Env, name: string, fallback: number, check: (n: number) => boolean, what: string): number {
  const v = raw(env, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v.trim() === '' || !check(n)) throw new Error(`Environment variable ${name} must be ${what}, got "${v}"`);
  return n;
}

const positiveInt = (env: Env, name: string, fallback: number): number => numeric(env, name, fallback, (n) => Number.isInteger(n) && n > 0, 'a positive integer');
const nonNegativeInt = (env: Env, name: string, fallback: number): number => numeric(env, name, fallback, (n) => Number.isInteger(n) && n >= 0, 'a non-negative integer');
const positiveNumber = (env: Env, name: string, fallback: number): number => numeric(env, name, fallback, (n) => Number.isFinite(n) && n > 0, 'a positive number');
/** Durations: fractions are allowed (they always were), 0 usually means "no caching". */
const nonNegativeNumber = (env: Env, name: string, fallback: number): number => numeric(env, name, fallback, (n) => Number.isFinite(n) && n >= 0, 'a non-negative number');

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const v = raw(env, name);
  if (v === undefined) return fallback;
  const lower = v.toLowerCase();
  if (!(allowed as readonly string[]).includes(lower)) throw new Error(`Environment variable ${name} must be one of ${allowed.join(', ')}, got "${v}"`);
  return lower as T;
}

/** A yes/no setting: 1, true, yes, on or 0, false, no, off (any case); anything else is an error naming it. */
const flag = (env: Env, name: string, fallback: boolean): boolean =>
  ['1', 'true', 'yes', 'on'].includes(oneOf(env, name, ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], fallback ? 'on' : 'off'));

/** A comma-separated list, each entry non-empty. */
function list(env: Env, name: string): string[] {
  const items = required(env, name)
    .split(',')
    .map((x) => x.trim());
  if (items.some((x) => x === '')) throw new Error(`Environment variable ${name} must be a comma-separated list without empty entries, got "${env[name]}"`);
  return items;
}

/**
 * A cache's memory budget in bytes: the variable `name` in MB, or by default `fraction` of the
 * Lambda function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, which Lambda sets), elsewhere of
 * V8's heap limit.
 */
const memoryShare = (env: Env, name: string, fraction: number): number =>
  positiveNumber(env, name, positiveNumber(env, 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE', getHeapStatistics().heap_size_limit / MB) * fraction) * MB;

/** TENANT_RATE_PER_SECOND (default 200) and TENANT_BURST (default twice the rate). */
function tenantQuota(env: Env): Config['tenantQuota'] {
  const ratePerSecond = positiveInt(env, 'TENANT_RATE_PER_SECOND', 200);
  return { ratePerSecond, burst: positiveInt(env, 'TENANT_BURST', 2 * ratePerSecond) };
}

/**
 * TRAINING_TASK_MIN_EVENTS's default. A run fits its algorithm twice (on its holdout split, then
 * on everything); the default algorithm (`auto`) took 234 CPU-seconds per fit on 300,000
 * training events (docs/benchmarks.md, scale), so 200,000 events keep a run in the training
 * worker well inside Lambda's 15 minutes; larger tenants train in the task.
 */
export const DEFAULT_TASK_MIN_EVENTS = 200_000;

/** The container task's settings: all or none (one set alone is an error naming the first missing). */
const TASK_VARIABLES = ['TRAINING_TASK_CLUSTER', 'TRAINING_TASK_DEFINITION', 'TRAINING_TASK_CONTAINER', 'TRAINING_TASK_SUBNETS', 'TRAINING_TASK_SECURITY_GROUPS'] as const;

/** TRAINING_TASK_MIN_EVENTS (default DEFAULT_TASK_MIN_EVENTS), and the task's TRAINING_TASK_* (all or none). */
function training(env: Env): Config['training'] {
  const taskMinEvents = positiveInt(env, 'TRAINING_TASK_MIN_EVENTS', DEFAULT_TASK_MIN_EVENTS);
  if (TASK_VARIABLES.every((name) => raw(env, name) === undefined)) return { taskMinEvents, task: undefined };
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

function auth(env: Env): Config['auth'] {
  const issuer = raw(env, 'AUTH_ISSUER');
  return {
    userPoolId: raw(env, 'USER_POOL_ID'),
    issuer,
    jwksUri: raw(env, 'AUTH_JWKS_URI') ?? (issuer ? `${issuer}/.well-known/jwks.json` : ''),
    jwksFile: raw(env, 'AUTH_JWKS_FILE'),
    signingKeyFile: raw(env, 'AUTH_SIGNING_KEY_FILE'),
    tokenLifetimeSeconds: positiveInt(env, 'TOKEN_LIFETIME_SECONDS', 3600),
    tokenRatePerSecond: positiveInt(env, 'TOKEN_RATE_PER_SECOND', 10),
    tokenBurst: positiveInt(env, 'TOKEN_BURST', 20),
  };
}

function search(env: Env): SearchConfig {
  return {
    pointerCheckMs: nonNegativeNumber(env, 'INDEX_CHECK_SECONDS', 30) * 1000,
    deltaTtlMs: nonNegativeNumber(env, 'SEARCH_DELTA_TTL_MS', 0),
    readWaitMs: positiveNumber(env, 'SEARCH_READ_WAIT_MS', 2000),
    rebuildAfterChanges: positiveInt(env, 'INDEX_REBUILD_AFTER_CHANGES', 500),
    maxIndexAgeSeconds: nonNegativeNumber(env, 'INDEX_MAX_AGE_SECONDS', 600),
    pinnedTtlMs: nonNegativeNumber(env, 'SEARCH_CURSOR_PIN_SECONDS', 300) * 1000,
    retainSeconds: nonNegativeNumber(env, 'INDEX_RETAIN_SECONDS', 3600),
    synonymsCacheMs: nonNegativeNumber(env, 'SYNONYMS_CACHE_MS', 5000),
    vectorOnlyMinCosine: numeric(env, 'VECTOR_ONLY_MIN_COSINE', 0.3, (n) => n >= -1 && n <= 1, 'a cosine from -1 to 1'),
    memoryBytes: memoryShare(env, 'SEARCH_MEMORY_MB', 1 / 2),
  };
}

function embedding(env: Env): EmbeddingConfig {
  const provider = raw(env, 'EMBEDDING_PROVIDER') ?? 'local';
  if (provider !== 'local' && provider !== 'bedrock') throw new Error(`Environment variable EMBEDDING_PROVIDER must be local or bedrock, got "${provider}"`);
  const dimensions = numeric(env, 'EMBEDDING_DIMENSIONS', 512, (n) => n === 256 || n === 512 || n === 1024, '256, 512 or 1024') as EmbeddingConfig['dimensions'];
  return { provider, dimensions };
}

function consoleAuth(env: Env): ConsoleConfig {
  return {
    sessionSeconds: positiveNumber(env, 'CONSOLE_SESSION_SECONDS', 8 * 3600),
    userCheckSeconds: nonNegativeNumber(env, 'CONSOLE_USER_CHECK_SECONDS', 300),
    failuresPerAddress: positiveInt(env, 'CONSOLE_LOGIN_BURST', 10),
    failuresPerEmail: positiveInt(env, 'CONSOLE_LOGIN_EMAIL_BURST', 5),
    refillPerSecond: positiveNumber(env, 'CONSOLE_LOGIN_REFILL_PER_SECOND', 1 / 30),
    cognitoClientId: raw(env, 'CONSOLE_CLIENT_ID'),
    originVerify: raw(env, 'CONSOLE_ORIGIN_VERIFY'),
  };
}

function observability(env: Env): ObservabilityConfig {
  return {
    serviceName: raw(env, 'POWERTOOLS_SERVICE_NAME') ?? 'recsearch',
    metricsNamespace: raw(env, 'POWERTOOLS_METRICS_NAMESPACE') ?? 'recsearch',
    metrics: raw(env, 'POWERTOOLS_METRICS_DISABLED') !== 'true',
    tracing: raw(env, 'POWERTOOLS_TRACE_ENABLED') !== 'false',
  };
}

/** One reader per top-level setting: `config()` calls each on first use, `readConfig` all at once. */
const readers: { [K in keyof Config]: (env: Env) => Config[K] } = {
  tableName: (env) => required(env, 'TABLE_NAME'),
  dynamodbEndpoint: (env) => raw(env, 'DYNAMODB_ENDPOINT'),
  region: (env) => raw(env, 'AWS_REGION') ?? 'us-east-1',
  auth,
  corsAllowOrigin: (env) => raw(env, 'CORS_ALLOW_ORIGIN') ?? '*',
  maxBodyBytes: (env) => positiveInt(env, 'MAX_BODY_BYTES', 1_048_576),
  idempotencyTtlSeconds: (env) => positiveInt(env, 'IDEMPOTENCY_TTL_SECONDS', 86_400),
  tenantQuota,
  training,
  search,
  recs: (env) => ({ modelMemoryBytes: memoryShare(env, 'MODEL_MEMORY_MB', 1 / 4) }),
  control: (env) => ({ cacheMs: nonNegativeNumber(env, 'CONTROL_CACHE_MS', 5000) }),
  embedding,
  console: consoleAuth,
  storage: (env) => ({ artifactBucket: raw(env, 'ARTIFACT_BUCKET'), blobDir: raw(env, 'BLOB_DIR') }),
  queues: (env) => ({ embedding: raw(env, 'QUEUE_URL_EMBEDDING'), training: raw(env, 'QUEUE_URL_TRAINING') }),
  maintenance: (env) => ({ embedGraceSeconds: nonNegativeNumber(env, 'EMBED_GRACE_SECONDS', 60), userRefKey: required(env, 'USER_REF_KEY') }),
  observability,
};
const settingNames = Object.keys(readers) as (keyof Config)[];

/** Every setting, read now: the first bad value throws, naming its variable. */
export function readConfig(env: Env = process.env): Config {
  const out: Partial<Record<keyof Config, unknown>> = {};
  for (const k of settingNames) out[k] = readers[k](env);
  return out as Config;
}

/** The settings read so far in this container (a named cache; bounded by the settings' count). */
const cached: Partial<Config> = {};

function setting<K extends keyof Config>(k: K): Config[K] {
  if (!(k in cached)) cached[k] = readers[k](process.env);
  return cached[k] as Config[K];
}

/** The container's configuration: each setting is read from the environment on its first use, then kept. */
const lazy = Object.defineProperties({}, Object.fromEntries(settingNames.map((k) => [k, { get: () => setting(k), enumerable: true }]))) as Config;

export function config(): Config {
  return lazy;
}

/**
 * The local server's own settings (`npm start`, bin/server.ts; `npm run admin` finds the running
 * server by them), read once at its start; an invalid value fails with the variable's name.
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

export function readServerConfig(env: Env = process.env): ServerConfig {
  const port = numeric(env, 'PORT', 3000, (n) => Number.isInteger(n) && n >= 0 && n <= 65_535, 'a port number from 0 to 65535 (0: any free port)');
  return {
    dataDir: raw(env, 'DATA_DIR') ?? '.data',
    port,
    host: raw(env, 'HOST') ?? '127.0.0.1',
    logFormat: oneOf(env, 'LOG_FORMAT', ['text', 'json'], 'text'),
    demo: flag(env, 'DEMO', true),
  };
}

/**
 * The local stack's own settings (local/stack.ts), read each time a stack starts, after
 * its environment is applied: a process (a test file, a benchmark) may start several stacks with
 * different settings.
 */
export interface LocalConfig {
  /** LOCAL_RETRY_DELAY_MS (default 1000, at most an hour): local queue, delay before a failed message is retried (× receive count). */
  retryDelayMs: number;
  /** MAINTENANCE_SECONDS (default 10, at most 2,147,483): how often the maintenance pass runs. */
  maintenanceSeconds: number;
  /** LOCAL_API_THREADS (default 0): API handlers run in this many worker threads (0: the server's own thread). */
  apiThreads: number;
  /** CONSOLE_BUILD (default on): `off` (or 0, false, no) leaves the console web app unbuilt (tests, benchmarks); on builds it if stale. */
  consoleBuild: boolean;
  /**
   * LOCAL_IAM (default `on`): refuse a function's DynamoDB call that its deployed role would not
   * allow (local/grants.ts). `off` for benchmarks: on Node 20 tracking which function calls costs
   * the serving thread about a sixth of a search's CPU, which on AWS is DynamoDB's, not ours.
   */
  iam: boolean;
}

/** The longest interval a Node timer takes, in whole seconds. */
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

export function readLocalConfig(env: Env = process.env): LocalConfig {
  return {
    // Times a receive count (up to 5), under what a Node timer holds: an hour at most.
    retryDelayMs: numeric(env, 'LOCAL_RETRY_DELAY_MS', 1000, (n) => n >= 0 && n <= 3_600_000, 'a number of milliseconds from 0 to 3600000'),
    // At most what a Node timer holds (2^31 - 1 ms): a longer interval would fire at once, again and again.
    maintenanceSeconds: numeric(env, 'MAINTENANCE_SECONDS', 10, (n) => n > 0 && n <= MAX_TIMER_SECONDS, `a positive number of seconds up to ${MAX_TIMER_SECONDS}`),
    apiThreads: nonNegativeInt(env, 'LOCAL_API_THREADS', 0),
    consoleBuild: flag(env, 'CONSOLE_BUILD', true),
    iam: oneOf(env, 'LOCAL_IAM', ['on', 'off'], 'on') === 'on',
  };
}
