// Over 400 lines: the four control records (rules, segments, experiments, rerank) share one revision-checked write path and audit trail; split, each would re-import it for ~90 lines.
import { newId, storedBefore, tooMany, type AuditEntry, type Cap, type ConsoleKind, type ConsoleRecord, type ConsoleStore } from '../domain/console-records.ts';
import type { IdPlan } from '../domain/types.ts';
import type { Context } from '../domain/contexts.ts';
import type { Endpoint } from '../domain/endpoints.ts';
import { fitting } from '../domain/answer-size.ts';
import { platformList } from '../domain/present.ts';
import { isDeepStrictEqual } from 'node:util';
import { canonicalJson } from '../canonical-json.ts';
import { nowSeconds } from '../clock.ts';
import { sleep, withRetry, type RetryPolicy } from '../retry.ts';
import { Conflict, InvalidInput, NotFound, PreconditionFailed } from '../domain/errors.ts';
import type * as S from '../schemas/control.ts';
import { STARTING_SECONDS, type Experiment, type ExperimentStatus, type RerankControls, type RerankRecord, type Rule, type Segment, type Variant } from './types.ts';

/*
 * The control plane's records on the Platform API: rules, segments, experiments and rerank
 * controls, each change kept in an audit trail (its entry written in one transaction with it:
 * ConsoleStore's `Audited`). Storage is a port (ControlPorts); the records
 * live in one partition per tenant, which serving reads with one Query (controlConfig), but for
 * Stopped experiments, kept apart (serving has no use for them, and they have no cap).
 *
 * Bookkeeping fields, never shown: `_rev` (the record's revision: every change is conditional on
 * the one it read, so concurrent changes neither get lost nor leave an audit entry whose
 * `before` is not what they changed), `_deleting` (a segment being deleted, see deleteSegment) and
 * `_starting` (an experiment's start being checked, see updateExperiment).
 */

/** What the control plane needs of storage. */
export type ControlPorts = Pick<
  ConsoleStore,
  'get' | 'list' | 'openExperiments' | 'page' | 'contextPage' | 'nextId' | 'put' | 'create' | 'replace' | 'update' | 'remove' | 'removed' | 'controlConfig' | 'auditId' | 'auditPage'
>;

/** Who asks: the tenant, and the API key's prefix (the audit trail's actor). */
export interface Caller {
  tenant: string;
  actor?: string | undefined;
}

/** An experiment's results, as the serving side counts them. */
export type ResultsOf = (tenant: string, exp: Experiment) => Promise<unknown>;

interface Bookkeeping {
  _rev: number;
  /** When a segment's deletion began (null or absent: none under way). */
  _deleting?: number | null;
  /**
   * An experiment written Running whose start is still being checked against the context's others
   * (updateExperiment): it may yet undo itself. Cleared once the start holds (null or absent).
   */
  _starting?: boolean | null;
}
type Stored<T> = T & Bookkeeping & ConsoleRecord;

/**
 * A change that keeps losing races to other changes of the same record tries again after a
 * random pause that grows (full jitter, at most 100 ms), so that racing writers stop colliding:
 * 24 concurrent edits of one rule all land (5 attempts without a pause left 14 of 24 with a 409).
 * Each round lets at least one of them through, so on a slow machine (the reads and writes of a
 * round overlapping more) a writer may lose to most of the others: 32 attempts, about 3 s at
 * worst, before a 409 (12 refused one of 24 in a CI run on two busy cores).
 */
const RACES: RetryPolicy = { attempts: 32, baseMs: 2, maxMs: 100, jitter: 'full' };
/** Starts of experiments that gave way to each other (`updateExperiment`): longer pauses, as each try is several round trips. */
const STARTS: RetryPolicy = { attempts: 12, baseMs: 8, maxMs: 100, jitter: 'full' };
/**
 * How long a segment's deletion mark holds. A deletion takes milliseconds; a mark older than
 * this was left by one that died midway, and no longer counts.
 */
const DELETING_SECONDS = 60;
const beingDeleted = (s: Bookkeeping) => typeof s._deleting === 'number' && nowSeconds() - s._deleting < DELETING_SECONDS;

/**
 * How many rules and segments a tenant has at most, exactly however many creates run at once (each
 * holds one of the tenant's places: ConsoleStore.create). Serving reads every one of them with
 * each read of the tenant's control records (controlConfig), a rule up to 64 KB.
 */
export const MAX_RULES = 1000;
export const MAX_SEGMENTS = 100;

const notFound = (what: string, id: number) => new NotFound(`${what}_not_found`, `No ${what} ${id}.`);
const badState = (message: string) => new PreconditionFailed(message);
const busy = (what: string, id: number) => new Conflict('changed_meanwhile', `${what} ${id} kept changing meanwhile; retry.`);
/** `busy` naming a record by its kind ("Rule 3"). */
const busyRecord = (kind: ConsoleKind, id: number) => busy(`${kind[0]?.toUpperCase()}${kind.slice(1)}`, id);

/** A record as shown: without bookkeeping fields. */
function shown<T extends object>(rec: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) if (!k.startsWith('_')) out[k] = v;
  return out as T;
}

/**
 * A Platform list page; `next_cursor` is the last id (the audit trail's: its opaque cursor of it),
 * to send back as `starting_after`. A page
 * whose records would take more than `ANSWER_BYTES` (answer-size.ts) ends before the first that
 * does not fit (one at least), `has_more` true and its cursor at the last kept: a rule's
 * conditions or a segment's definition take up to 64 KB of JSON, an audit entry two of them (before
 * and after), so 100 took up to 25 MB as Lambda writes them, over its 6 MB answer (API Gateway's
 * own 500 until 2026-12-06).
 */
function listOf<T extends { id: number }>(rows: T[], hasMore: boolean, cursorAfter: (id: number) => string = String) {
  const n = fitting(rows);
  const kept = n < rows.length ? rows.slice(0, n) : rows;
  const last = kept[kept.length - 1];
  return platformList(kept, { hasMore: hasMore || kept !== rows, cursor: last ? cursorAfter(last.id) : null });
}

