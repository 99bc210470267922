import { createHash, randomBytes } from 'node:crypto';
import { nowMs } from '../clock.ts';
import type { ControlConfig, Experiment, RerankRecord, Rule, Segment } from '../control/types.ts';
import {
  sweepMembersThrough,
  type AuditEntry,
  type Audited,
  type ConsoleKind,
  type ConsoleRecord,
  type ConsoleStore,
  type ErasedUser as ErasedUserRecord,
  type ErasureSweep as ErasureSweepRecord,
  type Expect,
} from '../domain/console-records.ts';
import { scopedCursor } from './cursor.ts';
import { InvalidInput } from '../domain/errors.ts';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { writtenWithEntry } from './audited-write.ts';
import {
  ActiveRunsIndexed,
  AuditEntry as Audit,
  CONSOLE_RECORDS,
  ConsolePlace,
  ContextMarker,
  Endpoint,
  ErasedUser,
  ErasureMarkerScan,
  ErasureSweep,
  EventType,
  Experiment as ExperimentRecord,
  Rerank,
  Rule as RuleRecord,
  RunLogLine,
  Segment as SegmentRecord,
  StoppedExperiment,
  TrainingRun,
  TrainingRunKeyedBefore,
} from './entities.ts';
import { LAST_ID, type KeyTemplate, type IndexOps, type SkRange } from './entity.ts';
import type { Change, Condition } from './expressions.ts';
import { applied, getRow, getRows, isNew, isStored, put, putAll, queryPage, queryUpTo, refine, remove, stripKeys, transact, update, type Row, type TransactWrite } from './ops.ts';
import { placesOf, type Places } from './places.ts';
import { withRetry, type RetryPolicy } from '../retry.ts';
import { eachAtMost } from '../concurrency.ts';
import { removedRecords, type RemovedRecords } from './removed.ts';

/*
 * Console records (the ConsoleStore of shared/domain/console-records.ts): each kind is an entity
 * of entities.ts (CONSOLE_RECORDS), a partition of its own or a share of the serving or control
 * partition, which servingConfig and controlConfig read whole.
 */

/** The millisecond of this process's latest log line, and the next sequence number within it (two numbers: no cache, no growth). */
const logClock = { ms: 0, seq: 0 };
/** The first number of log lines placed at an earlier millisecond (`appendLog`'s `atMs`): above any this process wrote in one (6 digits). */
const PLACED_SEQ = 900_000;

/**
 * How much of a partition that serving depends on is read: all of it. A cut (there was one, at
 * 10,000 rows) would drop what sorts after it without a word: past 10,000 contexts, every rule,
 * segment, experiment and rerank control of the tenant; past 10,000 erased users, the erasures.
 */
const WHOLE = Number.POSITIVE_INFINITY;

/**
 * The kinds created within a cap (`create`): each record holds a place until `remove` deletes it
 * or `withdraw` takes it back. Of them, rules and segments can be deleted, and a deleted one is
 * kept a while (`remove` with `kept`, `removed`).
 */
const CAPPED: ReadonlySet<ConsoleKind> = new Set(['rule', 'segment', 'endpoint', 'event_type']);

/** A record not taken back (see `withdraw`). */
const live = (r: Row) => r.withdrawn === undefined;

/** A record without its keys and bookkeeping fields (named `_...`). */
function shown(r: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(stripKeys(r))) if (!k.startsWith('_')) out[k] = v;
  return out;
}

/** The condition of a change to a record: it exists, is not withdrawn, and holds `expect`'s values. */
const holding =
  (expect: Expect): Condition =>
  (x) =>
    x.and(isStored(x), x.absent('withdrawn'), ...x.fields(expect));

const entityOf = (kind: ConsoleKind) => CONSOLE_RECORDS[kind];
const recordKey = (tenant: string, kind: ConsoleKind, id: number) => entityOf(kind).key({ tenant, id });
/**
 * A kind's rows: its partition, within it only its sort-key prefix where it shares one; by id
 * after `after` (ascending), or before it when `newestFirst`.
 */
function ofKind(tenant: string, kind: ConsoleKind, after?: number, newestFirst = false) {
  return byId(entityOf(kind).indexes.primary, tenant, after, newestFirst);
}
/** `ofKind` of a partition keyed by tenant and id (a kind's, or the Stopped experiments'). */
type ById = Pick<IndexOps<KeyTemplate>, 'skPrefix' | 'query'> & { sk(f: { id: number | string }): string; query(f: { tenant: string }, range?: SkRange): ReturnType<IndexOps<KeyTemplate>['query']> };
function byId(primary: ById, tenant: string, after?: number, newestFirst = false) {
  const prefix = primary.skPrefix();
  if (after !== undefined && newestFirst) return primary.query({ tenant }, { between: [primary.sk({ id: 0 }), primary.sk({ id: Math.max(0, after - 1) })] });
  if (after !== undefined) return primary.query({ tenant }, { between: [primary.sk({ id: after + 1 }), primary.sk({ id: LAST_ID })] });
  return primary.query({ tenant }, prefix ? { beginsWith: prefix } : undefined);
}

/**
 * How long after its `created` a run may still be stored below a higher id already stored: a writer
 * allocates the id, sets `created` and stores the run in one invocation, and no function runs
 * longer than Lambda's 15 minutes. Only writers older than the index matter (the others key the run
 * themselves), so only the minutes of an upgrade.
 */
