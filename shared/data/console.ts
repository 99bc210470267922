import { randomBytes } from 'node:crypto';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ControlConfig, Experiment, RerankRecord, Rule, Segment } from '../control/types.ts';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { keys } from './keys.ts';
import { applied, getRow, putAll, queryPage, queryUpTo, stripKeys, type Row } from './ops.ts';

/** Console record kinds, each with per-tenant integer ids. */
export type ConsoleKind = 'event_type' | 'context' | 'template' | 'endpoint' | 'job' | 'model' | ControlKind;
/** The control plane's kinds, stored in one partition per tenant (a rerank record's id is its context's). */
export type ControlKind = 'rule' | 'segment' | 'experiment' | 'rerank';

/** Field values a conditional write requires (`undefined`: the field must be absent). */
export type Expect = Record<string, unknown>;

/** One change to a control resource, as the audit trail keeps it. */
export interface AuditEntry {
  /** Per tenant, increasing: newer entries have higher ids. */
  id: number;
  /** Unix seconds. */
  at: number;
  /** The API key's 8-character prefix (null when no key made the change). */
  actor: string | null;
  action: 'create' | 'update' | 'delete';
  /** `rules/12`, `segments/3`, `experiments/4`, `rerank-controls/7`. */
  resource: string;
  before: unknown;
  after: unknown;
}

export interface ConsoleRecord {
  id: number;
  [k: string]: unknown;
}

/**
 * A user whose events were erased: from `requested_at` (unix seconds) serving no longer
 * personalises from what a model's artifact holds of them, nor from their events created up to
 * `completed_at` (null while the erasure runs: none of them).
 */
export interface ErasedUser {
  user_id: string;
  requested_at: number;
  completed_at: number | null;
}

export interface LogLine {
  ts: number;
  message: string;
}

/** Generic console records: small per-tenant collections read whole, updated conditionally. */
export interface ConsoleStore {
  nextId(tenant: string, kind: ConsoleKind): Promise<number>;
  put(tenant: string, kind: ConsoleKind, rec: ConsoleRecord): Promise<void>;
  get<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, id: number): Promise<T | undefined>;
  list<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind): Promise<T[]>;
  /** The tenant's event types, endpoints and erased users, in one read (what every recommendation needs). */
  servingConfig(tenant: string): Promise<{ event_type: ConsoleRecord[]; endpoint: ConsoleRecord[]; erased_user: ErasedUser[] }>;
  /** Stores a user's erasure marker (one per user: a later erasure replaces it). */
  putErasure(tenant: string, marker: ErasedUser): Promise<void>;
  /**
   * Sets fields; with `expect`, only if those fields currently hold those values (`undefined`:
   * only if the field is absent). false when that failed.
   */
  update(tenant: string, kind: ConsoleKind, id: number, set: Record<string, unknown>, expect?: Record<string, unknown>): Promise<boolean>;
  /**
   * Takes back a record just created that lost a race (a name another record took first): from
   * then on it is as if it had never been written (get, list and update skip it).
   */
  withdraw(tenant: string, kind: ConsoleKind, id: number): Promise<void>;
  /**
   * One page of a kind's records in id order, those with ids above `after` whose fields equal
   * `where`.
   */
  page<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, q: { limit: number; after?: number | undefined; where?: Record<string, unknown> }): Promise<{ rows: T[]; hasMore: boolean }>;
  /** Stores a record in place of the one with its id: `'new'` only if there is none, else only if `expect` holds. false when not. */
  replace(tenant: string, kind: ConsoleKind, rec: ConsoleRecord, expect: Expect | 'new'): Promise<boolean>;
  /** Deletes a record (with `expect`, only if it holds); false when there was none or it did not hold. */
  remove(tenant: string, kind: ConsoleKind, id: number, expect?: Expect): Promise<boolean>;
  /** Notes a context in the control partition, so `controlConfig` lists it. */
  putContextMarker(tenant: string, contextId: number): Promise<void>;
  /**
   * The tenant's rules, segments, experiments, rerank controls and context ids, with one
   * (strongly consistent) Query of the control partition. Bookkeeping fields (named `_...`) are
   * left out.
   */
  controlConfig(tenant: string): Promise<ControlConfig>;
  /** Adds an entry to a control resource's history (its id allocated here). */
  appendAudit(tenant: string, entry: Omit<AuditEntry, 'id'>): Promise<AuditEntry>;
  /** A resource's history, newest first: entries with ids below `before`. */
  auditPage(tenant: string, resource: string, q: { limit: number; before?: number | undefined }): Promise<{ rows: AuditEntry[]; hasMore: boolean }>;
  appendLog(tenant: string, jobId: number, lines: LogLine[]): Promise<void>;
  logs(tenant: string, jobId: number, after: string | undefined, limit: number): Promise<{ lines: LogLine[]; cursor: string | null }>;
}

