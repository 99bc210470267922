/**
 * A training run as a container task (shared/recs/launcher.ts): the same training code as the
 * training worker, for a tenant whose events are past what a Lambda invocation affords. The run
 * comes in TRAINING_TENANT and TRAINING_JOB_NAME (the ECS container's overrides; locally the
 * child process's environment). Its status, logs and progress go to the job as the worker's do;
 * then its template may promote the version. Exits 0 when the run ended (Completed, Failed on
 * its data, Stopped) or was queued again for a busy service (requeueBusyRun, deferBusyStart) or
 * handed back (its id could not be recorded on the run: requeueBusyRun with `handBack`), 1
 * when it failed otherwise (the run is marked Failed first, or, when it cannot tell whether it
 * stored its version, left InProgress for the task sweep to end once this task has exited).
 */
import * as z from 'zod/mini';
import { blobs } from '#shared/blob';
import { stores } from '#shared/data/index';
import { decideAutoPromotion } from '#shared/domain/automation';
import { deferBusyStart } from '#shared/domain/training-runs';
import { ownTaskRef, taskRunSchema } from '#shared/recs/launcher';
import { runTraining } from '#shared/recs/trainer';

const parsed = z.safeParse(taskRunSchema, process.env);
if (!parsed.success) {
  console.error(`train-task: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  process.exit(2);
}
const { TRAINING_TENANT: tenant, TRAINING_JOB_NAME: jobName, TRAINING_TASK_TOKEN: token } = parsed.data;
const s = stores();

let failure: unknown;
const ref = await ownTaskRef();
try {
  await runTraining({ console: s.console, events: s.events, items: s.items, blobs: blobs() }, tenant, jobName, { asTask: true, taskRef: ref, taskToken: token });
} catch (e) {
  // A busy service before the run started: the run is queued again for a new task (the maintenance
  // pass sends it in a few minutes), not ended Failed by the task sweep once this one exits. Only
  // this task's claim (its token's attempt, not another task's): a stray task drops no other's.
  if (!(await deferBusyStart(s.console, tenant, jobName, e, { asTask: true, token, ref }))) failure = e;
}
// Also after a failure: a run that stored its version before it failed ended Completed with it,
// and nothing else would decide its promotion (until 2026-12-04 it was never decided).
try {
  await decideAutoPromotion(s.console, tenant, jobName);
} catch (e) {
  failure ??= e;
}
if (failure !== undefined) {
  console.error(JSON.stringify({ level: 'ERROR', message: 'training task failed', tenant, job_name: jobName, error: String(failure) }));
  process.exit(1);
}
console.error(JSON.stringify({ level: 'INFO', message: 'training task ended', tenant, job_name: jobName }));
process.exit(0);
