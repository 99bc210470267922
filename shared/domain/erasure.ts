import { createHmac, randomInt } from 'node:crypto';
import type { BlobStore } from '../blob.ts';
import { nowMs, nowSeconds } from '../clock.ts';
import { eachAtMost } from '../concurrency.ts';
import type { ExposureStore } from '../control/exposures.ts';
import { OLD_CODE_SETTLE_SECONDS } from './deploys.ts';
import { eraseFromModels } from '../recs/erase-from-models.ts';
import { ERASURE_SWEEP_DELAY_SECONDS, sweepBound, sweepMembersThrough, type ConsoleStore, type ErasedUser, type ErasureMarkerScan, type ErasureSweep } from './console-records.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { EventStore } from './types.ts';
import { errorMessage } from './errors.ts';

/*
 * Erasure of a user (DELETE /api/users/{user_id}). Their events are deleted from the table, so
 * no later training reads them; but a model already trained holds their history in its
 * artifact, and serving reads it from there. So the tenant keeps a marker per erased user, which
 * serving reads by its key with every request that personalises: from the moment it is stored,
 * serving personalises that user neither from an artifact trained before the erasure ended nor
 * from events created before it (an index read may still show deleted events for a moment):
 * recommendations, segment membership (shared/control/serving.ts) and personalised search
 * (shared/search/service.ts) alike, by `withoutErased` (erased-users.ts). Events the user sends
 * later personalise as usual. The answers stored for replay under the Idempotency-Keys of the
 * requests that sent their events are forgotten, and their membership rows in the tenant's
 * experiments (first served, conversions by type) deleted. A minute after it ends, the erasure
 * looks again for events of the user an ingest that raced it wrote (`sweepErasures`).
 */

/** Idempotency-Key records an erasure forgets at once. */
const FORGETS_AT_ONCE = 25;

