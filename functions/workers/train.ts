import { blobs } from '#shared/blob';
import { config } from '#shared/config';
import { stores } from '#shared/data/index';
import { decideAutoPromotion } from '#shared/domain/automation';
import { placeRun, taskLauncher } from '#shared/recs/launcher';
import { runTraining } from '#shared/recs/trainer';
import { lastDelivery, sqsWorker } from '#shared/queue/sqs-worker';
import { queues } from '#shared/queue/workers';
import { deferBusyStart, endUndeliveredRun } from '#shared/domain/training-runs';

/**
 * The training queue's worker: one run per message; a redelivered message for a started run does
 * nothing. A tenant with at least TRAINING_TASK_MIN_EVENTS events has its run handed to a
 * container task (shared/recs/launcher.ts), which runs it and decides its auto-promotion.
 */
export const handler = sqsWorker(async (job, record) => {
  if (job.type !== 'train') throw new Error(`The training worker does not take ${job.type} jobs`);
  const s = stores();
  try {
    if ((await placeRun({ console: s.console, events: s.events }, job.tenant, job.job_name, { minEvents: config().training.taskMinEvents, launcher: taskLauncher() })) === 'task') return;
    await runTraining({ console: s.console, events: s.events, items: s.items, blobs: blobs() }, job.tenant, job.job_name);
  } catch (e) {
    // A busy service before the run started: marked for the maintenance pass to send again in a
    // few minutes, and this message done (not back after the 90-minute visibility timeout).
    if (await deferBusyStart(s.console, job.tenant, job.job_name, e)) return;
    // Its last delivery: a run that never started would stay Queued for good once the message is dead-lettered.
    if (lastDelivery(record, 'training')) await endUndeliveredRun(s.console, job.tenant, job.job_name, `its training message failed ${queues.training.maxReceiveCount} times: ${(e as Error).message}`);
    throw e;
  }
  // A completed run's template may promote its version (once; a redelivered message decides nothing new).
  await decideAutoPromotion(s.console, job.tenant, job.job_name);
});