const LATE_STORE_SECONDS = 15 * 60;
/** A training run's statuses while it waits or runs: the runs in the sparse `active` index. */
const ACTIVE_RUN: ReadonlySet<unknown> = new Set(['Queued', 'InProgress', 'Stopping']);
const activeIndex = TrainingRun.indexes.active;
/** The run id an index row of active runs names. */
const activeIdOf = (k: Row): number => Number(activeIndex.parse(String(k[activeIndex.skAttr])).active_id);

/**
 * What a write of a record's `fields` changes in the index of active runs: a training run whose
 * status it writes is put in (waiting or running) or taken out (ended). Every write of a run's
 * status passes here (put, replace, create, update, updated), so the index holds exactly the runs
 * waiting or running.
 */
function activeRunChange(tenant: string, kind: ConsoleKind, id: number, fields: Record<string, unknown>): Change {
  if (kind !== 'job' || !('status' in fields)) return {};
  const status = fields.status;
  return typeof status === 'string' && ACTIVE_RUN.has(status) ? { set: activeIndex.key({ tenant, active_status: status, active_id: id }) } : { remove: [activeIndex.pkAttr, activeIndex.skAttr] };
}
/** Whether a run's row holds the key in the index of active runs its status calls for (none when ended). */
function indexedAsItIs(tenant: string, row: Row): boolean {
  const want = activeRunChange(tenant, 'job', Number(row.id), row).set ?? {};
  return [activeIndex.pkAttr, activeIndex.skAttr].every((k) => row[k] === want[k]);
}
/** A record's row as written whole: its keys, its fields and, for a run, its key in the index of active runs. */
const rowOf = (tenant: string, kind: ConsoleKind, rec: ConsoleRecord): Row => ({ ...placeOf(tenant, kind, rec), ...rec, ...activeRunChange(tenant, kind, rec.id, rec).set });

/**
 * Experiments: a Stopped one is kept out of the control partition (StoppedExperiment), which
 * serving reads whole every few seconds and where it would count for nothing (serving uses Running
 * ones, a segment's deletion Draft and Running ones). Its stop moves the row, in one transaction.
 * The key of a record's row, for an experiment by its status; the other place it could be in.
 */
const placeOf = (tenant: string, kind: ConsoleKind, rec: ConsoleRecord) => (kind === 'experiment' && rec.status === 'Stopped' ? stoppedKey(tenant, rec.id) : recordKey(tenant, kind, rec.id));
const stoppedKey = (tenant: string, id: number) => StoppedExperiment.key({ tenant, id });
/** How many Stopped experiments left in the control partition one list of the experiments moves out (`moveStoppedOut`). */
const MOVES_PER_LIST = 100;
/** Moves of one list in flight at once (`moveStoppedOut`). */
const MOVES_AT_ONCE = 8;
/** The two places an experiment's row may be in, where it is looked for first: the control partition (where a stop moves it from), then the Stopped ones'. */
const experimentPlaces = (tenant: string, id: number) => [recordKey(tenant, 'experiment', id), stoppedKey(tenant, id)] as const;
const byIdOf = (r: Row) => Number(r.id);

/**
 * A run log's cursor: its last line's sort key (ms#seq#writer), naming the tenant and run it is of:
 * another run's cursor (of this tenant or another) is refused, not read as a time in this run's log.
 */