export async function eraseUser(
  deps: { console: ConsoleStore; events: EventStore; idempotency: IdempotencyStore; exposures: Pick<ExposureStore, 'forgetUser'>; blobs: BlobStore },
  tenant: string,
  userId: string,
  /**
   * The maintenance pass's finish of an erasure cut off (`sweepErasures`): its marker as stored and
   * the bound its sweep's row recorded as it began (where it recorded none, `sweepBound`, the last
   * event of the user ingested by the marker's `requested_at`: `finishBound`). Finished as it began (its `requested_at`, its
   * order, the events up to that bound), not as a repeat begun now would be: the events the user
   * sent after it began are kept (until 2026-12-07 the finish, a repeat, deleted them too).
   * `until` (a `performance.now()` time: the pass's budget): no model version is started past it,
   * and the erasure is left running, its row kept, for the next pass to go on from the last version
   * checked (until 2026-12-07 a finish rewrote every version in one pass, however long that took).
   */
  cutOff?: { marker: ErasedUser; through: number; until?: number },
) {
  // When it began, and its order, from one read of the clock (the pass finishes one whose marker was never stored as its row's order says: `beganAt`).
  const startedMs = nowMs();
  const requestedAt = cutOff?.marker.requested_at ?? Math.floor(startedMs / 1000);
  // The model versions an earlier erasure of the user (or this one, cut off) checked hold none of them.
  const earlier = cutOff?.marker ?? (await deps.console.erasedUser(tenant, userId));
  const checkedThrough = earlier?.models_checked_through ?? 0;
  // Of erasures of the user begun in the same second, the one begun last keeps its marker.
  const order = cutOff ? cutOff.marker.order : startedMs * 1000 + randomInt(1000);
  let marker: ErasedUser = { user_id: userId, requested_at: requestedAt, completed_at: null, models_checked_through: checkedThrough, ...(order !== undefined ? { order } : {}) };
  // The events it erases: those of ids up to its bound (a finish, the bound recorded as it began).
  let bound = cutOff?.through;
  if (!cutOff) {
    // Its sweep's row before its marker, due a minute after it began (its end merges its own sweep
    // in, due a minute after that), with the last event id handed out by then: an erasure cut off
    // before it ends leaves the row by which the maintenance pass finds its marker and finishes it
    // up to that id (`sweepErasures`). Until 2026-12-07 only the caller's repeat did. Its deletion
    // goes up to that id too, the one a list not filtered by user hides while it runs (`listEvents`;
    // until 2026-12-07 it took the last id handed out once its marker was stored).
    bound = await deps.events.issuedThrough(tenant);
    // With its order: a sweep acts on the row only under this erasure's marker or a later one's (`sweepErasures`).
    await deps.console.putErasureSweep(tenant, { user_id: userId, due_at: requestedAt + ERASURE_SWEEP_DELAY_SECONDS, events_through: bound, members_through: 0, order });
  }
  // The marker first: serving stops at once, even if the deletion fails half way (retrying it
  // is safe: an erasure is idempotent), and a run storing its model from now on leaves the user out.
  await deps.console.putErasure(tenant, marker);
  // The answers stored under the Idempotency-Keys of requests that wrote their events hold those
  // events: forgotten (each before its events are deleted), so a replay cannot answer them.
  // Several at once, as the events are deleted: a user who sent each event under its own key has
  // as many keys as events (two calls each), which one at a time took most of the function's time.
  // Up to its bound. A bound of 0 is one: the tenant had handed out no id as it began (or, for a
  // finish of the older code's, the user had sent none by then), and it erases none (until
  // 2026-12-07 it was taken for none recorded, and a finish deleted every event the user sent since
  // the erasure began).
  const { deleted, through, finished } = await deps.events.eraseUser(tenant, userId, forgetting(deps.idempotency, tenant), bound, cutOff?.until);
  // A finish out of the pass's time: still running, its row due, the next pass goes on from here.
  if (finished === false) return { user_id: userId, deleted_events: deleted, model_versions_rewritten: 0 };
  // Their membership row in every experiment of the tenant, Draft, Running or Stopped (the totals
  // keep what they counted; a conversion attributed later writes no row back): those first served
  // before it began; those of requests served as it runs, its sweep's (`sweepErasures`). Not every
  // row: of two erasures of the user at once, the later one may have ended already, and a row
  // first served since is a new membership.
  const experiments = await deps.console.list(tenant, 'experiment');
  await deps.exposures.forgetUser(
    tenant,
    userId,
    experiments.map((e) => e.id),
    requestedAt,
  );
  const models = await eraseFromModels(
    deps,
    tenant,
    checkedThrough,
    async (version) => {
      marker = { ...marker, models_checked_through: version };
      await deps.console.putErasure(tenant, marker);
    },
    cutOff?.until,
  );
  const rewritten = models.rewritten;
  // A finish out of the pass's time: still running, its row due, the next pass goes on from here.
  if (!models.finished) return { user_id: userId, deleted_events: deleted, model_versions_rewritten: rewritten };
  const completedAt = nowSeconds();
  // A second look once the ingests it may have raced have ended (`sweepErasures`), also when a
  // later erasure of the user holds the marker (it may fail, and leave no sweep of its own; two
  // sweeps of the user are merged). Its memberships: those first served by its end (the sweep
  // cuts them back to a later erasure's end if that one ended first). Stored before the end
  // marker: an erasure is never marked ended without its sweep (until 2026-12-07 one cut off
  // between the two stood ended with none, and an event an ingest in flight wrote after it
  // looked stayed for good).
  await deps.console.putErasureSweep(tenant, {
    user_id: userId,
    due_at: completedAt + ERASURE_SWEEP_DELAY_SECONDS,
    events_through: through,
    members_through: completedAt,
    ...(order !== undefined ? { order } : {}),
  });
  // Unless a later erasure of the user holds the marker (its own stands: `putErasure`).
  await deps.console.putErasure(tenant, { ...marker, completed_at: completedAt, events_through: through });
  return { user_id: userId, deleted_events: deleted, model_versions_rewritten: rewritten };
}

/** Forgets the answers stored under the Idempotency-Keys the events about to be deleted came with, several at once. */
const forgetting = (idempotency: IdempotencyStore, tenant: string) => (written: ReadonlyMap<string, number>) =>
  eachAtMost([...written], FORGETS_AT_ONCE, ([key, writtenAt]) => idempotency.forget(tenant, key, writtenAt));

export { ERASURE_SWEEP_DELAY_SECONDS };

