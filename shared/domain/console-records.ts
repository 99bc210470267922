import type { ControlConfig } from '../control/types.ts';
import { nowSeconds } from '../clock.ts';
import { sleep } from '../retry.ts';
import { InvalidInput, NotFound } from './errors.ts';
import { platformList, type PlatformList } from './present.ts';
import type { IdPlan } from './types.ts';

/*
 * The console records' port: the Platform API's small per-tenant collections (event types,
 * contexts, templates, endpoints, training runs, model versions, the control plane's records),
 * read whole and updated conditionally. shared/data/console.ts implements it on the table; the
 * aggregates (shared/domain/event-types.ts, templates.ts, ...) use it.
 */

/**
 * Console record kinds, each with per-tenant integer ids (`promotion_due`: a run whose version's
 * auto-promotion is still to be decided, by the run's id; shared/domain/automation.ts).
 */
export type ConsoleKind = 'event_type' | 'context' | 'template' | 'endpoint' | 'job' | 'model' | 'promotion_due' | ControlKind;
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
  /**
   * The API key's 8-character prefix, `console:<email>` for a console user, `auto_promote:templates/<id>`
   * for a template's automatic promotion (null when none of them made the change).
   */
  actor: string | null;
  action: 'create' | 'update' | 'delete';
  /** `rules/12`, `segments/3`, `experiments/4`, `rerank-controls/7`, `synonyms/2`, `model-endpoints/1` (promotions), `clients/<client_id>`, `api-keys/<prefix>`. */
  resource: string;
  before: unknown;
  after: unknown;
}

/**
 * The audit trail's part of a control record's write, made in one transaction with it: `entry`
 * added, or `undoes` (the entry of a change this write puts back: records.ts `undo`) taken out.
 * Until 2026-12-06 the entry was stored after the write: a failure or a crash between the two lost
 * it for good, the change's retry being a change of nothing, which leaves none.
 */
export type Audited = { entry: AuditEntry } | { undoes: AuditEntry };

export interface ConsoleRecord {
  id: number;
  [k: string]: unknown;
}

/**
 * How long after an erasure ends its sweep is due: an ingest request ends within 30 s (the
 * events list's in-flight bound), so by then every ingest that raced the erasure has written.
 */
export const ERASURE_SWEEP_DELAY_SECONDS = 60;

/**
 * The bound a sweep's row recorded as its latest erasure began (the last event id the tenant had
 * handed out then: the events it erases), or undefined where none is known. A row with an `order`
 * (stored since 2026-12-07) records it, 0 included (no id handed out yet: it erases none); one
 * without holds 0 for none recorded (a start stored before the bound was). Until 2026-12-07 every
 * 0 was taken for none: an erasure's finish deleted the events the user sent after it began, and
 * while it ran the lists and `GET /v1/events/{id}` left them out.
 */
export const sweepBound = (s: Pick<ErasureSweep, 'events_through' | 'order'>): number | undefined => (s.order !== undefined || s.events_through > 0 ? s.events_through : undefined);

/** The memberships a sweep covers: `members_through`, or for a sweep stored without it, its erasure's end. */
export const sweepMembersThrough = (s: Pick<ErasureSweep, 'due_at' | 'members_through'>): number => s.members_through ?? s.due_at - ERASURE_SWEEP_DELAY_SECONDS;

/**
 * An erasure's second look at the user's events (shared/domain/erasure.ts `sweepErasures`): stored
 * as the erasure begins (so the maintenance pass finds an erasure cut off before it ended), covering
 * the events up to the last id handed out then (`events_through`, its bound: a sweep of it while it
 * runs deletes them, as does the pass's finish) and no membership yet (`members_through` 0), and
 * merged with what it covers as it ends.
 */
export interface ErasureSweep {
  user_id: string;
  /** When it is due (unix seconds). */
  due_at: number;
  /** The erasure's `events_through`: the user's events up to this id are the erasure's. */
  events_through: number;
  /**
   * The user's experiment memberships first served up to this time (unix seconds) are the
   * erasure's: its end, or a later erasure's that ended first. Absent on sweeps stored before
   * 2026-12-04: the erasure's end (`due_at` less the delay).
   */
  members_through?: number;
  /**
   * The `order` of the latest erasure of the user whose start this row holds (merged: the greatest).
   * Its marker is stored just after the row: a sweep that finds no marker of that erasure or a later
   * one (none, or an earlier erasure's) acts on none of the row's events; its erasure is on its way,
   * or was cut off before its marker (`sweepErasures`). Absent on rows stored before 2026-12-07.
   */
  order?: number;
}

