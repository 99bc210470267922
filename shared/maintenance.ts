import type { BlobStore } from './blob.ts';
import { PASS_EVENT_BUDGET, type PassBudget, refreshSegmentSizes, type SegmentSizeDeps } from './control/segment-size.ts';
import type { ExposureStore } from './control/exposures.ts';
import type { Stores } from './data/index.ts';
import { decideAutoPromotion, decideLeftPromotions, startDueRuns } from './domain/automation.ts';
import { adoptRowlessErasures, ErasureSweepsFailed, sweepErasures } from './domain/erasure.ts';
import { logger } from './observability.ts';
import type { WorkQueue } from './queue/messages.ts';
import { sweepTaskRuns, type TaskLauncher } from './recs/launcher.ts';
import { FOLD_PASS_BUDGET_MS, foldSearchCounts, type SearchLogStore } from './search/analytics.ts';
import { embeddingSweeper } from './search/indexer.ts';
import { errorMessage } from './domain/errors.ts';

export interface MaintenanceDeps {
  stores: Stores;
  blobs: BlobStore;
  queue: WorkQueue;
  launcher: TaskLauncher;
  searchLog: Pick<SearchLogStore, 'fold'>;
  /** An erasure's sweep deletes again the user's experiment memberships a request in flight wrote. */
  exposures: Pick<ExposureStore, 'forgetUser'>;
  segmentEvents: SegmentSizeDeps['events'];
  /** How long an item's embedding may lag before it is queued again. */
  embedGraceSeconds: number;
  /** Where the pass starts among the tenants. */
  cursor: PassCursor;
  /** The key by which the pass's logs name a user (USER_REF_KEY, required: `userRef`). */
  userRefKey: string;
  /** How long into the pass a tenant's work may still start (`PASS_BUDGET_MS`). */
  budgetMs?: number;
}

/** The tenant the next pass starts at (kept in the table: each pass may run in a new container). */
export interface PassCursor {
  get(): Promise<string | undefined>;
  set(next: string): Promise<void>;
}

/**
 * How long into the pass (ms) a tenant's work may still start: the function has 60 s, and the next
 * pass starts at the first tenant this one left (`PassCursor`). Until 2026-12-05 the embedding sweep
 * went over every tenant first, unbounded, and a pass that outlived its time was cut off part way
 * through a tenant's work.
 */
export const PASS_BUDGET_MS = 40_000;

/** Items a pass reads of a tenant's catalog to re-key its category index into NFC (`ItemStore.indexCategoriesInNfc`), until done. */
export const CATEGORY_REKEY_ROWS = 5_000;

/**
 * The time a pass gives the category re-keying, shared by every tenant as the search fold's is: a
 * step over a large catalog (5,000 items of a dozen or so a Query page) takes seconds, and until
 * 2026-12-08 (a review of 6906cb7e) the steps of a few such tenants could take the pass's whole
 * budget, deferring every later tenant's own work (its embeddings, due runs, erasure sweeps) to
 * later passes for as long as the re-keying lasted.
 */
export const REKEY_PASS_BUDGET_MS = 10_000;

/**
 * The share of the pass's time left that a tenant's erasure sweeps (`sweepErasures`) take at most on
 * its turn; those its share cut short go on, once every tenant has had its turn, with the time the
 * others left. Until 2026-12-08 a tenant's sweeps had the pass's whole time left: one tenant with
 * many events to erase (thousands of users erased at once, or one with a long history) deferred
 * every tenant after it, their erasures and the rest of their work, to later passes.
 */
export const ERASURE_TENANT_SHARE = 1 / 2;

/**
 * The maintenance pass (every minute on AWS; a timer locally), as of `now`: re-queues lagging
 * embeddings, requests index builds, refreshes segment size estimates, folds searches into the
 * search analytics counters, starts templates' scheduled training runs that are due, ends
 * runs whose container task stopped without ending them, sends runs stored but never sent, decides
 * the auto-promotions their trainers left undecided (`decideLeftPromotions`), and sweeps ended erasures (a second
 * look at the user's events, `sweepErasures`), finishing those cut off before they ended (those cut off before 2026-12-07, which stored
 * no sweep row, found a page of markers a pass: `adoptRowlessErasures`); until it is done, re-keys the
 * tenant's category index into NFC (`indexCategoriesInNfc`). One tenant's failure leaves the others'
 * work alone.
 */
