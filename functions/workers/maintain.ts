import { blobs } from '#shared/blob';
import { refreshSegmentSizes, PASS_EVENT_BUDGET } from '#shared/control/segment-size';
import { segmentEvents, stores } from '#shared/data/index';
import { jobs } from '#shared/jobs';
import { logger } from '#shared/observability';
import { sweep } from '#shared/search/indexer';

/**
 * Scheduled (every minute on AWS; a timer locally): re-queues lagging embeddings, requests index
 * builds, refreshes segment size estimates.
 */
export const handler = async (): Promise<{ requeued: number; rebuilds: string[]; backlogged: boolean; segments: number }> => {
  const s = stores();
  const result = await sweep({ items: s.items, credentials: s.credentials, blobs: blobs(), queue: jobs() }, Number(process.env.EMBED_GRACE_SECONDS ?? 60));
  const budget = { events: PASS_EVENT_BUDGET };
  const now = Math.floor(Date.now() / 1000);
  let segments = 0;
  for (const tenant of await s.credentials.listTenants()) segments += await refreshSegmentSizes({ console: s.console, events: segmentEvents() }, tenant, now, budget);
  if (result.requeued || result.rebuilds.length || segments) logger.info('maintenance', { ...result, segments });
  return { ...result, segments };
};