/**
 * How long after an erasure began (`requested_at`) a marker still running is taken for one cut
 * off, and the maintenance pass finishes it (`sweepErasures`): well past the time of the function
 * that runs an erasure (29 s) and of the maintenance pass (60 s), which finishes one itself.
 */
export const ERASURE_FINISHED_BY_SECONDS = 300;

/**
 * The second look of each ended erasure that is due (the maintenance pass, every minute): an
 * ingest in flight as the erasure began (its ids taken, so the erasure's) or retried under its
 * Idempotency-Key as it ran can write one of the user's events after the erasure looked for them;
 * the sweep deletes the user's events up to the erasure's `events_through` again (forgetting the
 * answers stored under their keys first), then its row. Until 2026-12-03 such an event stayed in
 * the table (training left it out, serving never read it, `GET /v1/events` listed it). Likewise
 * the user's experiment memberships begun as the erasure ran (the erasure deleted those begun
 * before it): the sweep deletes every membership row of the user first served by the time the
 * erasure ended (its `members_through`; a later one is a new membership, kept). Until 2026-12-04
 * such a row stayed.
 * No sweep starts once `until` (a `performance.now()` time: the maintenance pass's budget) has
 * passed: the sweeps left are due still, and the next pass takes them (each is deleted only once
 * done, so one cut off by the function's time is done again). Until 2026-12-07 a tenant's due
 * sweeps all ran in one pass, however many (a tenant that erased thousands of users within a
 * minute), and the pass outlived the function's 60 s. A sweep or finish with many events left takes
 * at most half the time left while other sweeps are due after it (a page of the events at least),
 * and those go on: until 2026-12-07 one out of time stopped the tenant's sweeps, the next pass began
 * with it again (rows go in user order), and every user after it waited until all its events were
 * gone. Once they have, those cut short by their half go on with the time the others left: most
 * sweeps find nothing left, and a row waiting for its erasure's marker (below) does nothing. Until
 * 2026-12-08 they had only their half, however little of the rest the others used, and their events
 * waited for the next pass.
 * Every erasure stores its row as it begins (due a minute later), so an erasure cut off before it
 * ended (its function's time ran out, a write failed past its retries) is found here: while its
 * marker stands as running the row is kept, and once ERASURE_FINISHED_BY_SECONDS have passed since
 * it began, the erasure is finished as its repeat would finish it (`eraseUser`, which may run
 * alongside the caller's own repeat: erasures of one user at once are safe). Until 2026-12-07
 * nothing but the caller's repeat finished it. An erasure cut off before then stored no row: the
 * pass finds its marker and stores one first (`adoptRowlessErasures`).
 * A row whose latest erasure (its `order`) has no marker standing, neither its own nor a later
 * one's (none, or an earlier erasure's), is that erasure's start with its marker not stored: still
 * on its way, or refused (the caller answered 503). Nothing of it is done then (neither its events
 * deleted nor the row removed): once ERASURE_FINISHED_BY_SECONDS have passed since it began, the
 * pass finishes it, its marker stored first (`eraseUser`), as one cut off after its marker. Until
 * 2026-12-07 the sweep a minute on deleted the user's events under no marker of the erasure
 * (serving, the lists and an ingest's retry went on as if none had begun; the models kept the
 * user) and removed the row; and a pass that read the row just before the marker landed removed
 * it, so that erasure, cut off later, was finished by nothing.
 * One user's sweep that fails leaves the others to go on; once they have, `ErasureSweepsFailed` is
 * thrown, naming every failed sweep (its user as `userRef`, not the id) and the events the others
 * deleted (the pass logs each failure and counts those). Until 2026-12-07 only the first failure was
 * thrown and the others' deletions were lost from the pass's count: a second user's sweep failing
 * every pass never showed in the logs. Returns the events deleted.
 * `handled` (the maintenance pass's, per tenant): the users whose sweep ran, not cut short by its
 * time, are added to it, and a call with the same set leaves them out, so the pass's second round
 * for a tenant whose share ran out (shared/maintenance.ts `ERASURE_TENANT_SHARE`) goes on with
 * those cut short or not reached. Until 2026-12-08 that round swept the tenant's due rows again
 * from the first: a failed sweep was tried and logged twice in a pass, and a row kept for an
 * erasure still running re-read its user's events, in the time the others were to have.
 */