/** Fields of `o` that are set (DynamoDB takes no undefined values). */
function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * A change's audit entry, written with it (one transaction: ConsoleStore's `Audited`) under `id`:
 * taken (auditId) after the change read the record and before it wrote it, so the trail lists
 * changes in the order they were written. An id taken when the entry is stored, as until
 * 2026-12-02, listed two changes at once the other way round when the first one's entry was stored
 * last: the newest entry's `after` was not the record.
 */
function entryOf(who: Caller, id: number, action: AuditEntry['action'], resource: string, before: unknown, after: unknown): AuditEntry {
  return { id, at: nowSeconds(), actor: who.actor ?? null, action, resource, before, after };
}

async function needContext(c: ControlPorts, tenant: string, id: number): Promise<void> {
  if (!(await c.get<Context>(tenant, 'context', id))) throw notFound('context', id);
}

/** A segment that exists and is not being deleted. */
async function segmentLive(c: ControlPorts, tenant: string, id: number): Promise<boolean> {
  const s = await c.get<Stored<Segment>>(tenant, 'segment', id);
  return s !== undefined && !beingDeleted(s);
}

/**
 * A segment to name (404 when there is none). One whose deletion is under way is read again until
 * the deletion ends (for up to `MARK_WAIT_MS`, `NAMING_SETTLE_MS` apart): a deletion that finds a
 * recent record naming the segment keeps its mark up to a second (`namingSettled`) and may then be
 * refused, the segment staying; a name refused at once for the mark (404), as until 2026-12-06,
 * failed beside that refusal, neither request done. Only this check before the write waits: the
 * one after it (`putNaming`) is what such a deletion waits for. The wait is timed, as the
 * deletion's is: counted in reads (15 here, 10 pauses and 11 reads of the whole control partition
 * there, until 2026-12-06) it ended first whenever the deletion's reads were the slower (a tenant
 * with many rules), and the name was refused though the deletion then was too.
 */
async function needSegment(c: ControlPorts, tenant: string, id: number): Promise<void> {
  const s = await pastDeletion(c, tenant, id, performance.now() + MARK_WAIT_MS);
  if (s === undefined || beingDeleted(s)) throw notFound('segment', id);
}

/**
 * Segment `id` once no deletion of it is under way, read again `NAMING_SETTLE_MS` apart until
 * then or until `until` (`performance.now()`'s clock; still marked past it): undefined when there
 * is none, a deletion having removed it meanwhile.
 */
async function pastDeletion(c: ControlPorts, tenant: string, id: number, until: number): Promise<Stored<Segment> | undefined> {
  for (;;) {
    const s = await c.get<Stored<Segment>>(tenant, 'segment', id);
    if (s === undefined || !beingDeleted(s) || performance.now() >= until) return s;
    await sleep(NAMING_SETTLE_MS);
  }
}

/**
 * Stores a new record that names a segment, with its audit entry (within `cap` of its kind, when
 * given: 400 past it): the segment is checked again once the record is stored, and the record
 * taken back (404) if the segment went meanwhile, its entry with it (the create answered 4xx, as
 * if never made). A segment's deletion marks it first, then looks for records naming it (see
 * deleteSegment): either it sees this record (and the deletion is refused), or this check sees
 * the mark. The take-back holds only while the record is as this create wrote it (its `_rev`): one
 * changed meanwhile (a PATCH of it, answered 200) stays, and the create is answered as made, with
 * the record as it is now. Until 2026-12-08 the take-back deleted it whatever it held: the PATCH,
 * acknowledged, was lost. Answers the record as stored.
 */
async function putNaming<T extends { id: number; segment_id: number | null }>(c: ControlPorts, tenant: string, kind: ConsoleKind, rec: Stored<T>, entry: AuditEntry, cap?: Cap): Promise<Stored<T>> {
  if (!cap) await c.put(tenant, kind, rec, { entry });
  else if (!(await c.create(tenant, kind, rec, cap.n, { entry }))) throw tooMany(cap);
  if (rec.segment_id === null || (await segmentLive(c, tenant, rec.segment_id))) return rec;
  return takenBack(c, tenant, kind, rec, rec.segment_id, entry);
}

/**
 * Takes back a create's record, as written (`rec`), whose segment went after its write (404): its
 * entry with it, unless the record changed meanwhile (its `_rev`), which then stays and is answered.
 */
async function takenBack<T extends { id: number }>(c: ControlPorts, tenant: string, kind: ConsoleKind, rec: Stored<T>, segmentId: number, entry: AuditEntry | undefined): Promise<Stored<T>> {
  // Until it holds: a removal that met a write of the record under way (false) left the record
  // stored behind the 404 (until 2026-12-06). One deleted meanwhile (its owner's DELETE) is gone;
  // one changed meanwhile is kept (putNaming).
  const kept = await withRetry<Stored<T> | undefined>(RACES, async () => {
    if (await c.remove(tenant, kind, rec.id, { _rev: rec._rev }, entry ? { audited: { undoes: entry } } : {})) return { value: undefined };
    const now = await c.get<Stored<T>>(tenant, kind, rec.id);
    if (!now) return { value: undefined };
    if (now._rev !== rec._rev) return { value: now };
    return { failure: busyRecord(kind, rec.id), retryable: true };
  });
  if (!kept) throw notFound('segment', segmentId);
  return kept;
}

/**
 * What a create's retry under its Idempotency-Key answers of the record its failed attempt stored
 * (`storedBefore`). That attempt may have failed between its write and its check of the segment
 * (putNaming): a 503 at its deadline refuses every table call after it (shared/deadline.ts), so
 * its check never ran, nor its take-back. A record still as that attempt wrote it (`_rev` 1) that
 * names a segment is checked now, once any deletion of the segment under way has ended: taken
 * back (404, its entry with it) when the segment is gone, as the attempt would have. Until
 * 2026-12-08 the retry answered 201 with it unchecked: a rule naming a deleted segment, created.
 * One changed since (a PATCH), or deleted (the copy `removed` keeps), is answered as it is.
 */
