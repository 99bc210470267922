import type { BlobStore } from './blob.ts';
import { PASS_EVENT_BUDGET, type PassBudget, refreshSegmentSizes, type SegmentSizeDeps } from './control/segment-size.ts';
import type { ExposureStore } from './control/exposures.ts';
import type { Stores } from './data/index.ts';
import { decideAutoPromotion, startDueRuns } from './domain/automation.ts';
import { sweepErasures } from './domain/erasure.ts';
import { logger } from './observability.ts';
import type { WorkQueue } from './queue/messages.ts';
import { sweepTaskRuns, type TaskLauncher } from './recs/launcher.ts';
import { FOLD_PASS_BUDGET_MS, foldSearchCounts, type SearchLogStore } from './search/analytics.ts';
import { embeddingSweeper } from './search/indexer.ts';

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
  /** How long into the pass a tenant's work may still start (`PASS_BUDGET_MS`). */
  budgetMs?: number;
}

/**
 * How long into the pass (ms) a tenant's work may still start: the function has 60 s, and later
 * passes reach the tenants past it (each starts one tenant further on, a minute later). Until 2026-12-05 the embedding sweep went over every tenant first, unbounded, and a
 * pass that outlived its time was cut off part way through a tenant's work.
 */
export const PASS_BUDGET_MS = 40_000;

/**
 * The maintenance pass (every minute on AWS; a timer locally), as of `now`: re-queues lagging
 * embeddings, requests index builds, refreshes segment size estimates, folds searches into the
 * search analytics counters, starts templates' scheduled training runs that are due, ends
 * runs whose container task stopped without ending them, sends runs stored but never sent, and sweeps ended erasures (a second
 * look at the user's events, `sweepErasures`). One tenant's failure leaves the others'
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
  let swept = 0;
  const failed = (what: string, tenant: string, e: unknown) => logger.error(what, { tenant, error: e instanceof Error ? e.message : String(e) });
  // The search fold's time and the segment sizes' events are budgets shared by every tenant: each
  // minute's pass starts at the next tenant, so a tenant that spends one does not keep the same
  // tenants after it waiting every pass (until 2026-12-05 they went in the same order each time).
  for (const tenant of rotated(await s.credentials.listTenants(), Math.floor(now / 60))) {
    if (performance.now() >= passUntil) {
      deferred.push(tenant);
      continue;
    }
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
    try {
      folded += (await foldSearchCounts(deps.searchLog, tenant, now, foldUntil - performance.now())).searches;
    } catch (e) {
      failed('search analytics fold failed', tenant, e);
    }
    try {
      swept += await sweepErasures({ ...s, exposures: deps.exposures }, tenant, now);
    } catch (e) {
      failed('erasure sweep failed', tenant, e);
    }
    try {
      segments += await refreshSegmentSizes({ console: s.console, events: deps.segmentEvents }, tenant, now, budget);
    } catch (e) {
      failed('segment sizes failed', tenant, e);
    }
  }
  const result = { requeued, rebuilds, backlogged: embeddings.backlogged, segments, folded, scheduled, interrupted, unsent, swept, deferred };
  if (requeued || rebuilds.length || segments || folded || scheduled.length || interrupted.length || unsent.length || swept || deferred.length) logger.info('maintenance', result);
  return result;
}

/** `list` from its `turn`-th element (modulo its length) round to the one before it. */
function rotated<T>(list: readonly T[], turn: number): T[] {
  if (list.length === 0) return [];
  const at = ((turn % list.length) + list.length) % list.length;
  return [...list.slice(at), ...list.slice(0, at)];
}