export async function sweepErasures(
  deps: {
    console: ConsoleStore;
    events: EventStore;
    idempotency: IdempotencyStore;
    exposures: Pick<ExposureStore, 'forgetUser'>;
    blobs: BlobStore;
    /** The deployment's key by which failures name their user (`userRef`; USER_REF_KEY, required). */
    userRefKey: string;
  },
  tenant: string,
  now: number,
  until = Number.POSITIVE_INFINITY,
  handled: Set<string> = new Set(),
): Promise<number> {
  let deleted = 0;
  const failures: SweepFailure[] = [];
  let experiments: Promise<number[]> | undefined;
  // Read once for all the tenant's sweeps; a failed read is not kept (until 2026-12-07 it was, and
  // one throttled read failed every sweep after it in the pass): the next sweep reads them again.
  const experimentIds = () =>
    (experiments ??= deps.console.list(tenant, 'experiment').then(
      (es) => es.map((e) => e.id),
      (error: unknown) => {
        experiments = undefined;
        throw error;
      },
    ));
  const due = (await deps.console.erasureSweeps(tenant)).filter((s) => s.due_at <= now && !handled.has(s.user_id));
  // Those still at it when their half of the time ran out: they go on with the time the others left.
  const cutShort: ErasureSweep[] = [];
  const sweepEach = async (sweeps: readonly ErasureSweep[], again: boolean) => {
    for (const [k, sweep] of sweeps.entries()) {
      const started = performance.now();
      if (started >= until) break;
      // Its share of the time left: half of it while others are due after it (a page of the user's
      // events at least: `EventStore.eraseUser`), all of it for the last.
      const share = k === sweeps.length - 1 ? until : started + (until - started) / 2;
      try {
        deleted += await sweepOne(deps, tenant, sweep, now, share, experimentIds);
        if (performance.now() < share) handled.add(sweep.user_id);
        else if (!again && share < until) cutShort.push(sweep);
      } catch (error) {
        handled.add(sweep.user_id);
        // One user's failure (a write throttled past its retries, an artifact that cannot be read)
        // leaves the others' sweeps to go on (its row stays due); the pass reports it once they have
        // (until 2026-12-07 it ended the tenant's sweeps, and one failing every pass held back every
        // user after it for good).
        failures.push({ userRef: userRef(deps.userRefKey, tenant, sweep.user_id), error });
      }
    }
  };
  await sweepEach(due, false);
  await sweepEach(cutShort, true);
  if (failures.length > 0) throw new ErasureSweepsFailed(deleted, failures);
  return deleted;
}

/** Erasure markers `adoptRowlessErasures` reads in a pass, per tenant (one Query). */
export const MARKERS_SCANNED_PER_PASS = 100;
/** Rows `adoptRowlessErasures` stores at once. */
const ADOPTED_AT_ONCE = 10;

/**
 * Finds the erasures cut off before 2026-12-07, which stored no sweep row as they began, and stores
 * one for each, so the sweeps finish them (`sweepErasures`: a marker still running
 * ERASURE_FINISHED_BY_SECONDS after it began is finished): a marker running with no row of its user
 * gets a row due then (now, for one that old), which records no bound (its finish deletes the
 * user's events ingested by the time the erasure began, its marker's `requested_at`: `finishBound`;
 * until 2026-12-08 those up to the last id handed out as it ran, the events the user sent since
 * included) and no memberships (its finish's own row covers them). Until 2026-12-07 such an erasure stood running until its
 * caller repeated it: the user's own event list and `GET /v1/events/{id}` left out all of their
 * events while lists not filtered by user listed them, and the events stayed in the table.
 * The maintenance pass calls it before the sweeps, for each tenant: it reads a page of the tenant's
 * markers (MARKERS_SCANNED_PER_PASS, in key order, one Query, from where the last pass stopped:
 * `ErasureMarkerScan`) and the rows of the running ones among them (by their keys), never the whole
 * partition in a pass. Rounds go on until one that began OLD_CODE_SETTLE_SECONDS (15 min) after
 * the first has read every marker (an erasure begun by the older code while the first rounds ran,
 * the older code still running for as long, is found by then; until the review of the merge the
 * wait was ERASURE_FINISHED_BY_SECONDS, 5 min, shorter than the re-keying's for the same old code); then the scan is over, and the pass reads nothing more for it (a container that
 * has seen it over, not even its row: `scansOver`). Markers stored by today's erasures need none of
 * it (each stores its row first), so the rows it stores are only those of the older code's. Returns
 * the rows stored.
 */
