import { randomBytes } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { keys } from './keys.ts';
import { applied, getRow, putAll, queryPage, queryUpTo, stripKeys, type Row } from './ops.ts';

/** Console record kinds, each with per-tenant integer ids. */
export type ConsoleKind = 'event_type' | 'context' | 'template' | 'endpoint' | 'job' | 'model';

export interface ConsoleRecord {
  id: number;
  [k: string]: unknown;
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
  /** The tenant's event types and endpoints, in one read (what every recommendation needs). */
  servingConfig(tenant: string): Promise<{ event_type: ConsoleRecord[]; endpoint: ConsoleRecord[] }>;
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
  appendLog(tenant: string, jobId: number, lines: LogLine[]): Promise<void>;
  logs(tenant: string, jobId: number, after: string | undefined, limit: number): Promise<{ lines: LogLine[]; cursor: string | null }>;
}

/** The millisecond of this process's latest log line, and the next sequence number within it. */
const logClock = { ms: 0, seq: 0 };

/** A record not taken back (see `withdraw`). */
const live = (r: Row) => r.withdrawn === undefined;

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
      const out: { event_type: ConsoleRecord[]; endpoint: ConsoleRecord[] } = { event_type: [], endpoint: [] };
      for (const r of rows) {
        const kind = keys.consoleKindOf(String(r.sk));
        if ((kind === 'event_type' || kind === 'endpoint') && live(r)) out[kind].push(stripKeys(r) as ConsoleRecord);
      }
      return out;
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
      return applied(() =>
        t.doc.send(
          new UpdateCommand({
            TableName: t.tableName,
            Key: keys.consoleRecord(tenant, kind, id),
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: conds.join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      );
    },
    async withdraw(tenant, kind, id) {
      await t.doc.send(new UpdateCommand({ TableName: t.tableName, Key: keys.consoleRecord(tenant, kind, id), UpdateExpression: 'SET withdrawn = :t', ExpressionAttributeValues: { ':t': true } }));
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