/** Where the maintenance pass's scan of a tenant's erasure markers stands (shared/domain/erasure.ts `adoptRowlessErasures`). */
export interface ErasureMarkerScan {
  /** The last marker read (`erasureMarkersPage`'s `next`); absent at the start of a round. */
  after?: string;
  /** When the round under way began (unix seconds); absent between rounds. */
  round_began?: number;
  /** When the scan's first round began. */
  first_began: number;
  /** Over: a whole round begun ERASURE_FINISHED_BY_SECONDS after the first found every marker such an erasure left. */
  done?: boolean;
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
  /**
   * Which of the user's erasures began last, for those begun in the same second too (the
   * millisecond it began × 1,000, plus a random tie-break): its marker is the one kept
   * (`putErasure`). Absent on markers stored before 2026-12-04, which `requested_at` orders.
   */
  order?: number;
  /** The model versions up to this id are checked: their artifacts hold none of the user's history. */
  models_checked_through?: number;
  /** Once it ended: the user's events up to this id were the erasure's (later ones were sent after it began, and kept). */
  events_through?: number;
}

export interface LogLine {
  ts: number;
  message: string;
}

/**
 * What a Platform create sent with an Idempotency-Key stored before (`ids`, the HTTP layer's plan,
 * shared/http/idempotency.ts): when it retries an attempt that failed after it may have written,
 * the record that attempt wrote under its id, if it got that far: as it is stored, or, deleted
 * since, as it was when deleted (`removed`). The create then answers it and writes nothing (until
 * 2026-12-04 a rule or segment deleted in between was stored again).
 */
export function storedBefore<T extends ConsoleRecord>(c: Pick<ConsoleStore, 'get' | 'removed'>, tenant: string, kind: ConsoleKind, ids: IdPlan | undefined): Promise<T | undefined> {
  return createdBefore(ids, async (id) => (await c.get<T>(tenant, kind, id)) ?? (await c.removed<T>(tenant, kind, id)));
}

/** `storedBefore` for a create whose records are not console records: `get` reads one by id. */
export function createdBefore<T>(ids: IdPlan | undefined, get: (id: number) => Promise<T | undefined>): Promise<T | undefined> {
  return ids?.reuse === undefined ? Promise.resolve(undefined) : get(ids.reuse);
}

/**
 * The id a Platform create writes under: that of the failed attempt it retries (`storedBefore`),
 * else a new one (`next`), recorded under the request's Idempotency-Key before anything is written.
 */
export async function newId(next: () => Promise<number>, ids: IdPlan | undefined): Promise<number> {
  if (ids?.reuse !== undefined) return ids.reuse;
  const id = await next();
  await ids?.reserved?.(id);
  return id;
}