/** The millisecond of this process's latest log line, and the next sequence number within it. */
const logClock = { ms: 0, seq: 0 };

/** A record not taken back (see `withdraw`). */
const live = (r: Row) => r.withdrawn === undefined;

/** A record without its keys and bookkeeping fields (named `_...`). */
function shown(r: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(stripKeys(r))) if (!k.startsWith('_')) out[k] = v;
  return out;
}

/** A ConditionExpression requiring the row to exist, not withdrawn, with `expect`'s values. */
function condition(expect: Expect, names: Record<string, string>, values: Record<string, unknown>): string {
  const conds = ['attribute_exists(pk)', 'attribute_not_exists(withdrawn)'];
  Object.entries(expect).forEach(([k, v], n) => {
    names[`#e${n}`] = k;
    if (v === undefined) {
      conds.push(`attribute_not_exists(#e${n})`);
      return;
    }
    values[`:e${n}`] = v;
    conds.push(`#e${n} = :e${n}`);
  });
  return conds.join(' AND ');
}

/** Names and values may not be empty in a DynamoDB request. */
const nonEmpty = <T extends object>(o: T): T | undefined => (Object.keys(o).length ? o : undefined);

export function dynamoConsoleStore(t: TableRef): ConsoleStore {
  return {
    nextId: (tenant, kind) => allocateIds(t, tenant, kind, 1),
    async put(tenant, kind, rec) {
      await t.doc.send(new PutCommand({ TableName: t.tableName, Item: { ...keys.consoleRecord(tenant, kind, rec.id), ...rec } }));
    },
    async get<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, id: number) {
      const row = await getRow(t, keys.consoleRecord(tenant, kind, id), { consistent: true });
      return row && live(row) ? (stripKeys(row) as T) : undefined;
    },
    async list<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind) {
      const prefix = keys.consoleSkPrefix(kind);
      const rows = await queryUpTo(
        t,
        {
          KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.consolePk(tenant, kind), ...(prefix ? { ':prefix': prefix } : {}) },
          ConsistentRead: true,
        },
        10_000,
      );
      return rows.filter(live).map((r) => stripKeys(r) as T);
    },
    async servingConfig(tenant) {
      const rows = await queryUpTo(t, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.consolePk(tenant, 'endpoint') }, ConsistentRead: true }, 10_000);
      const out: { event_type: ConsoleRecord[]; endpoint: ConsoleRecord[]; erased_user: ErasedUser[] } = { event_type: [], endpoint: [], erased_user: [] };
      for (const r of rows) {
        const kind = keys.consoleKindOf(String(r.sk));
        if ((kind === 'event_type' || kind === 'endpoint') && live(r)) out[kind].push(stripKeys(r) as ConsoleRecord);
        else if (kind === keys.erasedUserKind) {
          out.erased_user.push({ user_id: String(r.user_id), requested_at: Number(r.requested_at), completed_at: r.completed_at === null || r.completed_at === undefined ? null : Number(r.completed_at) });
        }
      }
      return out;
    },
    async putErasure(tenant, marker) {
      await t.doc.send(new PutCommand({ TableName: t.tableName, Item: { ...keys.erasedUser(tenant, marker.user_id), ...marker } }));
    },
    async update(tenant, kind, id, set, expect = {}) {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      const sets: string[] = [];
      Object.entries(set).forEach(([k, v], n) => {
        names[`#s${n}`] = k;
        values[`:s${n}`] = v;
        sets.push(`#s${n} = :s${n}`);
      });
      const cond = condition(expect, names, values);
      return applied(() =>
        t.doc.send(
          new UpdateCommand({
            TableName: t.tableName,
            Key: keys.consoleRecord(tenant, kind, id),
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: cond,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      );
    },
    async withdraw(tenant, kind, id) {
      await t.doc.send(new UpdateCommand({ TableName: t.tableName, Key: keys.consoleRecord(tenant, kind, id), UpdateExpression: 'SET withdrawn = :t', ExpressionAttributeValues: { ':t': true } }));
    },
    async page<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, q: { limit: number; after?: number | undefined; where?: Record<string, unknown> }) {
      const prefix = keys.consoleSkPrefix(kind);
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = { ':pk': keys.consolePk(tenant, kind) };
      let range = '';
      if (q.after !== undefined) {
        const b = keys.consoleIdsAfter(kind, q.after);
        range = ' AND sk BETWEEN :from AND :to';
        Object.assign(values, { ':from': b.from, ':to': b.to });
      } else if (prefix) {
        range = ' AND begins_with(sk, :prefix)';
        values[':prefix'] = prefix;
      }
      const filters = ['attribute_not_exists(withdrawn)'];
      Object.entries(q.where ?? {}).forEach(([k, v], n) => {
        names[`#w${n}`] = k;
        values[`:w${n}`] = v;
        filters.push(`#w${n} = :w${n}`);
      });
      const rows = await queryUpTo(
        t,
        {
          KeyConditionExpression: `pk = :pk${range}`,
          FilterExpression: filters.join(' AND '),
          ExpressionAttributeNames: nonEmpty(names),
          ExpressionAttributeValues: values,
          ConsistentRead: true,
        },
        q.limit + 1,
      );
      return { rows: rows.slice(0, q.limit).map((r) => stripKeys(r) as T), hasMore: rows.length > q.limit };
    },
    async replace(tenant, kind, rec, expect) {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      const cond = expect === 'new' ? 'attribute_not_exists(pk)' : condition(expect, names, values);
      return applied(() =>
        t.doc.send(
          new PutCommand({
            TableName: t.tableName,
            Item: { ...keys.consoleRecord(tenant, kind, rec.id), ...rec },
            ConditionExpression: cond,
            ExpressionAttributeNames: nonEmpty(names),
            ExpressionAttributeValues: nonEmpty(values),
          }),
        ),
      );
    },
    async remove(tenant, kind, id, expect = {}) {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      const cond = condition(expect, names, values);
      return applied(() =>
        t.doc.send(
          new DeleteCommand({
            TableName: t.tableName,
            Key: keys.consoleRecord(tenant, kind, id),
            ConditionExpression: cond,
            ExpressionAttributeNames: nonEmpty(names),
            ExpressionAttributeValues: nonEmpty(values),
          }),
        ),
      );
    },
    async putContextMarker(tenant, contextId) {
      await t.doc.send(new PutCommand({ TableName: t.tableName, Item: { ...keys.contextMarker(tenant, contextId), id: contextId } }));
    },
    async controlConfig(tenant) {
      const rows = await queryUpTo(t, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.controlPk(tenant) }, ConsistentRead: true }, 10_000);
      const out: ControlConfig = { rules: [], segments: [], experiments: [], rerank: [], contexts: [] };
      for (const r of rows) {
        if (!live(r)) continue;
        const sk = String(r.sk);
        switch (keys.consoleKindOf(sk)) {
          case 'rule':
            out.rules.push(shown(r) as unknown as Rule);
            break;
          case 'segment':
            out.segments.push(shown(r) as unknown as Segment);
            break;
          case 'experiment':
            out.experiments.push(shown(r) as unknown as Experiment);
            break;
          case 'rerank':
            out.rerank.push(shown(r) as unknown as RerankRecord);
            break;
          case keys.contextMarkerKind:
            out.contexts.push(keys.consoleIdOf(sk));
            break;
        }
      }
      return out;
    },
    async appendAudit(tenant, entry) {
      const rec: AuditEntry = { id: await allocateIds(t, tenant, 'audit', 1), ...entry };
      await t.doc.send(new PutCommand({ TableName: t.tableName, Item: { ...keys.audit(tenant, entry.resource, rec.id), ...rec } }));
      return rec;
    },
    async auditPage(tenant, resource, q) {
      const before = q.before !== undefined ? keys.sortId(q.before) : undefined;
      const rows = await queryUpTo(
        t,
        {
          KeyConditionExpression: `pk = :pk${before ? ' AND sk < :before' : ''}`,
          ExpressionAttributeValues: { ':pk': keys.auditPk(tenant, resource), ...(before ? { ':before': before } : {}) },
          ScanIndexForward: false,
          ConsistentRead: true,
        },
        q.limit + 1,
      );
      return { rows: rows.slice(0, q.limit).map((r) => stripKeys(r) as unknown as AuditEntry), hasMore: rows.length > q.limit };
    },
    async appendLog(tenant, jobId, lines) {
      // Lines this process writes within one millisecond keep their order; no line overwrites another.
      const ms = Date.now();
      if (ms !== logClock.ms) Object.assign(logClock, { ms, seq: 0 });
      const writer = randomBytes(4).toString('hex');
      const rows: Row[] = lines.map((l) => ({ ...keys.jobLog(tenant, jobId, ms, logClock.seq++, writer), ...l }));
      await putAll(t, rows);
    },
    async logs(tenant, jobId, after, limit) {
      const pk = keys.jobLogPk(tenant, jobId);
      const out = await queryPage(t, {
        KeyConditionExpression: `pk = :pk${after ? ' AND sk > :after' : ''}`,
        ExpressionAttributeValues: { ':pk': pk, ...(after ? { ':after': after } : {}) },
        Limit: limit,
        ConsistentRead: true,
      });
      const last = out.items[out.items.length - 1];
      return {
        lines: out.items.map((r) => ({ ts: Number(r.ts), message: String(r.message) })),
        cursor: out.lastKey && last ? String(last.sk) : null,
      };
    },
  };
}
