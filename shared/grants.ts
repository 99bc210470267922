/**
 * What each function may do with the table, the queues and the artifact bucket, as the CDK stack
 * grants it (lib/service-function.ts `bindAccess` and `bindQuota`), read from the same
 * declarations: the route table's `Access` of its routes, or its worker's or schedule's. The
 * local stack refuses every other call a function makes, as AWS would (local/grants.ts), so a
 * missing grant fails a local test instead of a deployment.
 */
import { keys } from './data/keys.ts';
import type { IndexName } from './data/table-schema.ts';
import { schedules, trainingTask, workers, type QueueName } from './queue/workers.ts';
import { notFoundHandlers, routes, tableActions, type Access, type Route, type TableAction } from './routes.ts';

/** Object prefixes of the artifact bucket: search indexes and trained models. A function's bucket grant covers these only. */
export const ARTIFACT_PREFIXES = ['search', 'models'] as const;

/** Routes that authenticate a Core client charge its tenant's quota: their function may update the quota rows. */
export const chargesQuota = (r: Route): boolean => r.api === 'core' && r.scope !== undefined;

export interface Grant {
  /** Actions on the table itself (a Query without an index). */
  actions: ReadonlySet<TableAction>;
  /** Indexes the function may Query. */
  indexes: ReadonlySet<IndexName>;
  /** UpdateItem on the quota rows (partition keys `QUOTA#…`), whatever `actions` holds. */
  quotaRows: boolean;
  /** UpdateItem on the console-session rows (partition keys `CONSOLESESSION#…`, `consoleSessions`), whatever `actions` holds. */
  sessionRows: boolean;
  /** PutItem and DeleteItem on the console-session rows too (`opensSessions`), whatever `actions` holds. */
  sessionWrites: boolean;
  /** Its queues and bucket, as declared. */
  access: Access;
}

const grantOf = (access: Access, quotaRows: boolean): Grant => ({
  actions: new Set(tableActions(access)),
  indexes: new Set(access.indexes ?? []),
  quotaRows,
  sessionRows: access.consoleSessions ?? false,
  sessionWrites: access.opensSessions ?? false,
  access,
});

/**
 * Each function's grant, by its handler module (`functions/<module>.ts`). A module's routes
 * share one `Access` (test/unit/routes.test.ts checks it): the stack binds a function once, with
 * its first route's.
 */
export function grants(): ReadonlyMap<string, Grant> {
  const out = new Map<string, Grant>();
  for (const r of routes) {
    // The token endpoint is Cognito's on AWS: no function of ours serves it.
    if (r.api === 'auth' || out.has(r.handler)) continue;
    out.set(
      r.handler,
      grantOf(
        r.access,
        routes.some((x) => x.handler === r.handler && chargesQuota(x)),
      ),
    );
  }
  for (const m of Object.values(notFoundHandlers)) out.set(m, grantOf({}, false));
  for (const w of [...workers, ...schedules, trainingTask]) out.set(w.handler, grantOf(w.access, false));
  return out;
}

/** Handler modules that stand in locally for what is no function on AWS (the token endpoint: Cognito). */
export const localOnlyHandlers = (): ReadonlySet<string> => new Set(routes.filter((r) => r.api === 'auth').map((r) => r.handler));

/** A call a grant does not cover: the IAM action and the resource it was asked on. */
export interface Refusal {
  action: string;
  resource: string;
}

/** DynamoDB's JSON operations this service makes, with what IAM checks for each. */
type Call = { operation: string; index?: string | undefined; partitionKey?: string | undefined };

/** What `grant` does not cover of `call` on `table` (its ARN), or undefined when it does. */
export function tableRefusal(grant: Grant, call: Call, table: string): Refusal | undefined {
  const action = `dynamodb:${call.operation}`;
  if (call.index !== undefined) {
    if (call.operation === 'Query' && grant.indexes.has(call.index as IndexName)) return undefined;
    return { action, resource: `${table}/index/${call.index}` };
  }
  if (grant.actions.has(call.operation as TableAction)) return undefined;
  if (call.operation === 'UpdateItem' && grant.quotaRows && call.partitionKey?.startsWith(keys.quotaPkPrefix)) return undefined;
  if (call.operation === 'UpdateItem' && grant.sessionRows && call.partitionKey?.startsWith(keys.consoleSessionPkPrefix)) return undefined;
  if ((call.operation === 'PutItem' || call.operation === 'DeleteItem') && grant.sessionWrites && call.partitionKey?.startsWith(keys.consoleSessionPkPrefix)) return undefined;
  return { action, resource: table };
}

/** What `grant` does not cover of sending to (SendMessage) or reading the backlog of (GetQueueAttributes) `queue`, or undefined. */
export function queueRefusal(grant: Grant, op: 'send' | 'backlog', queue: QueueName): Refusal | undefined {
  const granted = op === 'send' ? grant.access.queues : grant.access.queueDepth;
  if (granted?.includes(queue)) return undefined;
  return { action: op === 'send' ? 'sqs:SendMessage' : 'sqs:GetQueueAttributes', resource: queue };
}

const S3_ACTIONS = { get: 's3:GetObject', put: 's3:PutObject', delete: 's3:DeleteObject' } as const;

/** What `grant` does not cover of reading, writing or deleting the artifact `key`, or undefined. */
export function blobRefusal(grant: Grant, op: keyof typeof S3_ACTIONS, key: string): Refusal | undefined {
  const prefix = key.slice(0, key.indexOf('/')) as (typeof ARTIFACT_PREFIXES)[number];
  const { bucket, bucketPrefixes, bucketDeletes, bucketPuts, bucketGets } = grant.access;
  const inBucket = (bucketPrefixes ?? ARTIFACT_PREFIXES).includes(prefix);
  const ok =
    ARTIFACT_PREFIXES.includes(prefix) &&
    (op === 'get'
      ? (bucket !== undefined && inBucket) || (bucketGets?.includes(prefix) ?? false)
      : op === 'put'
        ? (bucket === 'readwrite' && inBucket) || (bucketPuts?.includes(prefix) ?? false)
        : (bucketDeletes?.includes(prefix) ?? false));
  return ok ? undefined : { action: S3_ACTIONS[op], resource: key };
}