export async function adoptRowlessErasures(c: ConsoleStore, tenant: string, now: number, perPass = MARKERS_SCANNED_PER_PASS): Promise<number> {
  let over = scansOver.get(c);
  if (!over) scansOver.set(c, (over = new Set()));
  if (over.has(tenant)) return 0;
  const scan = await c.erasureMarkerScan(tenant);
  if (scan?.done) {
    over.add(tenant);
    return 0;
  }
  const firstBegan = scan?.first_began ?? now;
  const roundBegan = scan?.after !== undefined ? (scan.round_began ?? now) : now;
  const page = await c.erasureMarkersPage(tenant, scan?.after, perPass);
  const running = page.markers.filter((m) => m.completed_at === null);
  let stored = 0;
  if (running.length > 0) {
    const rows = await c.erasureSweepsOf(
      tenant,
      running.map((m) => m.user_id),
    );
    const withRow = new Set(rows.map((s) => s.user_id));
    // Merged with a row a repeat of the erasure may store meanwhile (`putErasureSweep`); up to 100
    // a page, so several at once (as the sweeps' own writes go) rather than one after another.
    await eachAtMost(
      running.filter((m) => !withRow.has(m.user_id)),
      ADOPTED_AT_ONCE,
      async (m) => {
        await c.putErasureSweep(tenant, { user_id: m.user_id, due_at: m.requested_at + ERASURE_FINISHED_BY_SECONDS, events_through: 0, members_through: 0 });
        stored += 1;
      },
    );
  }
  const next: ErasureMarkerScan =
    page.next !== undefined
      ? { after: page.next, round_began: roundBegan, first_began: firstBegan }
      : { first_began: firstBegan, ...(roundBegan >= firstBegan + OLD_CODE_SETTLE_SECONDS ? { done: true } : {}) };
  await c.putErasureMarkerScan(tenant, next);
  if (next.done) over.add(tenant);
  return stored;
}

/**
 * Cache: per console store (a container has one), the tenants whose scan (`adoptRowlessErasures`)
 * this container has seen over: never begun again, so not read again. Until 2026-12-08 every pass
 * read each tenant's scan row, one GetItem a tenant a minute for good, to learn it was over. Bound:
 * the tenant ids, one each (a Set, not an `Lru`: the pass visits every tenant in turn, and a bound
 * below their number would let each go before its next visit; docs/architecture.md).
 */
const scansOver = new WeakMap<ConsoleStore, Set<string>>();

/** One user's failed sweep (`sweepErasures`): the user as `userRef`, and what it threw. */
export interface SweepFailure {
  userRef: string;
  error: unknown;
}

/**
 * How logs name an erased user: never the id itself (the erasure removes it), but the first 16 hex
 * digits of the HMAC-SHA-256, under the deployment's key (USER_REF_KEY: the stack id's UUID on AWS,
 * from the data folder's signing key locally), of the tenant and the id (`<tenant>` NUL `<user>`).
 * An operator holding the id and the key computes the same to find its lines; someone holding only
 * the logs cannot match a guessed id (an email, a sequential number) against them. The key is
 * required (shared/config.ts: the pass fails at its start without one); until 2026-12-08 a constant
 * stood in where none was set, and the ref was as guessable as the id. Until 2026-12-07 it was the
 * SHA-256 of the id alone, and any guessed id could be checked against the logs.
 */
export const userRef = (key: string, tenant: string, userId: string): string => createHmac('sha256', key).update(`${tenant}\0${userId}`).digest('hex').slice(0, 16);

/** Thrown by `sweepErasures` once its sweeps have run when some failed: each failure, and the events the others deleted. */
export class ErasureSweepsFailed extends Error {
  constructor(
    readonly deleted: number,
    readonly failures: readonly SweepFailure[],
  ) {
    super(failures.map((f) => errorMessage(f.error)).join('; '), { cause: failures[0]?.error });
    this.name = 'ErasureSweepsFailed';
  }
}

