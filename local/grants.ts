/**
 * The local stand-in for the functions' IAM roles: every DynamoDB call, queue send or backlog read
 * and artifact read, write or delete a handler makes is checked against what the CDK stack grants
 * its function (shared/grants.ts), and one it does not grant is refused as AWS refuses it
 * (DynamoDB: 400 `AccessDeniedException`; the queue and the artifact folder: an `AccessDenied`
 * error), instead of succeeding locally and failing once deployed. Calls made outside a function
 * (the local stack's own set-up: the demo tenant, its seed) are not checked, as an
 * administrator's would not be, nor are the token endpoint's (Cognito's on AWS). Cognito calls are
 * not checked.
 *
 * The function is known from the invocation: each place the local stack invokes a handler runs
 * it inside `asFunction`, and what the handler starts (awaits, timers) inherits it. The training
 * task's process is that one function throughout (`asProcess`, local/task-grants.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { guardFolderBlobs } from '../shared/blob.ts';
import type { HttpResponse } from '@smithy/types';
import { blobRefusal, grants as grantsOf, localOnlyHandlers, queueRefusal, tableRefusal, type Grant, type Refusal } from '../shared/grants.ts';
import type { TableAction } from '../shared/routes.ts';
import type { WorkQueue } from '../shared/queue/messages.ts';

const grants = grantsOf();
const unchecked = localOnlyHandlers();
let enforced = true;

/** Whether calls are checked in this thread (LOCAL_IAM); the stack sets it and hands it to its threads. */
export function enforceGrants(on: boolean): void {
  enforced = on;
}
export const grantsEnforced = (): boolean => enforced;
type Caller = { module: string; grant: Grant };
const current = new AsyncLocalStorage<Caller>();
/** The function a whole process is (the training task's), when no invocation says otherwise. */
let processCaller: Caller | undefined;
const callerNow = (): Caller | undefined => current.getStore() ?? processCaller;

function callerOf(module: string): Caller {
  const grant = grants.get(module);
  if (!grant) throw new Error(`local stack: no grant is declared for functions/${module}.ts (shared/routes.ts, shared/queue/workers.ts)`);
  return { module, grant };
}

/** Runs `fn` as the function of handler module `module` (its calls are checked against its grant). */
export function asFunction<T>(module: string, fn: () => T): T {
  // The token endpoint stands in for Cognito, which has no role to check.
  if (!enforced || unchecked.has(module)) return fn();
  return current.run(callerOf(module), fn);
}

/** From now on every call of this process is `module`'s (a process that is one function: the training task). */
export function asProcess(module: string): void {
  processCaller = enforced ? callerOf(module) : undefined;
}

const INDEX = /"IndexName":"([^"]+)"/;
const TABLE = /"(?:TableName|RequestItems)":\{?"([^"]+)"/;

/**
 * The refusal DynamoDB would answer a signed JSON request with (`x-amz-target` and its body), or
 * undefined when the calling function's grant covers it or no function is calling.
 */
export function deniedCall(target: string | undefined, body: string): { response: HttpResponse } | undefined {
  const caller = callerNow();
  if (!caller || !target) return undefined;
  const operation = target.slice(target.indexOf('.') + 1);
  const index = operation === 'Query' || operation === 'Scan' ? INDEX.exec(body)?.[1] : undefined;
  // Granted on some partitions only (quota and console-session rows: IAM's dynamodb:LeadingKeys): the call's partition key.
  const partitionKey = ROW_GRANTS.has(operation) && !caller.grant.actions.has(operation as TableAction) ? partitionKeyOf(body) : undefined;
  const table = `arn:aws:dynamodb:local:000000000000:table/${TABLE.exec(body)?.[1] ?? '?'}`;
  // IAM has no action of its own for a transaction: each of its writes needs its own (PutItem, ...).
  const calls = operation === 'TransactWriteItems' ? transactionWrites(body) : [{ operation, index, partitionKey }];
  const refusal = calls.map((call) => tableRefusal(caller.grant, call, table)).find((r) => r !== undefined);
  if (!refusal) return undefined;
  const message = `${refused(caller, refusal)} because no identity-based policy allows the ${refusal.action} action`;
  const answer = JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', Message: message });
  return { response: { statusCode: 400, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Buffer.from(answer) } };
}

/** IAM's message for `refusal`, also said where a developer looks (the handler usually answers a plain 500). */
function refused(caller: { module: string }, refusal: Refusal): string {
  const message = `User: arn:aws:sts::000000000000:assumed-role/${caller.module.replace(/\//g, '-')}/local is not authorized to perform: ${refusal.action} on resource: ${refusal.resource}`;
  console.error(
    JSON.stringify({ level: 'ERROR', message: `local IAM: functions/${caller.module}.ts is not granted ${refusal.action} on ${refusal.resource} (declare it in its Access)`, detail: message }),
  );
  return message;
}

/**
 * The writes of a TransactWriteItems body as IAM checks them: Put, Update, Delete and ConditionCheck
 * as PutItem, UpdateItem, DeleteItem and ConditionCheckItem, each with its partition key (a Put's
 * is its Item's), as dynamodb:LeadingKeys is checked on each.
 */
function transactionWrites(body: string): { operation: string; partitionKey?: string | undefined }[] {
  let items: Record<string, { Key?: { pk?: { S?: unknown } }; Item?: { pk?: { S?: unknown } } }>[];
  try {
    items = (JSON.parse(body) as { TransactItems?: typeof items }).TransactItems ?? [];
  } catch {
    return [{ operation: 'TransactWriteItems' }];
  }
  return items.flatMap((item) =>
    Object.entries(item).map(([kind, write]) => {
      const key = (write.Key ?? write.Item)?.pk?.S;
      return { operation: kind === 'ConditionCheck' ? 'ConditionCheckItem' : `${kind}Item`, partitionKey: typeof key === 'string' ? key : undefined };
    }),
  );
}

/** Actions a grant may give on some partitions only (`partitionKey`). */
const ROW_GRANTS: ReadonlySet<string> = new Set(['UpdateItem', 'PutItem', 'DeleteItem']);

/** The partition key of a single-item request: its Key's (UpdateItem, DeleteItem) or its Item's (PutItem). */
function partitionKeyOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { Key?: { pk?: { S?: unknown } }; Item?: { pk?: { S?: unknown } } };
    const key = (parsed.Key ?? parsed.Item)?.pk?.S;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** An AccessDenied error for `refusal` (logged), or undefined without one. */
function denial(caller: { module: string }, refusal: Refusal | undefined): Error | undefined {
  return refusal ? Object.assign(new Error(refused(caller, refusal)), { name: 'AccessDenied' }) : undefined;
}

/** `queue` with each send and backlog read checked against the calling function's grant. */
export function guardedQueue(queue: WorkQueue): WorkQueue {
  return {
    send: (name, messages) => {
      const caller = callerNow();
      // Nothing to send makes no request on AWS (SqsWorkQueue), so IAM is not asked.
      if (messages.length === 0) return queue.send(name, messages);
      const e = caller && denial(caller, queueRefusal(caller.grant, 'send', name));
      return e ? Promise.reject(e) : queue.send(name, messages);
    },
    backlog: (name) => {
      const caller = callerNow();
      const e = caller && denial(caller, queueRefusal(caller.grant, 'backlog', name));
      return e ? Promise.reject(e) : queue.backlog(name);
    },
  };
}

// The artifact folder (BLOB_DIR), in every thread that loads this module.
guardFolderBlobs((op, key) => {
  const caller = callerNow();
  const e = caller && denial(caller, blobRefusal(caller.grant, op, key));
  if (e) throw e;
});