async function checkedBefore<T extends { id: number; segment_id: number | null }>(c: ControlPorts, tenant: string, kind: ConsoleKind, resource: string, done: Stored<T>): Promise<Stored<T>> {
  if (done.segment_id === null || done._rev !== 1) return done;
  const s = await pastDeletion(c, tenant, done.segment_id, performance.now() + MARK_WAIT_MS);
  if (s !== undefined && !beingDeleted(s)) return done;
  const stored = await c.get<Stored<T>>(tenant, kind, done.id);
  if (stored?._rev !== 1) return stored ?? done;
  const trail = await c.auditPage(tenant, resource, { limit: 10 });
  return takenBack(
    c,
    tenant,
    kind,
    stored,
    done.segment_id,
    trail.rows.find((e) => e.action === 'create'),
  );
}

/**
 * A PATCH that names the segment the record names already (`segmentId`): a change of nothing for
 * it, so not checked as a change of it is. But a change that named it and was cut off between its
 * write and its check (a 503 at its deadline refuses every table call after it) left the record
 * naming it unchecked, and the PATCH sent again (its retry) answered 200 naming a segment deleted
 * meanwhile (until 2026-12-08). So the segment is checked, once any deletion of it under way has
 * ended (404, nothing undone, when one is still under way past MARK_WAIT_MS, as `needSegment`):
 * gone, the change that named it is undone as its own check would have (the trail's newest
 * entry, when it is that change: fields still as it wrote them put back, its entry taken out; a
 * change acknowledged since keeps it), and the PATCH is 404.
 */
async function namedAlready(c: ControlPorts, who: Caller, kind: ConsoleKind, resource: string, id: number, segmentId: number): Promise<void> {
  const s = await pastDeletion(c, who.tenant, segmentId, performance.now() + MARK_WAIT_MS);
  if (s !== undefined && !beingDeleted(s)) return;
  // Still marked past the wait: refused as a name is (needSegment), nothing undone. The segment is
  // there, and the change that named it may have been checked and answered 200: a deletion that
  // died midway leaves its mark for DELETING_SECONDS (until 2026-12-08 such a change was undone).
  if (s !== undefined) throw notFound('segment', segmentId);
  const [last] = (await c.auditPage(who.tenant, resource, { limit: 1 })).rows;
  const was = last?.before as Stored<{ segment_id: number | null }> | null | undefined;
  const wrote = last?.after as Stored<{ segment_id: number | null }> | null | undefined;
  if (last?.action === 'update' && was && wrote && wrote.segment_id === segmentId && was.segment_id !== segmentId) await undo(c, who.tenant, kind, id, { before: was, after: wrote, entry: last });
  throw notFound('segment', segmentId);
}

/** A change written with its audit entry; `entry` undefined when it found every field it sets holding that value already (it wrote nothing). */
type Changed<T> = { before: Stored<T>; after: Stored<T>; entry: AuditEntry | undefined };

/**
 * Changes a record (`resource` in the audit trail): reads it, computes the change (`fn` may
 * throw), and writes it with its audit entry only if the record is still at the revision read;
 * when it was not, reads it again (`RACES`). A change of nothing (each field sent as it is, a PATCH
 * sent twice) writes nothing: `updated_at` stays and the audit trail gets no entry whose before
 * and after are the same (as a Stripe update that changes nothing sends no event). That is why
 * the entry is written in the change's own transaction: a retry of a change whose entry was lost
 * finds nothing to change, and would never write it.
 */
async function change<T extends { id: number }>(
  c: ControlPorts,
  who: Caller,
  kind: ConsoleKind,
  what: string,
  resource: string,
  id: number,
  fn: (cur: Stored<T>) => Promise<Partial<T>>,
): Promise<Changed<T>> {
  return withRetry<Changed<T>>(RACES, async () => {
    const cur = await c.get<Stored<T>>(who.tenant, kind, id);
    if (!cur) throw notFound(what, id);
    const fields = defined(await fn(cur));
    if (Object.entries(fields).every(([k, v]) => isDeepStrictEqual(v, cur[k as keyof Stored<T>]))) return { value: { before: cur, after: cur, entry: undefined } };
    const set = { ...fields, updated_at: nowSeconds(), _rev: cur._rev + 1 };
    const after = { ...cur, ...set };
    const entry = entryOf(who, await c.auditId(who.tenant), 'update', resource, shown(cur), shown(after));
    if (await c.update(who.tenant, kind, id, set, { _rev: cur._rev }, { entry })) return { value: { before: cur, after, entry } };
    return { failure: busy(what, id), retryable: true };
  });
}

/**
 * Puts back the fields a change set (it lost a check made after its write), on the record as it
 * is now: each field that still holds what the change wrote (a change made since keeps its own),
 * conditional on the revision read, else read again (`RACES`). Conditional on the revision the
 * change wrote, as it was until 2026-12-02, a change made in between left it undone: a start that
 * found another experiment Running stayed Running beside it. The change's audit entry (written
 * with it) is taken out with what is put back: the change answered 4xx, and the trail lists none,
 * as when the entry was written only after the checks. A change all overwritten since keeps it:
 * the next entry's `before` is what it wrote.
 */
async function undo<T extends object>(c: ControlPorts, tenant: string, kind: ConsoleKind, id: number, { before, after, entry }: Changed<T>): Promise<void> {
  const was = before as Record<string, unknown>;
  const wrote = after as Record<string, unknown>;
  // Whatever their keys' order (a map read back need not list them as written).
  const same = (x: unknown, y: unknown) => canonicalJson(x ?? null) === canonicalJson(y ?? null);
  await withRetry<void>(RACES, async () => {
    const cur = await c.get<Stored<T>>(tenant, kind, id);
    if (!cur) return { value: undefined };
    const now = cur as Record<string, unknown>;
    const back: Record<string, unknown> = {};
    for (const k of Object.keys(wrote)) if (k !== '_rev' && !same(wrote[k], was[k]) && same(now[k], wrote[k])) back[k] = was[k] ?? null;
    if (!Object.keys(back).length) return { value: undefined };
    if (await c.update(tenant, kind, id, { ...back, _rev: cur._rev + 1 }, { _rev: cur._rev }, entry && { undoes: entry })) return { value: undefined };
    return { failure: busyRecord(kind, id), retryable: true };
  });
}

