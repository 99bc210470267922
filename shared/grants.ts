/**
 * What each function may do with the table, as the CDK stack grants it (lib/service-function.ts
 * `bindTable` and `bindQuota`), read from the same declarations: the route table's `Access` of
 * its routes, or its worker's or schedule's. The local stack refuses every other call a function
 * makes, as DynamoDB would (local/grants.ts), so a missing grant fails a local test instead of a
 * deployment.
 */
import { keys } from './data/keys.ts';
import type { IndexName } from './data/table-schema.ts';
import { schedules, workers } from './queue/workers.ts';
import { notFoundHandlers, routes, tableActions, type Access, type Route, type TableAction } from './routes.ts';

/** Routes that authenticate a Core client charge its tenant's quota: their function may update the quota rows. */
export const chargesQuota = (r: Route): boolean => r.api === 'core' && r.scope !== undefined;

export interface TableGrant {
  /** Actions on the table itself (a Query without an index). */
  actions: ReadonlySet<TableAction>;
  /** Indexes the function may Query. */
  indexes: ReadonlySet<IndexName>;
  /** UpdateItem on the quota rows (partition keys `QUOTA#…`), whatever `actions` holds. */
  quotaRows: boolean;
}

const grantOf = (access: Access, quotaRows: boolean): TableGrant => ({ actions: new Set(tableActions(access)), indexes: new Set(access.indexes ?? []), quotaRows });

/**
 * Each function's grant, by its handler module (`functions/<module>.ts`). A module's routes
 * share one `Access` (test/unit/routes.test.ts checks it): the stack binds a function once, with
 * its first route's.
 */
export function tableGrants(): ReadonlyMap<string, TableGrant> {
  const out = new Map<string, TableGrant>();
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
  for (const w of [...workers, ...schedules]) out.set(w.handler, grantOf(w.access, false));
  return out;
}

/** Handler modules that stand in locally for what is no function on AWS (the token endpoint: Cognito). */
export const localOnlyHandlers = (): ReadonlySet<string> => new Set(routes.filter((r) => r.api === 'auth').map((r) => r.handler));

/** DynamoDB's JSON operations this service makes, with what IAM checks for each. */
type Call = { operation: string; index?: string | undefined; partitionKey?: string | undefined };

/**
 * Why `grant` does not cover `call`, in IAM's words, or undefined when it does. `table` names the
 * resource in the message.
 */
export function refusal(grant: TableGrant, call: Call, table: string): string | undefined {
  const action = call.operation as TableAction;
  if (call.index !== undefined) {
    if (call.operation === 'Query' && grant.indexes.has(call.index as IndexName)) return undefined;
    return `is not authorized to perform: dynamodb:${call.operation} on resource: ${table}/index/${call.index}`;
  }
  if (grant.actions.has(action)) return undefined;
  if (call.operation === 'UpdateItem' && grant.quotaRows && call.partitionKey?.startsWith(keys.quotaPkPrefix)) return undefined;
  return `is not authorized to perform: dynamodb:${call.operation} on resource: ${table}`;
}