/** Generic console records: small per-tenant collections read whole, updated conditionally. */
export interface ConsoleStore {
  nextId(tenant: string, kind: ConsoleKind): Promise<number>;
  /** Stores a record (with `audited`, and its audit trail's part: `Audited`). */
  put(tenant: string, kind: ConsoleKind, rec: ConsoleRecord, audited?: Audited): Promise<void>;
  /**
   * Stores a new record unless the tenant has `cap` records of its kind: false then, and nothing
   * stored. Exact however many creates run at once: each record so created holds one of the
   * tenant's `cap` places for its kind until `remove` deletes it or `withdraw` takes it back.
   * With `audited`, its audit trail's part is written with the record.
   */
  create(tenant: string, kind: ConsoleKind, rec: ConsoleRecord, cap: number, audited?: Audited): Promise<boolean>;
  get<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, id: number): Promise<T | undefined>;
  list<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind): Promise<T[]>;
  /**
   * The tenant's Draft and Running experiments, bookkeeping fields (`_starting`) kept, in id order:
   * one (strongly consistent) Query of the control partition's experiments, reading no Stopped
   * one's row but those left there from before 2026-12-07 (which it leaves out, and moves out, as
   * `list` does).
   */
  openExperiments<T extends ConsoleRecord>(tenant: string): Promise<T[]>;
  /** The tenant's event types, endpoints and erased users, in one read (training and erasure read every marker). */
  servingConfig(tenant: string): Promise<{ event_type: ConsoleRecord[]; endpoint: ConsoleRecord[]; erased_user: ErasedUser[] }>;
  /**
   * The tenant's event types and endpoints without the erasure markers beside them (what every
   * recommendation reads): its cost does not grow with the users erased.
   */
  servingRecords(tenant: string): Promise<{ event_type: ConsoleRecord[]; endpoint: ConsoleRecord[] }>;
  /** One user's erasure marker (read by its key), or undefined when the user was never erased. */
  erasedUser(tenant: string, userId: string): Promise<ErasedUser | undefined>;
  /**
   * Stores a user's erasure marker (one per user: a later erasure replaces it), unless the marker
   * stored is of a later erasure (`order`, else `requested_at`): an earlier one still running does
   * not change it (until 2026-12-04 its end marked the later one ended while it ran).
   */
  putErasure(tenant: string, marker: ErasedUser): Promise<void>;
  /**
   * Stores an ended erasure's sweep (one per user), merged with the one stored, if any, which it
   * has not run yet: the later due time, and the most of the user's events and memberships either
   * covers (of two erasures of the user at once, each may cover more of one).
   */
  putErasureSweep(tenant: string, sweep: ErasureSweep): Promise<void>;
  /** One user's erasure sweep row (read by its key), or undefined when none stands. */
  erasureSweep(tenant: string, userId: string): Promise<ErasureSweep | undefined>;
  /** The erasure sweep rows of these users that stand (read by their keys, 100 to a call), in no particular order. */
  erasureSweepsOf(tenant: string, userIds: readonly string[]): Promise<ErasureSweep[]>;
  /** The tenant's erasure sweeps, due or not (at most `upTo` of them: all when not given). */
  erasureSweeps(tenant: string, upTo?: number): Promise<ErasureSweep[]>;
  /** Deletes a sweep done, unless a later erasure replaced it meanwhile (another `due_at`). */
  removeErasureSweep(tenant: string, sweep: ErasureSweep): Promise<void>;
  /**
   * A page of the tenant's erasure markers in key order, at most `limit`, from just past `after`
   * (a page's `next`: opaque; undefined, the first); `next` is undefined once the last was read.
   */
  erasureMarkersPage(tenant: string, after: string | undefined, limit: number): Promise<{ markers: ErasedUser[]; next: string | undefined }>;
  /** Where the maintenance pass's scan of the tenant's markers stands (`adoptRowlessErasures`), or undefined before its first page. */
  erasureMarkerScan(tenant: string): Promise<ErasureMarkerScan | undefined>;
  putErasureMarkerScan(tenant: string, scan: ErasureMarkerScan): Promise<void>;
  /**
   * Sets fields (one set to `undefined` is removed); with `expect`, only if those fields currently
   * hold those values (`undefined`: only if the field is absent; scalars only, `a.b` naming field b
   * of map a). false when that failed
   * (with `audited` too, its audit trail's part written with the change or not at all).
   */
  update(tenant: string, kind: ConsoleKind, id: number, set: Record<string, unknown>, expect?: Record<string, unknown>, audited?: Audited): Promise<boolean>;
  /**
   * `update`, answering the record as this write left it (returned by the write itself, so no
   * change made after it shows), or undefined when the write did not apply. What a change answers
   * when it shows the whole record: read back after the write, a change of the same fields made
   * meanwhile was answered as this one's (or nothing, had the record gone).
   */
  updated<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, id: number, set: Record<string, unknown>, expect?: Record<string, unknown>): Promise<T | undefined>;
  /**
   * Takes back a record just created that lost a race (a name another record took first): from
   * then on it is as if it had never been written (get, list and update skip it). With `expect`,
   * only if those fields hold those values (as `update`'s): false when not, and nothing changed.
   */
  withdraw(tenant: string, kind: ConsoleKind, id: number, expect?: Expect): Promise<boolean>;
  /**
   * The training runs waiting or running (Queued, InProgress, Stopping), newest first, each read
   * consistently: a handful however long the tenant's history. With `upkeep` (the maintenance
   * sweep's, once a minute) it first puts in the index the runs an older writer stored without
   * their key (an upgrade), and takes out those an older writer ended; readers without it find
   * those from the sweep's next pass on.
   */
  activeRuns<T extends ConsoleRecord>(tenant: string, opts?: { upkeep?: boolean }): Promise<T[]>;
  /**
   * One page of the training runs in `status` (Queued, InProgress or Stopping), newest first, those
   * with ids below `before`: a keyed read of that status's runs in their index, up to `limit` + 1,
   * each read again consistently (a run just moved to another status is left out). undefined
   * while the tenant's runs stored before the index are not in it yet (before the maintenance
   * sweep's first upkeep of the tenant): the caller reads them another way.
   */
  activeRunsIn<T extends ConsoleRecord>(tenant: string, status: string, q: { limit: number; before?: number | undefined }): Promise<{ rows: T[]; hasMore: boolean } | undefined>;
  /**
   * One page of a kind's records in id order, those with ids above `after` whose fields equal
   * `where`; with `newestFirst`, in descending id order, those below `after`.
   */
  page<T extends ConsoleRecord>(
    tenant: string,
    kind: ConsoleKind,
    q: { limit: number; after?: number | undefined; where?: Record<string, unknown>; newestFirst?: boolean },
  ): Promise<{ rows: T[]; hasMore: boolean }>;
  /**
   * One page of the rules or experiments, in id order, those of `contextId` when given. `after` is
   * the `cursorAfter` of the page before: the bare id without `contextId`; with it, an opaque
   * cursor naming the tenant, kind and context (400 `Invalid cursor.`, naming `cursor`, for
   * another list's or one this store never gave).
   */
  contextPage<T extends ConsoleRecord>(
    tenant: string,
    kind: 'rule' | 'experiment',
    q: { limit: number; after?: string | undefined; contextId?: number | undefined },
  ): Promise<{ rows: T[]; hasMore: boolean; cursorAfter(id: number): string }>;
  /**
   * Stores a record in place of the one with its id: `'new'` only if there is none, else only if
   * `expect` holds. false when not. With `audited`, its audit trail's part is written with it.
   */
  replace(tenant: string, kind: ConsoleKind, rec: ConsoleRecord, expect: Expect | 'new', audited?: Audited): Promise<boolean>;
  /**
   * Deletes a record (with `expect`, only if it holds), freeing its place (`create`); false when
   * there was none or it did not hold. A rule or segment deleted by its owner (`kept`) is kept as
   * it was for `removed`; one a create takes back (it lost a check after its write, and answered
   * 4xx) is not: the create's retry is refused as it was, not answered with it. With `audited`, its
   * audit trail's part is written with the deletion.
   */
  remove(tenant: string, kind: ConsoleKind, id: number, expect?: Expect, opts?: { kept?: boolean; audited?: Audited }): Promise<boolean>;
  /**
   * A rule or segment `remove` deleted, as it was stored then, while a retry of the create that
   * stored it can come (the Idempotency-Key's life and an hour); undefined for any other.
   */
  removed<T extends ConsoleRecord>(tenant: string, kind: ConsoleKind, id: number): Promise<T | undefined>;
  /** Notes a context in the control partition, so `controlConfig` lists it. */
  putContextMarker(tenant: string, contextId: number): Promise<void>;
  /**
   * The tenant's rules, segments, Draft and Running experiments, rerank controls and context ids,
   * with one (strongly consistent) Query of the control partition (a Stopped experiment is kept
   * out of it: `get`, `list` and `page` read both). Bookkeeping fields (named `_...`) are left out.
   */
  controlConfig(tenant: string): Promise<ControlConfig>;
  /**
   * An id for an audit entry (written with its change: `Audited`), taken once the record it
   * changes is read and before the change is written: a change written after another read the
   * record after that one was written, so its id is the higher, and the trail lists changes in the
   * order they were written.
   */
  auditId(tenant: string): Promise<number>;
  /**
   * A resource's history, newest first: entries below the cursor `after` (400 for a cursor of
   * another trail or tenant, or none this store gave), and `cursorAfter` an entry of the page.
   * `none`: the resource names no record (an id past the largest): its cursor is checked as any,
   * and the page is empty without a read.
   */
  auditPage(tenant: string, resource: string, q: { limit: number; after?: string | undefined; none?: boolean }): Promise<{ rows: AuditEntry[]; hasMore: boolean; cursorAfter(id: number): string }>;
  /**
   * Appends lines to a run's log, after those written before. With `atMs` (Unix ms), they are
   * placed as if written then: a line telling of a change that landed at that time, whose writer
   * learnt of it only later (a lost answer), stays before the lines written after the change.
   */
  appendLog(tenant: string, jobId: number, lines: LogLine[], opts?: { atMs?: number }): Promise<void>;
  /**
   * A run's log lines after `after`: `cursor` when more follow now; `end`, after the last line
   * read (or `after` when none was), to read on from once more are written.
   */
  logs(tenant: string, jobId: number, after: string | undefined, limit: number): Promise<{ lines: LogLine[]; cursor: string | null; end: string | null }>;
}