// Rules

/** Creates a rule, within the tenant's MAX_RULES (`cap` but in tests). */
export async function createRule(c: ControlPorts, who: Caller, b: S.RuleBody, ids?: IdPlan, cap = MAX_RULES): Promise<Rule> {
  const done = await storedBefore<Stored<Rule>>(c, who.tenant, 'rule', ids);
  if (done) return shown(await checkedBefore(c, who.tenant, 'rule', `rules/${done.id}`, done));
  await needContext(c, who.tenant, b.context_id);
  if (b.segment_id) await needSegment(c, who.tenant, b.segment_id);
  const now = nowSeconds();
  const rec: Stored<Rule> = {
    id: await newId(() => c.nextId(who.tenant, 'rule'), ids),
    name: b.name,
    context_id: b.context_id,
    conditions: b.conditions.map((x) => defined(x) as Rule['conditions'][number]),
    boost: b.boost,
    segment_id: b.segment_id ?? null,
    starts_at: b.starts_at ?? null,
    ends_at: b.ends_at ?? null,
    enabled: b.enabled ?? true,
    created: now,
    updated_at: now,
    _rev: 1,
  };
  const entry = entryOf(who, await c.auditId(who.tenant), 'create', `rules/${rec.id}`, null, shown(rec));
  return shown(await putNaming(c, who.tenant, 'rule', rec, entry, { n: cap, what: 'rules' }));
}

export async function getRule(c: ControlPorts, tenant: string, id: number): Promise<Rule> {
  const r = await c.get<Stored<Rule>>(tenant, 'rule', id);
  if (!r) throw notFound('rule', id);
  return shown(r);
}

/** The store's refusal of a cursor names it `cursor`; the lists take it as `starting_after`. */
function asStartingAfter(e: unknown): never {
  const why = e instanceof InvalidInput ? e.fieldErrors?.cursor : undefined;
  if (e instanceof InvalidInput && why) throw new InvalidInput(e.message, { starting_after: why });
  throw e;
}

/**
 * A page of rules or experiments, those of `contextId` when given (a context not the tenant's is
 * 404, as naming it anywhere else is). Without it the cursor is the last id; with it, opaque and
 * naming the context (until 2026-12-07 the bare id there too: another context's cursor was read as
 * a place in this list).
 */
async function contextList<T extends ConsoleRecord>(c: ControlPorts, tenant: string, kind: 'rule' | 'experiment', q: S.ContextPageQuery) {
  if (q.contextId) await needContext(c, tenant, q.contextId);
  return c.contextPage<T>(tenant, kind, { limit: q.limit, after: q.starting_after, contextId: q.contextId }).catch(asStartingAfter);
}

export async function listRules(c: ControlPorts, tenant: string, q: S.ContextPageQuery) {
  const page = await contextList<Stored<Rule>>(c, tenant, 'rule', q);
  return listOf(page.rows.map(shown), page.hasMore, page.cursorAfter);
}

export async function updateRule(c: ControlPorts, who: Caller, id: number, b: S.RulePatch): Promise<Rule> {
  if (b.segment_id && (await c.get<Stored<Rule>>(who.tenant, 'rule', id))?.segment_id === b.segment_id) await namedAlready(c, who, 'rule', `rules/${id}`, id, b.segment_id);
  const changed = await change<Rule>(c, who, 'rule', 'rule', `rules/${id}`, id, async (cur) => {
    const starts = b.starts_at !== undefined ? b.starts_at : cur.starts_at;
    const ends = b.ends_at !== undefined ? b.ends_at : cur.ends_at;
    if (starts !== null && ends !== null && ends <= starts) throw new InvalidInput('Invalid request body.', { ends_at: [`ends_at must be after starts_at (${starts})`] });
    if (b.context_id !== undefined && b.context_id !== cur.context_id) await needContext(c, who.tenant, b.context_id);
    if (b.segment_id && b.segment_id !== cur.segment_id) await needSegment(c, who.tenant, b.segment_id);
    return { ...b, ...(b.conditions ? { conditions: b.conditions.map((x) => defined(x) as Rule['conditions'][number]) } : {}) };
  });
  // A segment newly named is checked again after the write, as a create does (see putNaming).
  const { before, after } = changed;
  if (after.segment_id !== null && after.segment_id !== before.segment_id && !(await segmentLive(c, who.tenant, after.segment_id))) {
    await undo(c, who.tenant, 'rule', id, changed);
    throw notFound('segment', after.segment_id);
  }
  return shown(after);
}

export async function deleteRule(c: ControlPorts, who: Caller, id: number): Promise<void> {
  await withRetry<void>(RACES, async () => {
    const cur = await c.get<Stored<Rule>>(who.tenant, 'rule', id);
    if (!cur) throw notFound('rule', id);
    const entry = entryOf(who, await c.auditId(who.tenant), 'delete', `rules/${id}`, shown(cur), null);
    return (await c.remove(who.tenant, 'rule', id, { _rev: cur._rev }, { kept: true, audited: { entry } })) ? { value: undefined } : { failure: busy('Rule', id), retryable: true };
  });
}

// Segments

/** Creates a segment, within the tenant's MAX_SEGMENTS (`cap` but in tests). */
export async function createSegment(c: ControlPorts, who: Caller, b: S.SegmentBody, ids?: IdPlan, cap = MAX_SEGMENTS): Promise<Segment> {
  const done = await storedBefore<Stored<Segment>>(c, who.tenant, 'segment', ids);
  if (done) return shown(done);
  const now = nowSeconds();
  const rec: Stored<Segment> = {
    id: await newId(() => c.nextId(who.tenant, 'segment'), ids),
    name: b.name,
    description: b.description ?? '',
    definition: b.definition,
    size_estimate: null,
    size_computed_at: null,
    created: now,
    updated_at: now,
    _rev: 1,
  };
  const entry = entryOf(who, await c.auditId(who.tenant), 'create', `segments/${rec.id}`, null, shown(rec));
  if (!(await c.create(who.tenant, 'segment', rec, cap, { entry }))) throw tooMany({ n: cap, what: 'segments' });
  return shown(rec);
}