/** One due sweep (`sweepErasures`), within `share` (a `performance.now()` time); returns the events it deleted. */
async function sweepOne(deps: Parameters<typeof sweepErasures>[0], tenant: string, sweep: ErasureSweep, now: number, share: number, experimentIds: () => Promise<number[]>): Promise<number> {
  const running = await deps.console.erasedUser(tenant, sweep.user_id);
  if (sweep.order !== undefined && (running?.order === undefined || running.order < sweep.order)) {
    // Its latest erasure's marker is not stored: wait for it, then finish that erasure as it began.
    const began = beganAt(sweep.order);
    if (began + ERASURE_FINISHED_BY_SECONDS > now) return 0;
    const marker: ErasedUser = { user_id: sweep.user_id, requested_at: began, completed_at: null, models_checked_through: running?.models_checked_through ?? 0, order: sweep.order };
    return (await eraseUser(deps, tenant, sweep.user_id, { marker, through: await finishBound(deps, tenant, sweep, marker), until: share })).deleted_events;
  }
  if (running !== undefined && running.completed_at === null && running.requested_at + ERASURE_FINISHED_BY_SECONDS <= now) {
    // Cut off: finished as it began, up to the bound its row recorded (its end merges its sweep into this row, due a minute later).
    return (await eraseUser(deps, tenant, sweep.user_id, { marker: running, through: await finishBound(deps, tenant, sweep, running), until: share })).deleted_events;
  }
  const swept = await deps.events.eraseUser(tenant, sweep.user_id, forgetting(deps.idempotency, tenant), sweep.events_through, share);
  // Out of its share with events left: the row stays due, the next pass goes on, and the tenant's other due sweeps go on now.
  if (swept.finished === false) return swept.deleted;
  const marker = await deps.console.erasedUser(tenant, sweep.user_id);
  await deps.exposures.forgetUser(tenant, sweep.user_id, await experimentIds(), membersSwept(sweep, marker));
  // Kept while the marker stands as running: the next passes look again, until it ends or is finished.
  if (marker === undefined || marker.completed_at !== null) await deps.console.removeErasureSweep(tenant, sweep);
  return swept.deleted;
}

/**
 * The bound of the finish of an erasure cut off: the one its row recorded as it began
 * (`sweepBound`), or, where it recorded none (a row the marker scan stored for an erasure of the
 * older code, `adoptRowlessErasures`, or one stored before 2026-12-07's bound), the last event of
 * the user ingested by the time the erasure began (its marker's `requested_at`): those are the
 * erasure's, the user's later ones kept. Stored in the row once found (merged: `putErasureSweep`),
 * so a finish spread over several passes keeps it as its first pass found it, not the last event of
 * the user left by then. Until 2026-12-08 such a finish took the last id handed out as it ran, read
 * again at each pass: it deleted every event the user had sent since the erasure began, and those
 * sent between its passes.
 */
async function finishBound(deps: { console: ConsoleStore; events: EventStore }, tenant: string, sweep: ErasureSweep, marker: ErasedUser): Promise<number> {
  const recorded = sweepBound(sweep);
  if (recorded !== undefined) return recorded;
  const bound = await deps.events.lastSentBy(tenant, sweep.user_id, marker.requested_at);
  // 0 (none sent by then) reads as none recorded in a row without an order: found again, 0 again.
  if (bound > 0) await deps.console.putErasureSweep(tenant, { ...sweep, events_through: bound });
  return bound;
}

/** When an erasure began (unix seconds), from its `order` (the millisecond it began × 1,000, plus a tie-break). */
const beganAt = (order: number): number => Math.floor(order / 1_000_000);

/**
 * The memberships a due sweep deletes: those first served by its `members_through`, or by the end
 * of the user's erasure that holds the marker, if that one ended first. Of two erasures of the
 * user at once, the later (by order) can end first, and its end marker land only after the earlier
 * ended: a membership first served between the two ends is new (serving read the later erasure as
 * ended, or will), not one that raced an erasure. A marker of an erasure still running cuts nothing.
 */
export function membersSwept(sweep: Pick<ErasureSweep, 'due_at' | 'members_through'>, marker: Pick<ErasedUser, 'completed_at'> | undefined): number {
  return Math.min(sweepMembersThrough(sweep), marker?.completed_at ?? Number.POSITIVE_INFINITY);
}