/**
 * One page of a kind's records for a Platform list: `limit` of them after the cursor's id
 * (before it, newest first), those whose fields equal `where` when given, the next cursor the
 * last one's (`cursorOf`, its id by default).
 */
export async function recordPage<T extends ConsoleRecord, V>(
  c: ConsoleStore,
  tenant: string,
  kind: ConsoleKind,
  q: { limit: number; after?: number | undefined; newestFirst?: boolean; where?: Record<string, unknown> | undefined },
  view: (r: T) => V,
  cursorOf: (r: T) => string = (r) => String(r.id),
): Promise<PlatformList<V>> {
  const page = await c.page<T>(tenant, kind, { limit: q.limit, after: q.after, newestFirst: q.newestFirst ?? false, ...(q.where ? { where: q.where } : {}) });
  const last = page.rows[page.rows.length - 1];
  return platformList(page.rows.map(view), { hasMore: page.hasMore, cursor: last ? cursorOf(last) : null });
}

/** A console record not found: `<what>_not_found`, "No <what> <id>." */
export const notFound = (what: string, id: number | string) => new NotFound(`${what.replace(/ /g, '_')}_not_found`, `No ${what} ${id}.`);

/** A kind's cap on how many records a tenant has, the kind as its error names it (`rules`), and the field that error is under (`what`, unless given). */
export interface Cap {
  n: number;
  what: string;
  field?: string;
}