export async function getSegment(c: ControlPorts, tenant: string, id: number): Promise<Segment> {
  const s = await c.get<Stored<Segment>>(tenant, 'segment', id);
  if (!s) throw notFound('segment', id);
  return shown(s);
}

export async function listSegments(c: ControlPorts, tenant: string, q: S.PageQuery) {
  const page = await c.page<Stored<Segment>>(tenant, 'segment', { limit: q.limit, after: q.starting_after });
  return listOf(page.rows.map(shown), page.hasMore);
}

export async function updateSegment(c: ControlPorts, who: Caller, id: number, b: S.SegmentPatch): Promise<Segment> {
  const { after } = await change<Segment>(c, who, 'segment', 'segment', `segments/${id}`, id, async (cur) => ({
    ...b,
    // The estimate was of the old definition: none until the next maintenance pass.
    ...(b.definition && !isDeepStrictEqual(b.definition, cur.definition) ? { size_estimate: null, size_computed_at: null } : {}),
  }));
  return shown(after);
}

/**
 * Deletes a segment no rule and no Draft or Running experiment names (409 otherwise; a Stopped
 * experiment keeps the id it ran with). The segment is marked first, then the records naming
 * it are looked for: a rule or experiment stored meanwhile either is seen here or sees the mark
 * and is taken back (see putNaming), so none is left naming a deleted segment. The removal is
 * conditional on the revision marked: a change of the segment made meanwhile (or one that came
 * before the mark) is not lost, and the deletion tried again on the segment as it is (`RACES`),
 * as another deletion under way is waited for.
 */
export async function deleteSegment(c: ControlPorts, who: Caller, id: number): Promise<void> {
  // Another deletion of it under way is waited for, by time, as a name waits (`needSegment`): its
  // end answers this one (404 once it removed the segment). Counted in tries (RACES, about 1.5 s)
  // a second DELETE sent while the first read the records naming the segment again (up to a
  // second, `namingSettled`) could run out first and answer 409 changed_meanwhile.
  const until = performance.now() + MARK_WAIT_MS;
  await withRetry<void>(RACES, async () => {
    const cur = await pastDeletion(c, who.tenant, id, until);
    if (!cur) throw notFound('segment', id);
    const auditId = await c.auditId(who.tenant);
    const mark = nowSeconds();
    const marked = cur._rev + 1;
    if (beingDeleted(cur) || !(await c.update(who.tenant, 'segment', id, { _deleting: mark, _rev: marked }, { _rev: cur._rev }))) return { failure: busy('Segment', id), retryable: true };
    const { rules, experiments } = await namingSettled(c, who.tenant, id);
    const entry = entryOf(who, auditId, 'delete', `segments/${id}`, shown(cur), null);
    if (!rules.length && !experiments.length && (await c.remove(who.tenant, 'segment', id, { _rev: marked }, { kept: true, audited: { entry } }))) return { value: undefined };
    await unmark(c, who.tenant, id, mark);
    if (!rules.length && !experiments.length) return { failure: busy('Segment', id), retryable: true };
    const users = [rules.length ? `rule(s) ${rules.join(', ')}` : '', experiments.length ? `experiment(s) ${experiments.join(', ')}` : ''].filter(Boolean).join(' and ');
    throw new Conflict('segment_in_use', `Segment ${id} is used by ${users}; remove it from them first.`);
  });
}

/**
 * The rules and experiments (not Stopped) naming segment `id`, read while its deletion's mark is
 * on, once those written in the last `NAMING_SETTLE_SECONDS` have settled. Such a record's writer
 * checks the segment after its write and takes the write back (404) when it finds the mark
 * (`putNaming`, `updateRule`): a deletion that refused (409, naming it) on a write then taken back
 * failed beside it, neither request done (2 in 45 of a DELETE racing a PATCH that named the
 * segment, 2026-12-06). So while a record naming it is that recent, it is read again for up to
 * `NAMING_SETTLE_WAIT_MS`, `NAMING_SETTLE_MS` apart: gone from it, the deletion goes on.
 */
async function namingSettled(c: ControlPorts, tenant: string, id: number): Promise<{ rules: number[]; experiments: number[] }> {
  const until = performance.now() + NAMING_SETTLE_WAIT_MS;
  for (;;) {
    const cfg = await c.controlConfig(tenant);
    const rules = cfg.rules.filter((r) => r.segment_id === id);
    const experiments = cfg.experiments.filter((e) => e.segment_id === id && e.status !== 'Stopped');
    const recent = [...rules, ...experiments].some((r) => typeof r.updated_at === 'number' && nowSeconds() - r.updated_at <= NAMING_SETTLE_SECONDS);
    if (!recent || performance.now() >= until) return { rules: rules.map((r) => r.id), experiments: experiments.map((e) => e.id) };
    await sleep(NAMING_SETTLE_MS);
  }
}
const NAMING_SETTLE_SECONDS = 10;
const NAMING_SETTLE_MS = 100;
const NAMING_SETTLE_WAIT_MS = 1000;
/**
 * How long a name waits on a segment's deletion under way (`needSegment`): past the deletion's
 * reading again, with room for the read under way when that ends and the deletion's removal or
 * taking off its mark.
 */
const MARK_WAIT_MS = NAMING_SETTLE_WAIT_MS + 2000;

/**
 * Takes a deletion's mark (`mark`, its time) off the segment as it is now: a change made since the
 * mark (a PATCH) moved its revision on, and a clear conditional on the marked one left it marked,
 * so that for a minute it named no segment to rules and experiments, and could not be deleted.
 */
