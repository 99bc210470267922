import { blobs } from '#shared/blob';
import { itemStore } from '#shared/data/index';
import { logger } from '#shared/observability';
import { buildIndex, embedItem } from '#shared/search/indexer';
import { embeddingProvider } from '#shared/search/providers';
import { workQueue } from '#shared/queue/messages';
import { sqsWorker } from '#shared/queue/sqs-worker';

/** The embedding queue's worker: embeds changed items, and builds a tenant's search index on request. */
export const handler = sqsWorker(async (job) => {
  if (job.type === 'embed') {
    const outcome = await embedItem(itemStore(), embeddingProvider(), job.tenant, job.item_id);
    logger.debug('embed', { tenant: job.tenant, item: job.item_id, outcome });
  } else if (job.type === 'build-index') {
    const pointer = await buildIndex(itemStore(), blobs(), embeddingProvider().dimensions, job.tenant, job.requested_at);
    logger.info(pointer.skipped ? 'index build skipped: a later build covers it' : 'index built', { tenant: job.tenant, items: pointer.items, builtAt: pointer.builtAt });
    // Vectors of another width (EMBEDDING_DIMENSIONS changed) are embedded again; the next build takes them.
    if (pointer.otherWidth.length) {
      logger.warn('items embedded at another width are embedded again', { tenant: job.tenant, items: pointer.otherWidth.length });
      await workQueue().send(
        'embedding',
        pointer.otherWidth.map((item_id) => ({ type: 'embed', tenant: job.tenant, item_id })),
      );
    }
  } else {
    throw new Error(`The embedding worker does not take ${job.type} jobs`);
  }
});