/** A create past its kind's cap: 400, `Too many rules.`, naming the cap. */
export const tooMany = (cap: Cap) => new InvalidInput(`Too many ${cap.what}.`, { [cap.field ?? cap.what]: [`a tenant has at most ${cap.n} ${cap.what}`] });

/**
 * How many serving endpoints and event types a tenant has at most, exactly however many creates
 * run at once (`ConsoleStore.create`): every recommendation reads all of them (servingConfig), so
 * their number bounds what a request costs. Until 2026-12-04 there was no cap. Neither can be
 * deleted, so the caps are far above what a tenant configures (a few of each).
 */
export const ENDPOINTS: Cap = { n: 100, what: 'endpoints' };
export const EVENT_TYPES: Cap = { n: 100, what: 'event types', field: 'event_types' };

/**
 * How long a create that finds only later creates of its name (higher ids) waits for them to take
 * their records back before it takes its own back: a later create that checks after this one's
 * write sees it and goes within a read and a write.
 */
const NAME_SETTLE_MS = 200;

/**
 * Stores a new record whose name is unique in its kind (the caller has checked it is free). Two
 * creates of one name at once both pass that check, and each checks again after its write: one
 * that finds an earlier create of the name (a lower id) takes its record back and answers 409
 * (`exists`) as if it had come second. One that finds only later creates waits NAME_SETTLE_MS for
 * them to do so; one still there checked before this write and kept the name (it answered 201),
 * so this one takes its record back. Until 2026-12-03 it kept its record too: two records of one
 * name, both answered 201. At most one create of a name keeps it; rarely (both check after both
 * writes, and the later one's check outlasts the wait) neither does, and both answer 409. Within
 * the kind's `cap` (a record taken back frees its place). The take-back holds only while the
 * record's `asWritten` fields (those a change of it writes) are as this create wrote them: a
 * change acknowledged meanwhile (a PATCH, which waits for the name to be decided: `nameDecided`,
 * but may have read before a later create's write) keeps the record, and the create answers as
 * made (the later create then takes its own back, finding this earlier one). Until 2026-12-08 the
 * take-back was unconditional: such a change, answered 200, was lost.
 */