async function unmark(c: ControlPorts, tenant: string, id: number, mark: number): Promise<void> {
  await withRetry<void>(RACES, async () => {
    const cur = await c.get<Stored<Segment>>(tenant, 'segment', id);
    if (!cur || cur._deleting !== mark) return { value: undefined };
    return (await c.update(tenant, 'segment', id, { _deleting: null, _rev: cur._rev + 1 }, { _rev: cur._rev })) ? { value: undefined } : { failure: busy('Segment', id), retryable: true };
  });
}

// Experiments

/** 400 naming each variant whose endpoint the tenant does not have. */
async function needEndpoints(c: ControlPorts, tenant: string, variants: readonly Variant[]): Promise<void> {
  const known = new Set((await c.list<Endpoint>(tenant, 'endpoint')).map((e) => e.endpoint_name));
  const errors: Record<string, string[]> = {};
  variants.forEach((v, n) => {
    if (!known.has(v.endpoint_name)) errors[`variants.${n}.endpoint_name`] = [`no serving endpoint is named ${v.endpoint_name}`];
  });
  if (Object.keys(errors).length) throw new InvalidInput('Invalid request body.', errors);
}

/**
 * Variants as stored: a variant's `rerank` only when it sets a control. Null, `{}` and controls all
 * null are each no controls of its own (serving adds none of them): stored alike, so a PATCH that
 * sends one where the record holds another is no change (until 2026-12-06 `{}` and all-null were
 * stored and answered as `rerank: {}`, null as none, and a PATCH of one over the other was written).
 */
const variantsOf = (vs: S.ExperimentBody['variants']): Variant[] =>
  vs.map((v) => {
    const own = v.rerank ? defined(v.rerank) : {};
    return { name: v.name, endpoint_name: v.endpoint_name, traffic_percent: v.traffic_percent, ...(Object.keys(own).length ? { rerank: own } : {}) };
  });

/**
 * Other experiments of the context that are Running (those whose start is still being checked too):
 * read from the Draft and Running ones (until 2026-12-07 from a list of all, Stopped ones too).
 */
async function runningOthers(c: ControlPorts, tenant: string, exp: Experiment): Promise<Stored<Experiment>[]> {
  const all = await c.openExperiments<Stored<Experiment>>(tenant);
  return all.filter((e) => e.context_id === exp.context_id && e.status === 'Running' && e.id !== exp.id);
}
const runningBesides = async (c: ControlPorts, tenant: string, exp: Experiment): Promise<number[]> => (await runningOthers(c, tenant, exp)).map((e) => e.id);
const alreadyRunning = (contextId: number, ids: number[]) =>
  new Conflict('experiment_running', `Experiment ${ids.join(', ')} is already Running in context ${contextId}: stop it first (one Running experiment per context).`);

export async function createExperiment(c: ControlPorts, who: Caller, b: S.ExperimentBody, ids?: IdPlan): Promise<Experiment> {
  const done = await storedBefore<Stored<Experiment>>(c, who.tenant, 'experiment', ids);
  if (done) return shown(await checkedBefore(c, who.tenant, 'experiment', `experiments/${done.id}`, done));
  await needContext(c, who.tenant, b.context_id);
  if (b.segment_id) await needSegment(c, who.tenant, b.segment_id);
  const variants = variantsOf(b.variants);
  await needEndpoints(c, who.tenant, variants);
  const now = nowSeconds();
  const rec: Stored<Experiment> = {
    id: await newId(() => c.nextId(who.tenant, 'experiment'), ids),
    name: b.name,
    context_id: b.context_id,
    segment_id: b.segment_id ?? null,
    variants,
    status: 'Draft',
    attribution_window_seconds: b.attribution_window_seconds,
    started_at: null,
    stopped_at: null,
    created: now,
    updated_at: now,
    _rev: 1,
  };
  return shown(await putNaming(c, who.tenant, 'experiment', rec, entryOf(who, await c.auditId(who.tenant), 'create', `experiments/${rec.id}`, null, shown(rec))));
}

const withResults = async (tenant: string, e: Experiment, results: ResultsOf) => ({ ...e, results: await results(tenant, e) });

export async function getExperiment(c: ControlPorts, tenant: string, id: number, results: ResultsOf) {
  const e = await c.get<Stored<Experiment>>(tenant, 'experiment', id);
  if (!e) throw notFound('experiment', id);
  return withResults(tenant, shown(e), results);
}

export async function listExperiments(c: ControlPorts, tenant: string, q: S.ContextPageQuery, results: ResultsOf) {
  const page = await contextList<Stored<Experiment>>(c, tenant, 'experiment', q);
  const data = await Promise.all(page.rows.map((e) => withResults(tenant, shown(e), results)));
  return listOf(data, page.hasMore, page.cursorAfter);
}

const NEXT: Record<ExperimentStatus, ExperimentStatus | undefined> = { Draft: 'Running', Running: 'Stopped', Stopped: undefined };

/**
 * Renames, sets the attribution window, edits variants (Draft only) and moves the status
 * Draft → Running → Stopped (Stopped is final). Starting needs the variants' endpoints and no
 * other Running experiment in the context. Two starts in one context at once may both see the
 * other once written: each then undoes its own, so never are two left Running; and each, after a
 * random pause, starts again unless the other is Running by then (409), so one of them is.
 */