const logCursors = scopedCursor(/^\d{1,16}#\d{6}#[0-9a-f]{8}$/, "This cursor is from another training job's log.");

/**
 * An audit trail's cursor: its last entry's sort key (the id), naming the tenant and resource it is
 * of. Until 2026-12-07 it was the bare id, and every trail's ids come from one counter of the
 * tenant's, so another resource's cursor was read as a place in this trail and skipped its entries
 * newer than that id (another tenant's too).
 */
const auditCursors = scopedCursor(/^\d{16}$/, "This cursor is from another resource's or another tenant's audit trail.");

/**
 * The cursor of a list of rules or experiments filtered by a context: its last record's sort key,
 * naming the tenant, kind and context it is of. Until 2026-12-07 it was the bare id, so a cursor of
 * another context's list (or of the unfiltered list) was read as a place in this one and skipped
 * this context's records below it.
 */
const contextCursors = scopedCursor(/^(rule|experiment)#\d{16}$/, "This cursor is from another context's list (or the list without contextId), or another tenant's.");

/** The id a list's cursor places the page after: the unfiltered list's bare id (past 2^53-1, the largest: nothing follows), or a context list's opaque cursor. */
function contextListAfter(tenant: string, kind: ConsoleKind, cursor: string, contextId: number | undefined): number {
  if (contextId === undefined) {
    if (!/^[1-9][0-9]*$/.test(cursor)) throw new InvalidInput('Invalid cursor.', { cursor: ['starting_after must be a positive integer (the list without contextId pages by id)'] });
    return Math.min(Number(cursor), Number.MAX_SAFE_INTEGER);
  }
  const sk = contextCursors.decode(cursor, [tenant, kind, contextId]);
  return Number(sk.slice(sk.indexOf('#') + 1));
}

/**
 * The user part of an erasure marker's sort key (`erased_user#<user>`): the user id, or, where
 * that key would pass DynamoDB's 1,024 bytes for a sort key (a user id of 256 characters takes up
 * to 1,024 bytes in UTF-8: 254 or more of four bytes each, such as emoji), `#sha256:` and the id's
 * digest, as a long category is keyed. The marker holds the id itself (`user_id`). Until
 * 2026-12-07 such a key was sent as it was: DynamoDB refused the marker's read, so on AWS every
 * recommendation or search for that user answered 500, and its erasure could not be stored
 * (dynalite counts a key in UTF-16 code units, so the local stack took it).
 */
const erasedUserKeyPart = (userId: string): string =>
  Buffer.byteLength(userId) + ERASED_USER_SK_PREFIX_BYTES <= MAX_SORT_KEY_BYTES ? userId : `#sha256:${createHash('sha256').update(userId).digest('hex')}`;
/** DynamoDB's limit on a sort key, in bytes (UTF-8). */
const MAX_SORT_KEY_BYTES = 1024;
const ERASED_USER_SK_PREFIX_BYTES = Buffer.byteLength(ErasedUser.indexes.primary.skPrefix());

/** An erasure marker as stored (`completed_at` null while the erasure runs). */
const erasureMarker = (r: Row): ErasedUserRecord => ({
  user_id: String(r.user_id),
  requested_at: Number(r.requested_at),
  completed_at: r.completed_at === null || r.completed_at === undefined ? null : Number(r.completed_at),
  ...(r.models_checked_through !== undefined ? { models_checked_through: Number(r.models_checked_through) } : {}),
  ...(r.events_through !== undefined ? { events_through: Number(r.events_through) } : {}),
  ...(r.order !== undefined ? { order: Number(r.order) } : {}),
});

const erasureSweep = (r: Row): ErasureSweepRecord => ({
  user_id: String(r.user_id),
  due_at: Number(r.due_at),
  events_through: Number(r.events_through),
  ...(r.members_through !== undefined ? { members_through: Number(r.members_through) } : {}),
  ...(r.order !== undefined ? { order: Number(r.order) } : {}),
});

/** The later of two erasures' orders (`ErasureSweep.order`): undefined only when neither has one. */
const laterOrder = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

/** An erasure's sweep merged into the one stored, which others may change at once: tried again after a growing random pause (as the control records' changes are). */
const SWEEP_MERGES: RetryPolicy = { attempts: 16, baseMs: 2, maxMs: 100, jitter: 'full' };

export function dynamoConsoleStore(t: TableRef): ConsoleStore {
  async function recordsPage<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, q: { limit: number; after?: number | undefined; where?: Record<string, unknown>; newestFirst?: boolean }) {
    const where = q.where ?? {};
    const read = (query: ReturnType<typeof ofKind>) =>
      queryUpTo(
        t,
        {
          ...refine(query, { filter: (x) => x.and(x.absent('withdrawn'), ...Object.entries(where).map(([k, v]) => x.eq(k, v))) }),
          ConsistentRead: true,
          ...(q.newestFirst ? { ScanIndexForward: false } : {}),
        },
        q.limit + 1,
      );
    let rows = await read(ofKind(tenant, kind, q.after, q.newestFirst));
    if (kind === 'experiment') {
      // Merged by id with the Stopped ones (each read in id order: the page's first limit + 1 are
      // within each's first limit + 1). Read after the control partition, the Stopped ones hold
      // an experiment whose stop moved it meanwhile as it is now (read in both: once, as Stopped).
      const order = q.newestFirst ? -1 : 1;
      const merged = new Map<number, Row>();
      for (const r of [...rows, ...(await read(byId(StoppedExperiment.indexes.primary, tenant, q.after, q.newestFirst)))]) merged.set(byIdOf(r), r);
      rows = [...merged.values()].sort((a, b) => order * (byIdOf(a) - byIdOf(b))).slice(0, q.limit + 1);
    }
    return { rows: rows.slice(0, q.limit).map((r) => stripKeys(r) as T), hasMore: rows.length > q.limit };
  }
  /**
   * A record's write, with its audit trail's part (`Audited`) in one transaction when given: the
   * entry put beside it (`writtenWithEntry`, as synonym sets and credentials write), or the entry of
   * the change it undoes deleted. The record's write comes first, so a failure of its condition is
   * told apart as a write's own (`transact`).
   */
  const written = (tenant: string, write: TransactWrite, audited: Audited | undefined): Promise<unknown> => {
    if (audited && !('entry' in audited)) return transact(t, [write, { remove: Audit.key({ tenant, resource: audited.undoes.resource, id: audited.undoes.id }) }]);
    return writtenWithEntry(t, tenant, write, audited?.entry);
  };
  /** `written` of several writes of one transaction (the first one's condition told apart, `transact`), with the audit trail's part. */
  const writtenAll = (tenant: string, writes: readonly [TransactWrite, ...TransactWrite[]], audited: Audited | undefined): Promise<unknown> => {
    if (writes.length === 1) return written(tenant, writes[0], audited);
    const trail: TransactWrite[] = !audited
      ? []
      : 'entry' in audited
        ? [{ put: { ...Audit.key({ tenant, resource: audited.entry.resource, id: audited.entry.id }), ...audited.entry } }]
        : [{ remove: Audit.key({ tenant, resource: audited.undoes.resource, id: audited.undoes.id }) }];
    return transact(t, [...writes, ...trail]);
  };
  /**
   * A whole experiment written at its place (`placeOf`), taken out of the other in the same
   * transaction (a stop moves it). `when` holds of the row where it is now: the one read there
   * (the control partition first), else the one at its new place (none: `isNew`).
   */
  async function experimentPut(tenant: string, rec: ConsoleRecord, when: Condition | undefined, audited: Audited | undefined): Promise<boolean> {
    const row = rowOf(tenant, 'experiment', rec);
    const at = placeOf(tenant, 'experiment', rec);
    const other = experimentPlaces(tenant, rec.id).find((k) => k.pk !== at.pk) as Row;
    const there = when ? await getRow(t, other, { consistent: true }) : undefined;
    // Where the row is elsewhere, the condition holds of it (and the row put is conditional on none being at its new place).
    const holds = when ? { when } : {};
    if (there)
      return applied(() =>
        writtenAll(
          tenant,
          [
            { remove: other, ...holds },
            { put: row, when: isNew },
          ],
          audited,
        ),
      );
    return applied(() =>
      writtenAll(
        tenant,
        [
          { put: row, ...holds },
          { remove: other, ...(when ? { when: isNew } : {}) },
        ],
        audited,
      ),
    );
  }
  /**
   * A change of an experiment's fields (`update`), the row as changed, or undefined when `expect`
   * does not hold: in place, wherever the row is; a stop (`status` Stopped) of one in the control
   * partition moves it to the Stopped ones' in one transaction (conditional on `expect` and on the
   * revision read, every change of an experiment moving it on).
   */
  async function experimentChange(tenant: string, id: number, set: Record<string, unknown>, expect: Expect, audited: Audited | undefined): Promise<Row | undefined> {
    const [control, stopped] = experimentPlaces(tenant, id);
    if (set.status === 'Stopped') {
      const row = await getRow(t, control, { consistent: true });
      if (row && live(row)) {
        const change = changeOf(tenant, 'experiment', id, set);
        const moved: Row = { ...row, ...change.set, ...stopped };
        for (const k of change.remove ?? []) delete moved[k];
        const asRead: Condition = (x) => x.and(holding(expect)(x), ...x.fields({ _rev: row._rev }));
        return (await applied(() =>
          writtenAll(
            tenant,
            [
              { remove: control, when: asRead },
              { put: moved, when: isNew },
            ],
            audited,
          ),
        ))
          ? moved
          : undefined;
      }
    }
    for (const key of [control, stopped]) {
      let row: Row | undefined;
      const change = changeOf(tenant, 'experiment', id, set);
      const wrote = audited
        ? await applied(() => written(tenant, { update: key, change, when: holding(expect) }, audited))
        : await applied(async () => {
            row = await update(t, key, change, { when: holding(expect), returnValues: 'ALL_NEW' });
          });
      // (With its audit entry, in a transaction, which answers no row: the change as written, for `update`'s answer.)
      if (wrote) return row ?? { ...key, id, ...set };
    }
    return undefined;
  }
  /**
   * Stopped experiments left in the control partition (stopped before 2026-12-07, or by a writer of
   * then during an upgrade) moved to the Stopped ones', each as read (its revision and status).
   * Run by `list` (an erasure's) and `openExperiments` (a start's check of the others, while
   * serving assigns none of the context's experiments) on the control partition's rows they read
   * (not by a page of them: `GET /api/experiments` may not write).
   * Up to MOVES_PER_LIST a list (a tenant's thousands of them are moved over several lists, not in
   * one request), MOVES_AT_ONCE at a time (until 2026-12-07 one after another, 100
   * transactions in a row). One changed meanwhile stays where it is for a later list; the control
   * config leaves them out wherever they are. Upkeep, not the list's own work: a move that fails
   * (the table refusing writes) fails nothing (until 2026-12-07 it failed the list, and with it a
   * start's check of the others or a user's erasure); its row stays where it is, for a later list.
   */
  async function moveStoppedOut(tenant: string, rows: readonly Row[]): Promise<void> {
    const left = rows.filter((row) => ExperimentRecord.owns(row) && row.status === 'Stopped' && live(row)).slice(0, MOVES_PER_LIST);
    await eachAtMost(left, MOVES_AT_ONCE, async (row) => {
      const id = byIdOf(row);
      await applied(() =>
        transact(t, [
          { remove: recordKey(tenant, 'experiment', id), when: (x) => x.and(isStored(x), x.absent('withdrawn'), ...x.fields({ _rev: row._rev, status: 'Stopped' })) },
          { put: { ...row, ...stoppedKey(tenant, id) } },
        ]),
      ).catch(() => undefined);
    });
  }
  /**
   * A change of a record's fields, with the index of active runs kept (`activeRunChange`); a field
   * set to `undefined` is removed (a run queued again drops its task claim and storing mark).
   */
  const changeOf = (tenant: string, kind: ConsoleKind, id: number, set: Record<string, unknown>): Change => {
    const index = activeRunChange(tenant, kind, id, set);
    const kept = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined));
    const dropped = Object.keys(set).filter((k) => set[k] === undefined);
    const remove = [...dropped, ...(index.remove ?? [])];
    return { set: { ...kept, ...index.set }, ...(remove.length ? { remove } : {}) };
  };
  /**
   * Sets a run's key in the index of active runs as its status calls for, conditional on the status
   * read: when another writer changed it meanwhile, the run is read again and keyed as it is now
   * (each retry follows a change of status that left the key unset: an older writer's, and such
   * a writer changes a run's status at most 3 times; a current writer's keys it). Until
   * 2026-12-06 a failed write was left so, and a run an older writer (no index key) moved on in
   * between kept no key while the marker moved past it.
   */
  async function keyAsItIs(tenant: string, id: number, read: Row | undefined): Promise<void> {
    let row = read;
    for (let attempt = 0; attempt < 5 && row && live(row) && !indexedAsItIs(tenant, row); attempt++) {
      if (await keyAsRead(tenant, id, row)) return;
      row = await getRow(t, recordKey(tenant, 'job', id), { consistent: true });
    }
  }
  /** One try: the run's index key as the status read calls for, if the run still has that status. */
  const keyAsRead = (tenant: string, id: number, row: Row): Promise<boolean> =>
    applied(() => update(t, recordKey(tenant, 'job', id), activeRunChange(tenant, 'job', id, row), { when: holding({ status: row.status }) }));
  /**
   * Puts in the index of active runs the runs stored since it was last looked at that are waiting
   * or running without their key, or with one of another status or format (written before the
   * index, or by an older writer during an upgrade), and takes out ended ones still keyed: the first
   * time, the tenant's whole history, once; then the runs above the highest id read of those
   * created LATE_STORE_SECONDS before (most passes: a Query of the runs of the last minutes).
   */
  async function indexRunsSince(tenant: string): Promise<void> {
    const marker = await getRow(t, ActiveRunsIndexed.key({ tenant }), { consistent: true });
    const through = typeof marker?.through === 'number' ? marker.through : 0;
    let highest = through;
    // Ids are allocated before a run is stored: an older writer may store run N after a newer one
    // stored N + 1. The marker moves only past runs created LATE_STORE_SECONDS ago, so the runs of
    // the last minutes are read again at later passes (a handful). Until 2026-12-05 it moved to the
    // highest id read, and a run stored late below it was never indexed.
    const settled = nowMs() / 1000 - LATE_STORE_SECONDS;
    for (const row of await queryUpTo(t, { ...ofKind(tenant, 'job', through), ConsistentRead: true }, WHOLE)) {
      const id = Number(row.id);
      if (typeof row.created !== 'number' || row.created <= settled) highest = Math.max(highest, id);
      // Ended runs too: one keyed in the index's partition of before 2026-12-05 is taken out of it.
      await keyAsItIs(tenant, id, row);
    }
    // A run at or below the marker that a writer of the keys of before 2026-12-05 moved to another
    // status since is in their partition, not in the index: read there (no rows, once those
    // writers are gone) and keyed again. Until 2026-12-06 only the runs read above were, and such a
    // run was in no list of its status, nor in the sweep of runs, until it ended.
    const keyedBefore = TrainingRunKeyedBefore.indexes.active;
    for (const k of await queryUpTo(t, keyedBefore.query({ tenant }), WHOLE)) {
      const id = Number(keyedBefore.parse(String(k[keyedBefore.skAttr])).active_id);
      const row = await getRow(t, recordKey(tenant, 'job', id), { consistent: true });
      if (row && live(row) && !indexedAsItIs(tenant, row)) await keyAsRead(tenant, id, row);
    }
    // Written the first time even for a tenant with no runs yet: a list of one status reads the
    // index only once the marker is there (`activeRunsIn`).
    if (!marker || highest > through) await put(t, { ...ActiveRunsIndexed.keys({ tenant }), through: highest });
  }
  /** The deleted records of each kind that can be deleted (rules and segments). */
  const removedOfKind = (kind: ConsoleKind): RemovedRecords => removedRecords(t, kind);
  /** The places of each kind with a cap (CAPPED). */
  const placed = new Map<ConsoleKind, Places>();
  const placesOfKind = (kind: ConsoleKind): Places => {
    let p = placed.get(kind);
    if (!p) {
      if (!CAPPED.has(kind)) throw new Error(`console records of kind ${kind} have no cap`);
      p = placesOf(t, {
        records: (tenant) => ofKind(tenant, kind),
        counts: (x) => x.absent('withdrawn'),
        recordKey: (tenant, id) => recordKey(tenant, kind, id),
        places: (tenant) => ConsolePlace.indexes.primary.query({ tenant, kind }),
        placeKey: (tenant, slot) => ConsolePlace.key({ tenant, kind, slot }),
      });
      placed.set(kind, p);
    }
    return p;
  };
  return {
    nextId: (tenant, kind) => allocateIds(t, tenant, kind, 1),
    async put(tenant, kind, rec, audited) {
      if (kind === 'experiment') await experimentPut(tenant, rec, undefined, audited);
      else await written(tenant, { put: rowOf(tenant, kind, rec) }, audited);
    },
    create: (tenant, kind, rec, cap, audited) =>
      placesOfKind(kind).create(tenant, rec.id, cap, async () => {
        await written(tenant, { put: rowOf(tenant, kind, rec) }, audited);
      }),
    async get<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, id: number) {
      // An experiment: in the control partition, else (a stop moved it meanwhile, or before) in the Stopped ones'.
      let row = await getRow(t, recordKey(tenant, kind, id), { consistent: true });
      if (!row && kind === 'experiment') row = await getRow(t, stoppedKey(tenant, id), { consistent: true });
      return row && live(row) ? (stripKeys(row) as T) : undefined;
    },
    async list<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind) {
      const rows = await queryUpTo(t, { ...ofKind(tenant, kind), ConsistentRead: true }, WHOLE);
      if (kind !== 'experiment') return rows.filter(live).map((r) => stripKeys(r) as T);
      await moveStoppedOut(tenant, rows);
      // The Stopped ones read after the control partition: one whose stop moved it meanwhile is read there (once: by id).
      const stopped = await queryUpTo(t, { ...byId(StoppedExperiment.indexes.primary, tenant), ConsistentRead: true }, WHOLE);
      const byIdRows = new Map<number, Row>();
      for (const r of [...rows, ...stopped]) byIdRows.set(byIdOf(r), r);
      return [...byIdRows.values()]
        .sort((a, b) => byIdOf(a) - byIdOf(b))
        .filter(live)
        .map((r) => stripKeys(r) as T);
    },
    async openExperiments<T extends ConsoleRecord>(tenant: string) {
      // The control partition's experiments only (until 2026-12-07 a start's check listed them all,
      // the Stopped ones' partition too, up to 7 times a start): a Stopped one left there is left
      // out, and moved out (so the next read finds it no more).
      const rows = await queryUpTo(t, { ...ofKind(tenant, 'experiment'), ConsistentRead: true }, WHOLE);
      await moveStoppedOut(tenant, rows);
      return rows.filter((r) => live(r) && r.status !== 'Stopped').map((r) => stripKeys(r) as T);
    },
    async servingConfig(tenant) {
      const rows = await queryUpTo(t, { ...Endpoint.indexes.primary.query({ tenant }), ConsistentRead: true }, WHOLE);
      const out: { event_type: ConsoleRecord[]; endpoint: ConsoleRecord[]; erased_user: ErasedUserRecord[] } = { event_type: [], endpoint: [], erased_user: [] };
      for (const r of rows) {
        const kind = EventType.owns(r) ? out.event_type : Endpoint.owns(r) ? out.endpoint : undefined;
        if (kind) {
          if (live(r)) kind.push(stripKeys(r) as ConsoleRecord);
        } else if (ErasedUser.owns(r)) out.erased_user.push(erasureMarker(r));
      }
      return out;
    },
    async servingRecords(tenant) {
      // The markers sort between the two kinds (endpoint# < erased_user# < event_type#): a Query of each kind's keys leaves them out.
      const [endpoint, event_type] = await Promise.all(
        (['endpoint', 'event_type'] as const).map(async (kind) =>
          (await queryUpTo(t, { ...ofKind(tenant, kind), ConsistentRead: true }, WHOLE)).filter(live).map((r) => stripKeys(r) as ConsoleRecord),
        ),
      );
      return { endpoint: endpoint ?? [], event_type: event_type ?? [] };
    },
    async erasedUser(tenant, userId) {
      const row = await getRow(t, ErasedUser.key({ tenant, user_id: erasedUserKeyPart(userId) }), { consistent: true });
      return row ? erasureMarker(row) : undefined;
    },
    async putErasure(tenant, marker) {
      // Not over a later erasure's marker: an earlier erasure of the user ending while it runs would mark it ended.
      const order = marker.order;
      // A marker stored without an order (before 2026-12-04) is ordered by when it began, as it ordered markers.
      const byStart: Condition = (x) => x.cmp('requested_at', '<=', marker.requested_at);
      // Of the same erasure (its order), only while it has not ended (no `events_through`, which its
      // end stores): the maintenance pass's finish of one cut off puts its running marker again, and a
      // finish that read it before another pass's finish ended it would mark it running again (until
      // 2026-12-07 it did).
      const notLater: Condition =
        order === undefined
          ? (x) => x.or(isNew(x), byStart(x))
          : (x) => x.or(isNew(x), x.and(x.absent('order'), byStart(x)), x.cmp('order', '<', order), x.and(x.eq('order', order), x.absent('events_through')));
      await applied(() => put(t, { ...ErasedUser.key({ tenant, user_id: erasedUserKeyPart(marker.user_id) }), ...marker }, notLater));
    },
    async putErasureSweep(tenant, sweep) {
      // Merged with the sweep stored (conditional on it as read, read again when it changed meanwhile).
      const key = ErasureSweep.key({ tenant, user_id: sweep.user_id });
      // The message names no user: it is logged, and logs are kept past the erasure (until 2026-12-07 it named them).
      const changed = { failure: new Error("The erasure's sweep kept changing (other erasures of the user at once); not stored. Repeat the erasure."), retryable: true };
      await withRetry<void>(SWEEP_MERGES, async () => {
        const row = await getRow(t, key, { consistent: true });
        if (!row) return (await applied(() => put(t, { ...key, ...sweep }, isNew))) ? { value: undefined } : changed;
        const stored = erasureSweep(row);
        const merged: ErasureSweepRecord = {
          user_id: sweep.user_id,
          due_at: Math.max(stored.due_at, sweep.due_at),
          events_through: Math.max(stored.events_through, sweep.events_through),
          members_through: Math.max(sweepMembersThrough(stored), sweepMembersThrough(sweep)),
        };
        const order = laterOrder(stored.order, sweep.order);
        if (order !== undefined) merged.order = order;
        if (merged.due_at === stored.due_at && merged.events_through === stored.events_through && merged.members_through === stored.members_through && merged.order === stored.order)
          return { value: undefined };
        const asRead = { due_at: stored.due_at, events_through: stored.events_through, members_through: stored.members_through, order: stored.order };
        return (await applied(() => put(t, { ...key, ...merged }, (x) => x.and(...x.fields(asRead))))) ? { value: undefined } : changed;
      });
    },
    async erasureSweep(tenant, userId) {
      const row = await getRow(t, ErasureSweep.key({ tenant, user_id: userId }), { consistent: true });
      return row ? erasureSweep(row) : undefined;
    },
    async erasureSweepsOf(tenant, userIds) {
      const rows = await getRows(
        t,
        userIds.map((user_id) => ErasureSweep.key({ tenant, user_id })),
        { consistent: true },
      );
      return rows.filter((r): r is Row => r !== undefined).map(erasureSweep);
    },
    async erasureSweeps(tenant, upTo = WHOLE) {
      const rows = await queryUpTo(t, { ...ErasureSweep.indexes.primary.query({ tenant }), ConsistentRead: true }, upTo);
      return rows.map(erasureSweep);
    },
    async erasureMarkersPage(tenant, after, limit) {
      // In key order: a Query of the markers' keys, from just past the last one read (the event types after them are not read).
      const primary = ErasedUser.indexes.primary;
      const page = await queryPage(t, {
        ...primary.query({ tenant }, { beginsWith: primary.skPrefix() }),
        ConsistentRead: true,
        Limit: limit,
        ...(after !== undefined ? { ExclusiveStartKey: ErasedUser.key({ tenant, user_id: after }) } : {}),
      });
      const last = page.items.at(-1);
      const next = page.lastKey !== undefined && last !== undefined ? primary.parse(String(last[primary.skAttr])).user_id : undefined;
      return { markers: page.items.filter((r) => ErasedUser.owns(r)).map(erasureMarker), next };
    },
    async erasureMarkerScan(tenant) {
      const row = await getRow(t, ErasureMarkerScan.key({ tenant }), { consistent: true });
      if (!row) return undefined;
      return {
        first_began: Number(row.first_began),
        ...(row.after !== undefined ? { after: String(row.after) } : {}),
        ...(row.round_began !== undefined ? { round_began: Number(row.round_began) } : {}),
        ...(row.done === true ? { done: true } : {}),
      };
    },
    async putErasureMarkerScan(tenant, scan) {
      await put(t, { ...ErasureMarkerScan.key({ tenant }), ...scan });
    },
    async removeErasureSweep(tenant, sweep) {
      // Not one merged with another's since it was read (it covers what this pass did not).
      await applied(() =>
        remove(t, ErasureSweep.key({ tenant, user_id: sweep.user_id }), (x) =>
          x.and(...x.fields({ due_at: sweep.due_at, events_through: sweep.events_through, members_through: sweep.members_through, order: sweep.order })),
        ),
      );
    },
    update: async (tenant, kind, id, set, expect = {}, audited = undefined) =>
      kind === 'experiment'
        ? (await experimentChange(tenant, id, set, expect, audited)) !== undefined
        : applied(() => written(tenant, { update: recordKey(tenant, kind, id), change: changeOf(tenant, kind, id, set), when: holding(expect) }, audited)),
    async updated<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, id: number, set: Record<string, unknown>, expect: Expect = {}) {
      if (kind === 'experiment') {
        const changed = await experimentChange(tenant, id, set, expect, undefined);
        return changed ? (stripKeys(changed) as T) : undefined;
      }
      let row: Row | undefined;
      const wrote = await applied(async () => {
        row = await update(t, recordKey(tenant, kind, id), changeOf(tenant, kind, id, set), { when: holding(expect), returnValues: 'ALL_NEW' });
      });
      return wrote && row ? (stripKeys(row) as T) : undefined;
    },
    async withdraw(tenant, kind, id, expect) {
      if (!(await applied(() => update(t, recordKey(tenant, kind, id), { set: { withdrawn: true } }, expect ? { when: holding(expect) } : {})))) return false;
      // The place it held, if its kind has a cap (a withdrawn record does not count: `create`).
      if (CAPPED.has(kind)) await placesOfKind(kind).release(tenant, id);
      return true;
    },
    page: recordsPage,
    async contextPage<T extends ConsoleRecord>(tenant: string, kind: 'rule' | 'experiment', q: { limit: number; after?: string | undefined; contextId?: number | undefined }) {
      const after = q.after === undefined ? undefined : contextListAfter(tenant, kind, q.after, q.contextId);
      const page = await recordsPage<T>(tenant, kind, { limit: q.limit, after, ...(q.contextId !== undefined ? { where: { context_id: q.contextId } } : {}) });
      const cursorAfter = (id: number): string => (q.contextId === undefined ? String(id) : contextCursors.encode(recordKey(tenant, kind, id).sk, [tenant, kind, q.contextId]));
      return { ...page, cursorAfter };
    },
    replace: (tenant, kind, rec, expect, audited) =>
      kind === 'experiment'
        ? experimentPut(tenant, rec, expect === 'new' ? isNew : holding(expect), audited)
        : applied(() => written(tenant, { put: rowOf(tenant, kind, rec), when: expect === 'new' ? isNew : holding(expect) }, audited)),
    async activeRuns<T extends ConsoleRecord>(tenant: string, opts: { upkeep?: boolean } = {}) {
      if (opts.upkeep) await indexRunsSince(tenant);
      const ids = (await queryUpTo(t, activeIndex.query({ tenant }), WHOLE)).map(activeIdOf).sort((a, b) => b - a);
      // Read again consistently, 100 to a BatchGetItem (until 2026-12-06 a GetItem each, one after
      // another: a tenant's thousand queued runs took a thousand round trips of every pass).
      const rows = await getRows(
        t,
        ids.map((id) => recordKey(tenant, 'job', id)),
        { consistent: true },
      );
      const runs: T[] = [];
      for (const [k, id] of ids.entries()) {
        const row = rows[k];
        if (!row || !live(row)) continue;
        if (ACTIVE_RUN.has(row.status)) runs.push(stripKeys(row) as T);
        // Ended, or moved to another status, by a writer older than the index (an upgrade): its
        // key is set again from its status by the upkeep (taken out when it ended).
        if (opts.upkeep && !indexedAsItIs(tenant, row)) await keyAsRead(tenant, id, row);
      }
      return runs;
    },
    async activeRunsIn<T extends ConsoleRecord>(tenant: string, status: string, q: { limit: number; before?: number | undefined }) {
      // Not indexed yet (the tenant's first upkeep, up to a minute after the index's deploy, has not
      // run): runs stored before the index have no key, so the index would answer none of them.
      if (!(await getRow(t, ActiveRunsIndexed.key({ tenant }), { consistent: true }))) return undefined;
      const from = activeIndex.skPrefix({ active_status: status });
      const range: SkRange = q.before === undefined ? { beginsWith: from } : { between: [from, activeIndex.sk({ active_status: status, active_id: Math.max(0, q.before - 1) })] };
      const want = q.limit + 1;
      const runs: T[] = [];
      let start: Row | undefined;
      do {
        // The index is eventually consistent: each run is read again consistently, and one that
        // has moved on since (another status, or ended) is left out and the read goes on.
        const page = await queryPage(t, { ...activeIndex.query({ tenant }, range), ScanIndexForward: false, Limit: want - runs.length, ExclusiveStartKey: start });
        const rows = await getRows(
          t,
          page.items.map((k) => recordKey(tenant, 'job', activeIdOf(k))),
          { consistent: true },
        );
        for (const row of rows) if (row && live(row) && row.status === status) runs.push(stripKeys(row) as T);
        start = page.lastKey;
      } while (start && runs.length < want);
      return { rows: runs.slice(0, q.limit), hasMore: runs.length > q.limit };
    },
    async remove(tenant, kind, id, expect = {}, opts = {}) {
      if (opts.kept && CAPPED.has(kind)) {
        // Kept as it is first (`removed`): a copy of a record that then stays (its change since
        // failed the condition) is read by nothing, as the record is there.
        const row = await getRow(t, recordKey(tenant, kind, id), { consistent: true });
        if (row && live(row)) await removedOfKind(kind).keep(tenant, id, row);
      }
      const removes = (key: Row) => applied(() => written(tenant, { remove: key, when: holding(expect) }, opts.audited));
      // An experiment wherever it is (a Stopped one in the Stopped ones' partition).
      if (!(await removes(recordKey(tenant, kind, id))) && !(kind === 'experiment' && (await removes(stoppedKey(tenant, id))))) return false;
      // The place it held, if its kind has a cap (`create`).
      if (CAPPED.has(kind)) await placesOfKind(kind).release(tenant, id);
      return true;
    },
    async removed<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, id: number) {
      return CAPPED.has(kind) ? ((await removedOfKind(kind).get(tenant, id)) as T | undefined) : undefined;
    },
    async putContextMarker(tenant, contextId) {
      await put(t, { ...ContextMarker.key({ tenant, id: contextId }), id: contextId });
    },
    async controlConfig(tenant) {
      const rows = await queryUpTo(t, { ...ContextMarker.indexes.primary.query({ tenant }), ConsistentRead: true }, WHOLE);
      const out: ControlConfig = { rules: [], segments: [], experiments: [], rerank: [], contexts: [] };
      for (const r of rows) {
        if (!live(r)) continue;
        if (RuleRecord.owns(r)) out.rules.push(shown(r) as unknown as Rule);
        else if (SegmentRecord.owns(r)) out.segments.push(shown(r) as unknown as Segment);
        else if (ExperimentRecord.owns(r)) {
          // One Stopped before its stop moved it out (2026-12-07) serves nothing: left out, as those moved are.
          if (r.status === 'Stopped') continue;
          out.experiments.push(shown(r) as unknown as Experiment);
          if (r._starting === true) (out.starting ??= []).push(Number(r.id));
        } else if (Rerank.owns(r)) out.rerank.push(shown(r) as unknown as RerankRecord);
        else if (ContextMarker.owns(r)) out.contexts.push(Number(ContextMarker.indexes.primary.parse(String(r.sk)).id));
      }
      return out;
    },
    auditId: (tenant) => allocateIds(t, tenant, 'audit', 1),
    async auditPage(tenant, resource, q) {
      const before = q.after !== undefined ? { lt: auditCursors.decode(q.after, [tenant, resource]) } : undefined;
      const cursorAfter = (id: number) => auditCursors.encode(Audit.key({ tenant, resource, id }).sk, [tenant, resource]);
      if (q.none) return { rows: [], hasMore: false, cursorAfter };
      const rows = await queryUpTo(t, { ...Audit.indexes.primary.query({ tenant, resource }, before), ScanIndexForward: false, ConsistentRead: true }, q.limit + 1);
      return {
        rows: rows.slice(0, q.limit).map((r) => stripKeys(r) as unknown as AuditEntry),
        hasMore: rows.length > q.limit,
        cursorAfter,
      };
    },
    async appendLog(tenant, jobId, lines, opts) {
      // Lines this process writes within one millisecond keep their order; no line overwrites
      // another (each write its own `writer`). Lines placed (`atMs`) at a millisecond before this
      // process's last write follow the lines it wrote in that millisecond (numbered from
      // PLACED_SEQ: they tell of a change made after those).
      const writer = randomBytes(4).toString('hex');
      const ms = opts?.atMs ?? nowMs();
      const earlier = opts?.atMs !== undefined && ms < logClock.ms;
      if (!earlier && ms !== logClock.ms) Object.assign(logClock, { ms, seq: 0 });
      const rows: Row[] = lines.map((l, k) => ({ ...RunLogLine.key({ tenant, run: jobId, ms, seq: earlier ? PLACED_SEQ + k : logClock.seq++, writer }), ...l }));
      await putAll(t, rows);
    },
    async logs(tenant, jobId, cursor, limit) {
      const after = cursor === undefined ? undefined : logCursors.decode(cursor, [tenant, jobId]);
      // One line more than asked: a page that ends at the log's last line has no cursor (DynamoDB's
      // LastEvaluatedKey after exactly `limit` lines would give one, and then an empty page).
      const rows = await queryUpTo(t, { ...RunLogLine.indexes.primary.query({ tenant, run: jobId }, after ? { gt: after } : undefined), ConsistentRead: true }, limit + 1);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const at = last ? logCursors.encode(String(last[RunLogLine.indexes.primary.skAttr]), [tenant, jobId]) : (cursor ?? null);
      return { lines: page.map((r) => ({ ts: Number(r.ts), message: String(r.message) })), cursor: rows.length > limit ? at : null, end: at };
    },
  };
}
