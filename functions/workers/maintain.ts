import { blobs } from '#shared/blob';
import { stores } from '#shared/data/index';
import { jobs } from '#shared/jobs';
import { logger } from '#shared/observability';
import { sweep } from '#shared/search/indexer';

/** Scheduled (every minute on AWS; a timer locally): re-queues lagging embeddings, requests index builds. */
export const handler = async (): Promise<{ requeued: number; rebuilds: string[]; backlogged: boolean }> => {
  const s = stores();
  const result = await sweep({ items: s.items, credentials: s.credentials, blobs: blobs(), queue: jobs() }, Number(process.env.EMBED_GRACE_SECONDS ?? 60));
  if (result.requeued || result.rebuilds.length) logger.info('maintenance', result);
  return result;
};