export async function updateExperiment(c: ControlPorts, who: Caller, id: number, b: S.ExperimentPatch): Promise<Experiment> {
  if (b.segment_id) {
    const cur = await c.get<Stored<Experiment>>(who.tenant, 'experiment', id);
    // A Draft's (another's segment_id is 400, below).
    if (cur?.status === 'Draft' && cur.segment_id === b.segment_id) await namedAlready(c, who, 'experiment', `experiments/${id}`, id, b.segment_id);
  }
  const { after } = await startsSettled(c, who.tenant, id, () =>
    withRetry<Changed<Experiment>>(STARTS, async () => {
      const changed = await changeExperiment(c, who, id, b);
      // A segment newly named is checked again after the write, as a create does (see putNaming).
      const { before: was, after: now } = changed;
      if (now.segment_id !== null && now.segment_id !== was.segment_id && !(await segmentLive(c, who.tenant, now.segment_id))) {
        await undo(c, who.tenant, 'experiment', id, changed);
        throw notFound('segment', now.segment_id);
      }
      // A start sent again while a start of this experiment is still being checked (a retry, or
      // two starts of it at once) answers what that start comes to: Running once it holds; once it
      // undid itself (another experiment Running), this one tries as a start of its own.
      if (b.status === 'Running' && was.status === 'Running' && was._starting) {
        const settled = await startSettled(c, who.tenant, id);
        // Still marked past STARTING_SECONDS: that start's check stopped (a crash) before it ran.
        // This one checks in its stead (until 2026-12-06 it answered 200 unchecked, with another
        // experiment of the context Running beside it); one that finds another Running takes the
        // unchecked start back, and tries again as a start of its own (409).
        if (settled?.status === 'Running' && settled._starting) {
          if (!(await runningBesides(c, who.tenant, settled)).length) {
            await started(c, who.tenant, settled);
            return { value: changed };
          }
          await takeBackStart(c, who, settled);
          return { failure: busy('Experiment', id), retryable: true };
        }
        if (settled && settled.status !== 'Draft') return { value: changed };
        // What this try wrote beside the status (a rename) keeps its audit entry, written with it.
        return { failure: busy('Experiment', id), retryable: true };
      }
      // A start (not a Running experiment's status sent again) is checked against the others.
      const starts = b.status === 'Running' && was.status !== 'Running';
      const others = starts ? await runningBesides(c, who.tenant, changed.after) : [];
      if (!others.length) {
        if (starts) await started(c, who.tenant, changed.after);
        return { value: changed };
      }
      await undo(c, who.tenant, 'experiment', id, changed);
      return { failure: alreadyRunning(changed.after.context_id, others), retryable: true };
    }),
  );
  return shown(after);
}

/**
 * A start whose check never ran (`updateExperiment`), found with another experiment of its context
 * Running: a Draft again, as its check would have left it, with its own audit entry (the start's
 * was written with it).
 */
async function takeBackStart(c: ControlPorts, who: Caller, unchecked: Stored<Experiment>): Promise<void> {
  await withRetry<void>(RACES, async () => {
    const cur = await c.get<Stored<Experiment>>(who.tenant, 'experiment', unchecked.id);
    if (cur?.status !== 'Running' || !cur._starting || cur.started_at !== unchecked.started_at) return { value: undefined };
    const back = { status: 'Draft' as const, started_at: null, _starting: null };
    const entry = entryOf(who, await c.auditId(who.tenant), 'update', `experiments/${cur.id}`, shown(cur), shown({ ...cur, ...back }));
    if (await c.update(who.tenant, 'experiment', cur.id, { ...back, _rev: cur._rev + 1 }, { _rev: cur._rev }, { entry })) return { value: undefined };
    return { failure: busy('Experiment', cur.id), retryable: true };
  });
}

/**
 * A start that held: its `_starting` mark cleared (on the record as it is now, should something
 * else have changed it meanwhile; a record no longer Running keeps what it has).
 */
async function started(c: ControlPorts, tenant: string, after: Stored<Experiment>): Promise<void> {
  let cur: Stored<Experiment> | undefined = after;
  for (let tries = 0; cur && cur.status === 'Running' && cur._starting && tries < 5; tries++) {
    if (await c.update(tenant, 'experiment', cur.id, { _starting: null, _rev: cur._rev + 1 }, { _rev: cur._rev })) return;
    cur = await c.get<Stored<Experiment>>(tenant, 'experiment', cur.id);
  }
}

/**
 * A start refused because others were Running names the one Running once starts have settled:
 * one seen Running may be another start that undoes itself meanwhile (four starts at once named
 * Drafts as Running; a wait of 25 ms, as before, was not enough on a loaded machine). Settled:
 * exactly one Running whose start held (`_starting` cleared); while one is still being checked,
 * read again `SETTLE_MS` later; else none is named.
 */
async function startsSettled<T>(c: ControlPorts, tenant: string, id: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (e) {
    if (!(e instanceof Conflict) || e.code !== 'experiment_running') throw e;
    const exp = await c.get<Stored<Experiment>>(tenant, 'experiment', id);
    if (!exp) throw e;
    for (let read = 0; read < SETTLE_READS; read++) {
      const running = await runningOthers(c, tenant, exp);
      if (running.length === 1 && !running[0]?._starting) throw alreadyRunning(exp.context_id, [running[0]?.id as number]);
      await sleep(SETTLE_MS);
    }
    throw new Conflict('experiment_running', `Another experiment of context ${exp.context_id} is starting at the same time; try again (one Running experiment per context).`);
  }
}
const SETTLE_MS = 25;
const SETTLE_READS = 6;

/**
 * Experiment `id` once the start of it under way has settled: held (Running, its mark cleared) or
 * undone (a Draft again); read again, at growing pauses, while it is marked as being checked, for
 * as long as serving would wait on it (then its check stopped: a crash, and it is taken as held).
 */
async function startSettled(c: ControlPorts, tenant: string, id: number): Promise<Stored<Experiment> | undefined> {
  for (let read = 0; ; read++) {
    const cur = await c.get<Stored<Experiment>>(tenant, 'experiment', id);
    if (cur?.status !== 'Running' || !cur._starting || nowSeconds() - (cur.started_at ?? 0) > STARTING_SECONDS) return cur;
    await sleep(Math.min(SETTLE_MS * 2 ** Math.min(read, 4), 400));
  }
}

