import { blobs } from '#shared/blob';
import { stores } from '#shared/data/index';
import { decideAutoPromotion } from '#shared/domain/automation';
import { runTraining } from '#shared/recs/trainer';
import { sqsWorker } from '#shared/workers-runtime';

/** The training queue's worker: one run per message; a redelivered message for a started run does nothing. */
export const handler = sqsWorker(async (job) => {
  if (job.type !== 'train') throw new Error(`The training worker does not take ${job.type} jobs`);
  const s = stores();
  await runTraining({ console: s.console, events: s.events, items: s.items, blobs: blobs() }, job.tenant, job.job_name);
  // A completed run's template may promote its version (once; a redelivered message decides nothing new).
  await decideAutoPromotion(s.console, job.tenant, job.job_name);
});