export async function putNamed<T extends ConsoleRecord>(
  c: ConsoleStore,
  tenant: string,
  kind: ConsoleKind,
  rec: T,
  sameName: (r: T) => boolean,
  exists: () => Error,
  cap: Cap,
  asWritten: Expect,
): Promise<void> {
  if (!(await c.create(tenant, kind, rec, cap.n))) throw tooMany(cap);
  await nameSettled(c, tenant, kind, rec, sameName, exists, asWritten);
}

/**
 * `putNamed`'s check after its write, of a record stored (`rec`): 409 (`exists`) once the record
 * is taken back. Also what a create's retry under its Idempotency-Key runs on the record its
 * failed attempt stored (`storedBefore`): that attempt may have been cut off between its write and
 * this check (a 503 at its deadline refuses every table call after it), leaving a second record
 * of a name another create kept (until 2026-12-08 the retry answered it 201 unchecked).
 */
export async function nameSettled<T extends ConsoleRecord>(
  c: Pick<ConsoleStore, 'list' | 'get' | 'withdraw'>,
  tenant: string,
  kind: ConsoleKind,
  rec: T,
  sameName: (r: T) => boolean,
  exists: () => Error,
  asWritten: Expect,
): Promise<void> {
  const others = async () => (await c.list<T>(tenant, kind)).filter((r) => sameName(r) && r.id !== rec.id);
  let rivals = await others();
  if (rivals.length > 0 && rivals.every((r) => r.id > rec.id)) {
    await sleep(NAME_SETTLE_MS);
    rivals = await others();
  }
  if (rivals.length > 0) {
    if (!(await c.withdraw(tenant, kind, rec.id, asWritten)) && (await c.get(tenant, kind, rec.id))) return;
    throw exists();
  }
}

/** How long a read waits at most for the creates of a name at once to decide which keeps it (`nameDecided`, and endpoints.ts's reads by name). */
export const NAME_DECIDED_WAIT_MS = 2000;

/**
 * How long after its `created` a record's create may still be deciding whether it keeps its name
 * (`putNamed`): a Platform request ends within 10 s (its function's timeout), as an endpoint's
 * `claiming` does (endpoints.ts): past it, a record still `claiming` is one whose create stopped
 * before it decided (a crash), and it keeps the name.
 */
export const NAME_DECIDING_SECONDS = 10;

/**
 * Record `id` once no other record has its name (`sameName`), read again 50 ms apart for up to
 * NAME_DECIDED_WAIT_MS: a create of the name at once is still deciding which keeps it, and may
 * take this one back (`putNamed`); undefined when it did (or there is none). What a change of a
 * uniquely named record (a PATCH) reads before it writes, so that it is not answered 200 on a
 * record then taken back. Only its own create takes a record back, so one created over
 * NAME_DECIDING_SECONDS ago is read at once, another of its name or not (two of one name from
 * before 2026-12-03, or both kept: until 2026-12-08 every PATCH of such a record waited 2 s).
 */
export async function nameDecided<T extends ConsoleRecord & { created: number }>(
  c: Pick<ConsoleStore, 'list'>,
  tenant: string,
  kind: ConsoleKind,
  id: number,
  sameName: (a: T, b: T) => boolean,
): Promise<T | undefined> {
  const until = performance.now() + NAME_DECIDED_WAIT_MS;
  for (;;) {
    const all = await c.list<T>(tenant, kind);
    const mine = all.find((r) => r.id === id);
    const deciding = mine !== undefined && nowSeconds() - mine.created <= NAME_DECIDING_SECONDS;
    if (!mine || !deciding || !all.some((r) => r.id !== id && sameName(r, mine)) || performance.now() >= until) return mine;
    await sleep(50);
  }
}