/** One try of `updateExperiment`'s change (a start refused when another experiment of the context is Running already). */
function changeExperiment(c: ControlPorts, who: Caller, id: number, b: S.ExperimentPatch) {
  return change<Experiment>(c, who, 'experiment', 'experiment', `experiments/${id}`, id, async (cur) => {
    // The status it has already (a start or a stop sent again, a retry) is no move: a change of
    // nothing, as a template's publish sent twice is (until 2026-12-06 it was 400).
    const moves = b.status !== undefined && b.status !== cur.status;
    if (moves && NEXT[cur.status] !== b.status) {
      throw badState(
        cur.status === 'Stopped' ? `Experiment ${id} is Stopped, which is final.` : `Experiment ${id} is ${cur.status}: it can move to ${NEXT[cur.status]} only (Draft → Running → Stopped).`,
      );
    }
    if (b.variants && cur.status !== 'Draft') throw badState(`Experiment ${id} is ${cur.status}: its variants can be changed only while it is a Draft.`);
    if (b.segment_id !== undefined && cur.status !== 'Draft') throw badState(`Experiment ${id} is ${cur.status}: its segment can be changed only while it is a Draft.`);
    // A window applies to the requests served after it is set: a Stopped experiment serves none, so
    // a new one would count nothing differently and only misname the window its results were
    // counted with (until 2026-12-07 it was stored and shown beside them).
    const stopsThere = cur.status === 'Stopped' || (moves && b.status === 'Stopped');
    if (stopsThere && b.attribution_window_seconds !== undefined && b.attribution_window_seconds !== cur.attribution_window_seconds) {
      throw badState(
        `Experiment ${id} is ${cur.status === 'Stopped' ? 'Stopped' : 'being stopped'}: its attribution window can be changed only while it is a Draft or Running (it applies to the requests served after it is set).`,
      );
    }
    if (b.segment_id && b.segment_id !== cur.segment_id) await needSegment(c, who.tenant, b.segment_id);
    const variants = b.variants ? variantsOf(b.variants) : undefined;
    if (variants) await needEndpoints(c, who.tenant, variants);
    const now = nowSeconds();
    if (moves && b.status === 'Running') {
      if (!variants) await needEndpoints(c, who.tenant, cur.variants);
      const others = await runningBesides(c, who.tenant, cur);
      if (others.length) throw alreadyRunning(cur.context_id, others);
    }
    return {
      name: b.name,
      attribution_window_seconds: b.attribution_window_seconds,
      variants,
      segment_id: b.segment_id,
      status: b.status,
      ...(moves && b.status === 'Running' ? { started_at: now, _starting: true } : {}),
      ...(moves && b.status === 'Stopped' ? { stopped_at: now } : {}),
    };
  });
}

// Rerank controls

const CONTROLS = ['diversity', 'popularity_weight', 'freshness_weight', 'max_per_category', 'exclude_seen'] as const;

/** A context's controls as shown: every control, null when unset. */
function rerankView(contextId: number, r: RerankRecord | undefined) {
  const controls = Object.fromEntries(CONTROLS.map((k) => [k, r?.[k] ?? null])) as { [K in keyof RerankControls]-?: NonNullable<RerankControls[K]> | null };
  return { context_id: contextId, ...controls, updated_at: r?.updated_at ?? null };
}

export async function getRerank(c: ControlPorts, tenant: string, contextId: number) {
  await needContext(c, tenant, contextId);
  return rerankView(contextId, await c.get<Stored<RerankRecord>>(tenant, 'rerank', contextId));
}

/** Replaces the context's whole set of controls (a control left out is unset). */
export async function putRerank(c: ControlPorts, who: Caller, contextId: number, body: S.RerankBody) {
  // What GET answers may come back: its context (this one) and its time (the service's to set).
  const { context_id, updated_at: _set, ...b } = body;
  if (context_id !== undefined && context_id !== contextId)
    throw new InvalidInput('Invalid request body.', { context_id: [`context_id must be the context in the query (${contextId}), or left out`] });
  await needContext(c, who.tenant, contextId);
  const rec = await withRetry<Stored<RerankRecord> | undefined>(RACES, async () => {
    const cur = await c.get<Stored<RerankRecord>>(who.tenant, 'rerank', contextId);
    const rec: Stored<RerankRecord> = { id: contextId, context_id: contextId, ...defined(b), updated_at: nowSeconds(), _rev: (cur?._rev ?? 0) + 1 };
    // The same controls again (a PUT sent twice): nothing written, as a change of nothing (`change`).
    // So is a PUT of no control to a context that has none (`{}`, or GET's all-null answer sent
    // back): until 2026-12-08 it stored a record of nothing, `updated_at` set and a `create` entry
    // in the trail whose `after` held no control.
    if (CONTROLS.every((k) => isDeepStrictEqual(cur?.[k], rec[k]))) return { value: cur };
    const entry = entryOf(who, await c.auditId(who.tenant), cur ? 'update' : 'create', `rerank-controls/${contextId}`, cur ? rerankView(contextId, cur) : null, rerankView(contextId, rec));
    return (await c.replace(who.tenant, 'rerank', rec, cur ? { _rev: cur._rev } : 'new', { entry })) ? { value: rec } : { failure: busy('Rerank controls of context', contextId), retryable: true };
  });
  return rerankView(contextId, rec);
}

// Audit trail

/** The resources whose ids are no numbers: a credential's (`clients/<client_id>`, `api-keys/<prefix>`). */
const CREDENTIAL_RESOURCE = /^(clients|api-keys)\//;

/**
 * A resource's trail, newest first. Its id past the largest a record can have (digits, as sent)
 * names no record and so has no trail: an empty page, without a read (as a rounded id or a key of
 * any length would not be). A cursor sent with it is checked as any (until the review of 50953d08
 * that empty page was answered whatever `starting_after` held).
 */
export async function listAudit(c: ControlPorts, tenant: string, q: S.AuditQuery) {
  const none = !CREDENTIAL_RESOURCE.test(q.resource) && !Number.isSafeInteger(Number(q.resource.slice(q.resource.indexOf('/') + 1)));
  if (none && q.starting_after === undefined) return listOf<AuditEntry>([], false);
  const page = await c.auditPage(tenant, q.resource, { limit: q.limit, after: q.starting_after, ...(none ? { none } : {}) }).catch(asStartingAfter);
  return listOf(page.rows, page.hasMore, page.cursorAfter);
}
