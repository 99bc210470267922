import { blobs } from '#shared/blob';
import { nowSeconds } from '#shared/clock';
import { config } from '#shared/config';
import { refreshSegmentSizes, PASS_EVENT_BUDGET } from '#shared/control/segment-size';
import { searchLogStore, segmentEvents, stores } from '#shared/data/index';
import { startDueRuns } from '#shared/domain/automation';
import { sweepTaskRuns, taskLauncher } from '#shared/recs/launcher';
import { workQueue } from '#shared/queue/messages';
import { logger } from '#shared/observability';
import { FOLD_PASS_BUDGET_MS, foldSearchCounts } from '#shared/search/analytics';
import { sweep } from '#shared/search/indexer';
import * as z from 'zod/mini';

/** The schedule's event: the pass runs as of its `time` (a retried delivery decides as the first did). */
const scheduledEvent = z.object({ time: z.iso.datetime({ offset: true }) });

/**
 * Scheduled (every minute on AWS; a timer locally): re-queues lagging embeddings, requests index
 * builds, refreshes segment size estimates, folds searches into the search analytics counters,
 * starts templates' scheduled training runs that are due, and ends runs whose container task
 * stopped without ending them. The whole pass goes by the event's time (the clock's without one).
 */
export const handler = async (
  event?: unknown,
): Promise<{ requeued: number; rebuilds: string[]; backlogged: boolean; segments: number; folded: number; scheduled: string[]; interrupted: string[] }> => {
  const s = stores();
  const asOf = z.safeParse(scheduledEvent, event);
  const now = asOf.success ? Math.floor(Date.parse(asOf.data.time) / 1000) : nowSeconds();
  const result = await sweep({ items: s.items, credentials: s.credentials, blobs: blobs(), queue: workQueue() }, config().maintenance.embedGraceSeconds, now);
  const budget = { events: PASS_EVENT_BUDGET };
  let segments = 0;
  let folded = 0;
  const foldUntil = performance.now() + FOLD_PASS_BUDGET_MS;
  const scheduled: string[] = [];
  const interrupted: string[] = [];
  for (const tenant of await s.credentials.listTenants()) {
    // One tenant's failure leaves the others' runs alone; its due runs start at the next pass.
    try {
      for (const job of await startDueRuns({ console: s.console, queue: workQueue() }, tenant, now)) scheduled.push(`${tenant}/${job}`);
    } catch (e) {
      logger.error('scheduled runs failed', { tenant, error: e instanceof Error ? e.message : String(e) });
    }
    try {
      for (const job of await sweepTaskRuns({ console: s.console }, tenant, taskLauncher(), now)) interrupted.push(`${tenant}/${job}`);
    } catch (e) {
      logger.error('training task sweep failed', { tenant, error: e instanceof Error ? e.message : String(e) });
    }
    try {
      folded += (await foldSearchCounts(searchLogStore(), tenant, now, foldUntil - performance.now())).searches;
    } catch (e) {
      logger.error('search analytics fold failed', { tenant, error: e instanceof Error ? e.message : String(e) });
    }
    segments += await refreshSegmentSizes({ console: s.console, events: segmentEvents() }, tenant, now, budget);
  }
  if (result.requeued || result.rebuilds.length || segments || folded || scheduled.length || interrupted.length) logger.info('maintenance', { ...result, segments, folded, scheduled, interrupted });
  return { ...result, segments, folded, scheduled, interrupted };
};
