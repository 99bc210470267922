/**
 * The local stand-in for the functions' IAM roles on the table: every DynamoDB call a handler
 * makes is checked against what the CDK stack grants its function (shared/grants.ts), and one it
 * does not grant is answered as DynamoDB answers it, 400 `AccessDeniedException`, instead of
 * succeeding locally and failing once deployed. Calls made outside a function (the local stack's
 * own set-up: the demo tenant, its seed) are not checked, as an administrator's would not be, nor
 * are the token endpoint's (Cognito's on AWS).
 *
 * The function is known from the invocation: each place the local stack invokes a handler runs
 * it inside `asFunction`, and what the handler starts (awaits, timers) inherits it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { localOnlyHandlers, refusal, tableGrants, type TableGrant } from '../shared/grants.ts';

const grants = tableGrants();
const unchecked = localOnlyHandlers();
let enforced = true;

/** Whether calls are checked in this thread (LOCAL_IAM); the stack sets it and hands it to its threads. */
export function enforceGrants(on: boolean): void {
  enforced = on;
}
export const grantsEnforced = (): boolean => enforced;
const current = new AsyncLocalStorage<{ module: string; grant: TableGrant }>();

/** Runs `fn` as the function of handler module `module` (its DynamoDB calls are checked against its grant). */
export function asFunction<T>(module: string, fn: () => T): T {
  // The token endpoint stands in for Cognito, which has no role to check.
  if (!enforced || unchecked.has(module)) return fn();
  const grant = grants.get(module);
  if (!grant) throw new Error(`local stack: no grant is declared for functions/${module}.ts (shared/routes.ts, shared/queue/workers.ts)`);
  return current.run({ module, grant }, fn);
}

const INDEX = /"IndexName":"([^"]+)"/;
const TABLE = /"(?:TableName|RequestItems)":\{?"([^"]+)"/;

/**
 * The refusal DynamoDB would answer a signed JSON request with (`x-amz-target` and its body), or
 * undefined when the calling function's grant covers it or no function is calling.
 */
export function deniedCall(target: string | undefined, body: string): { status: number; body: string } | undefined {
  const caller = current.getStore();
  if (!caller || !target) return undefined;
  const operation = target.slice(target.indexOf('.') + 1);
  const index = operation === 'Query' || operation === 'Scan' ? INDEX.exec(body)?.[1] : undefined;
  const partitionKey = operation === 'UpdateItem' && !caller.grant.actions.has('UpdateItem') ? partitionKeyOf(body) : undefined;
  const table = `arn:aws:dynamodb:local:000000000000:table/${TABLE.exec(body)?.[1] ?? '?'}`;
  const why = refusal(caller.grant, { operation, index, partitionKey }, table);
  if (!why) return undefined;
  const message = `User: arn:aws:sts::000000000000:assumed-role/${caller.module.replace(/\//g, '-')}/local ${why} because no identity-based policy allows the dynamodb:${operation} action`;
  // Said where a developer looks: the handler usually answers a plain 500.
  console.error(
    JSON.stringify({
      level: 'ERROR',
      message: `local IAM: functions/${caller.module}.ts is not granted dynamodb:${operation}${index ? ` on ${index}` : ''} (declare it in its Access)`,
      detail: message,
    }),
  );
  return { status: 400, body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', Message: message }) };
}

function partitionKeyOf(body: string): string | undefined {
  try {
    const key = (JSON.parse(body) as { Key?: { pk?: { S?: unknown } } }).Key?.pk?.S;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}