export async function maintenancePass(deps: MaintenanceDeps, now: number) {
  const s = deps.stores;
  const passUntil = performance.now() + (deps.budgetMs ?? PASS_BUDGET_MS);
  const embeddings = await embeddingSweeper({ items: s.items, blobs: deps.blobs, queue: deps.queue }, deps.embedGraceSeconds, now);
  let requeued = 0;
  const rebuilds: string[] = [];
  const deferred: string[] = [];
  const budget: PassBudget = { events: PASS_EVENT_BUDGET };
  let segments = 0;
  let folded = 0;
  const foldUntil = performance.now() + FOLD_PASS_BUDGET_MS;
  const scheduled: string[] = [];
  const interrupted: string[] = [];
  const unsent: string[] = [];
  const promoted: string[] = [];
  let swept = 0;
  let rekeyed = 0;
  let rekeyLeft = REKEY_PASS_BUDGET_MS;
  const failed = (what: string, tenant: string, e: unknown) => logger.error(what, { tenant, error: errorMessage(e) });
  // The pass starts where the last one stopped: at the first tenant it left for later, or, when it
  // reached them all, one tenant further on than it started. The search fold's time and the segment
  // sizes' events are budgets shared by every tenant, so no tenant leads every pass. Until 2026-12-05
  // the tenants went in the same order each time, then each pass started one tenant further on
  // whatever the last one reached (with many tenants, one left for later could wait as many passes
  // as there were tenants).
  const tenants = await s.credentials.listTenants();
  const order = rotated(tenants, await startOf(deps.cursor, tenants, now));
  let cursorFailed = false;
  const saveCursor = async (next: string) => {
    try {
      await deps.cursor.set(next);
    } catch (e) {
      // Once a pass: a cursor that cannot be written fails each tenant's write alike.
      if (!cursorFailed) failed('maintenance cursor not saved', next, e);
      cursorFailed = true;
    }
  };
  // Per tenant, the users whose sweep ran to its end this pass: the second round leaves them out.
  const sweptUsers = new Map<string, Set<string>>();
  const sweepTenant = async (tenant: string, until: number) => {
    let handled = sweptUsers.get(tenant);
    if (!handled) sweptUsers.set(tenant, (handled = new Set()));
    try {
      swept += await sweepErasures({ ...s, exposures: deps.exposures, blobs: deps.blobs, userRefKey: deps.userRefKey }, tenant, now, until, handled);
    } catch (e) {
      // Each user's failed sweep is logged, and the events the tenant's other sweeps deleted are counted.
      if (!(e instanceof ErasureSweepsFailed)) failed('erasure sweep failed', tenant, e);
      else {
        swept += e.deleted;
        for (const f of e.failures) logger.error('erasure sweep failed', { tenant, user_ref: f.userRef, error: errorMessage(f.error) });
      }
    }
  };
  // The tenants whose erasure sweeps their share cut short (`ERASURE_TENANT_SHARE`).
  const erasuresCutShort: string[] = [];
  for (const [i, tenant] of order.entries()) {
    if (performance.now() >= passUntil) {
      deferred.push(tenant);
      continue;
    }
    // Before a tenant's work starts, the cursor names the tenant after it: a pass the function's
    // timeout cuts off in that tenant's work (one started just inside the 40 s can outlive the
    // 60 s) saves nothing at its end, and the next pass starts past it, not at it again. Until
    // 2026-12-05 the cursor was written only as the pass ended, so a pass cut off in a slow
    // tenant's work left the cursor where it was, and every pass started at that tenant and
    // every tenant after it waited.
    await saveCursor(order[(i + 1) % order.length] ?? tenant);
    try {
      const r = await embeddings.tenant(tenant);
      requeued += r.requeued;
      if (r.rebuild) rebuilds.push(tenant);
    } catch (e) {
      failed('embedding and index sweep failed', tenant, e);
    }
    // A tenant's due runs that failed to start start at the next pass.
    try {
      for (const job of await startDueRuns({ console: s.console, queue: deps.queue }, tenant, now)) scheduled.push(`${tenant}/${job}`);
    } catch (e) {
      failed('scheduled runs failed', tenant, e);
    }
    try {
      const runs = await sweepTaskRuns({ console: s.console, decide: (t, name) => decideAutoPromotion(s.console, t, name), queue: deps.queue }, tenant, deps.launcher, now);
      for (const job of runs.ended) interrupted.push(`${tenant}/${job}`);
      for (const job of runs.sent) unsent.push(`${tenant}/${job}`);
    } catch (e) {
      failed('training task sweep failed', tenant, e);
    }
    // After the sweep, which decides the runs it ends Completed itself.
    try {
      for (const job of await decideLeftPromotions(s.console, tenant, now, passUntil)) promoted.push(`${tenant}/${job}`);
    } catch (e) {
      failed('auto-promotion revisit failed', tenant, e);
    }
    try {
      folded += (await foldSearchCounts(deps.searchLog, tenant, now, foldUntil - performance.now())).searches;
    } catch (e) {
      failed('search analytics fold failed', tenant, e);
    }
    // Erasures cut off before 2026-12-07 stored no sweep row: a page of the tenant's markers a pass
    // finds them, and stores their rows, which the sweeps then finish (`adoptRowlessErasures`).
    try {
      const found = await adoptRowlessErasures(s.console, tenant, now);
      if (found > 0) logger.info('erasures cut off without a sweep row found', { tenant, found });
    } catch (e) {
      failed('erasure marker scan failed', tenant, e);
    }
    // Half the pass's time left at most (`ERASURE_TENANT_SHARE`): the rest goes on once every tenant has had its turn.
    const sweepStart = performance.now();
    const share = sweepStart + (passUntil - sweepStart) * ERASURE_TENANT_SHARE;
    await sweepTenant(tenant, share);
    if (performance.now() >= share) erasuresCutShort.push(tenant);
    try {
      segments += await refreshSegmentSizes({ console: s.console, events: deps.segmentEvents }, tenant, now, budget);
    } catch (e) {
      failed('segment sizes failed', tenant, e);
    }
    // Until done (once per tenant), the category index's keys of rows written before they were in NFC,
    // within what is left of the re-keying's share of the pass.
    const rekeyStart = performance.now();
    const rekeyUntil = Math.min(passUntil, rekeyStart + rekeyLeft);
    try {
      if (rekeyStart < rekeyUntil) rekeyed += (await s.items.indexCategoriesInNfc(tenant, now, CATEGORY_REKEY_ROWS, rekeyUntil)).rekeyed;
    } catch (e) {
      failed('category index re-keying failed', tenant, e);
    } finally {
      rekeyLeft -= performance.now() - rekeyStart;
    }
  }
  // Every tenant has had its turn: those whose erasure sweeps their share cut short go on with the time left.
  for (const tenant of erasuresCutShort) {
    if (performance.now() >= passUntil) break;
    await sweepTenant(tenant, passUntil);
  }
  const next = deferred[0] ?? order[1] ?? order[0];
  if (next !== undefined) await saveCursor(next);
  const result = { requeued, rebuilds, backlogged: embeddings.backlogged, segments, folded, scheduled, interrupted, unsent, promoted, swept, deferred };
  if (requeued || rebuilds.length || segments || folded || scheduled.length || interrupted.length || unsent.length || promoted.length || swept || deferred.length) logger.info('maintenance', result);
  if (rekeyed) logger.info('category index re-keyed in NFC', { items: rekeyed });
  return result;
}

/**
 * Where in `tenants` (sorted, as listed) the pass starts: at the cursor's tenant, or the first after
 * it where that one is gone; a minute's turn round the list where the cursor cannot be read.
 */
async function startOf(cursor: PassCursor, tenants: readonly string[], now: number): Promise<number> {
  try {
    const next = await cursor.get();
    if (next === undefined) return 0;
    const at = tenants.findIndex((t) => t >= next);
    return Math.max(at, 0);
  } catch (e) {
    logger.error('maintenance cursor not read', { error: errorMessage(e) });
    return Math.floor(now / 60);
  }
}

/** `list` from its `turn`-th element (modulo its length) round to the one before it. */
function rotated<T>(list: readonly T[], turn: number): T[] {
  if (list.length === 0) return [];
  const at = ((turn % list.length) + list.length) % list.length;
  return [...list.slice(at), ...list.slice(0, at)];
}
