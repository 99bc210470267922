import { createHash } from 'node:crypto';
import { nowMs, nowSeconds } from '../clock.ts';
import { DeadlinePassed } from '../deadline.ts';
import { serviceBusy } from '../data/busy.ts';
import { logger } from '../observability.ts';
import { withRetry } from '../retry.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { workers } from '../queue/workers.ts';
import type * as S from '../schemas/console.ts';
import type { z } from 'zod/mini';
import { newId, notFound, recordPage, storedBefore, type ConsoleRecord, type ConsoleStore } from './console-records.ts';
import { platformList } from './present.ts';
import { errorMessage, InvalidInput, PreconditionFailed } from './errors.ts';
import { findTemplate, type Template } from './templates.ts';
import type { ModelVersion } from './model-versions.ts';
import type { IdPlan } from './types.ts';

/*
 * Training runs of a template: queued, run by the training worker, stopped on request. The API
 * calls a run a training job (`job_name`, /api/training-jobs) and stores it as kind `job`.
 */

export type TrainingRunStatus = (typeof S.JOB_STATUSES)[number];
export interface TrainingRun extends ConsoleRecord {
  job_name: string;
  template_id: number;
  options: S.TrainingOptions;
  status: TrainingRunStatus;
  progress: number;
  created: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  model_version: number | null;
  metrics: Record<string, number> | null;
  /** A run a template's schedule started: the due time it was started for. */
  scheduled_at?: number;
  /**
   * Internal, not shown: set by the trainer (from InProgress, only if no stop came first) once
   * it begins storing this version. From then on a stop is refused, so a run answered `Stopping`
   * never ends `Completed`.
   */
  storing_version?: number;
  /**
   * Internal, not shown: when (Unix seconds) the trainer wrote `storing_version`. The maintenance
   * pass's end of a run under a claim its task never confirmed (`sweepTaskRuns`), whose task may
   * still be storing that version, waits STORING_GRACE_SECONDS from it.
   */
  _storing_since?: number;
  /**
   * Internal, not shown: set (only while Queued, once) by the training worker that hands the run
   * to a container task (shared/recs/launcher.ts), so a redelivered message starts no second one.
   */
  task?: RunTask;
  /**
   * Internal, not shown: when the run was stored Queued, until its message was sent (`queueRun`).
   * A run still marked a while later was stored by a request stopped before it sent it (a
   * timeout, a crash): the maintenance pass sends it (`sweepTaskRuns`), as does the request's
   * retry under its Idempotency-Key. Until 2026-12-05 such a run stayed Queued for good. Set
   * again when a run that met a busy service is queued again (`requeueBusyRun`), or before it
   * started (`deferBusyStart`): the pass sends it.
   */
  _unsent_since?: number | null;
  /**
   * Internal, not shown: how many times the run was queued again because a service it needs was
   * busy (`requeueBusyRun`; before it started, `deferBusyStart`), at most BUSY_RETRIES; absent until the first.
   */
  _busy_retries?: number;
  /**
   * Internal, not shown: the token of the attempt that started the run (its trainer's, set with
   * InProgress). The trainer's writes of progress and of its storing mark, and its Stopped end,
   * hold it, so a late write of an attempt that is over changes nothing (`runTraining`).
   */
  _attempt?: string;
}
/** A run handed to a container task: the launcher, when it was claimed, and the task once started. */
export interface RunTask {
  runner: string;
  claimed_at: number;
  /** The task's id (ECS task ARN, local process id) once it started. */
  ref?: string;
  /**
   * When (Unix seconds) the maintenance pass last sent the run's message for this claim, left
   * unconfirmed (`sweepTaskRuns`): not sent again for UNCONFIRMED_CLAIM_SECONDS from it.
   */
  sent_at?: number;
}

export const trainingRunName = (id: number) => `train-${id}`;

/**
 * The idempotency token of a run's task: one per run and attempt (ECS RunTask takes up to 64
 * characters, and answers a token's first task for 24 hours): a run queued again after a busy
 * service (`busyRetries`, requeueBusyRun, deferBusyStart) starts a new task, not the stopped one
 * its token named. The task is handed it (TRAINING_TASK_TOKEN), and starts its run only while the
 * run's retries still make it (runTraining): a task of a claim dropped since starts nothing.
 */
export const taskToken = (tenant: string, jobName: string, busyRetries = 0) =>
  createHash('sha256')
    .update(busyRetries ? `${tenant}\n${jobName}\n${busyRetries}` : `${tenant}\n${jobName}`)
    .digest('hex')
    .slice(0, 64);
export const trainingRunId = (name: string) => Number(name.slice('train-'.length));

export async function startTraining(c: ConsoleStore, queue: WorkQueue, tenant: string, b: S.TrainingJobBody, ids?: IdPlan) {
  const done = await storedBefore<TrainingRun>(c, tenant, 'job', ids);
  // The failed attempt stored it, perhaps not sent it: sent (a second message does nothing).
  if (done) return typeof done._unsent_since === 'number' && done.status === 'Queued' ? await sendOrLeave(c, queue, tenant, done) : done;
  const t = await findTemplate(c, tenant, b.template_id);
  if (t.status !== 'Published') throw new PreconditionFailed(`Template ${t.id} is a Draft: publish it (PATCH {"status":"Published"}) before training from it.`);
  const id = await newId(() => c.nextId(tenant, 'job'), ids);
  try {
    return await queueRun(c, queue, tenant, t, id, b.options);
  } catch (e) {
    // Stored Queued but not sent (the queue refused its message, or its log line failed): the
    // maintenance pass sends it once UNSENT_RUN_GRACE_SECONDS have passed (`sweepTaskRuns`), so the
    // run is answered as stored, Queued. Until 2026-12-07 it was ended Failed ("Start a new run")
    // and the request answered 5xx, though the pass had sent such runs since 2026-12-05: a keyed
    // retry, which the 503 invites, then answered 202 with a Failed run. Not stored: the error.
    // A read refused at the request's deadline: its time ran out, answered as such (a 503 to retry),
    // not as the error the call before met (a queue's refusal once the deadline passed was a 500).
    const stored = await c.get<TrainingRun>(tenant, 'job', id).catch((r: unknown) => {
      if (r instanceof DeadlinePassed) throw r;
      return undefined;
    });
    if (stored?.status !== 'Queued' || typeof stored._unsent_since !== 'number') throw e;
    unsent(tenant, stored, e);
    return stored;
  }
}

/** A stored run's message sent (`sendRun`), or, when the queue refuses it, the run left Queued and unsent for the maintenance pass (`sweepTaskRuns`). */
async function sendOrLeave(c: ConsoleStore, queue: WorkQueue, tenant: string, run: TrainingRun): Promise<TrainingRun> {
  try {
    return await sendRun(c, queue, tenant, run);
  } catch (e) {
    unsent(tenant, run, e);
    return run;
  }
}

const unsent = (tenant: string, run: TrainingRun, e: unknown) =>
  logger.warn('training run stored; its message not sent (the maintenance pass sends it)', { tenant, run: run.job_name, error: errorMessage(e) });

/**
 * Stores run `id` of a template as Queued (unless a record with that id exists: a scheduled run
 * whose pass is finished by another stores it once) and sends it to the training queue (a
 * second message for a run does nothing: only a Queued run starts).
 */
export async function queueRun(c: ConsoleStore, queue: WorkQueue, tenant: string, t: Template, id: number, options: S.TrainingOptions, scheduledAt?: number) {
  const run: TrainingRun = {
    id,
    job_name: trainingRunName(id),
    template_id: t.id,
    options,
    status: 'Queued',
    progress: 0,
    created: nowSeconds(),
    started_at: null,
    finished_at: null,
    error: null,
    model_version: null,
    metrics: null,
    ...(scheduledAt !== undefined ? { scheduled_at: scheduledAt } : {}),
    _unsent_since: nowSeconds(),
  };
  if (await c.replace(tenant, 'job', run, 'new')) {
    const by = scheduledAt !== undefined ? `, by its schedule (due ${new Date(scheduledAt * 1000).toISOString()})` : '';
    await c.appendLog(tenant, id, [{ ts: nowSeconds(), message: `Queued: template ${t.id} (${t.name})${by}, options ${JSON.stringify(options)}` }]);
    return await sendRun(c, queue, tenant, run);
  }
  // Stored before (a scheduled run whose pass stopped, finished by another): sent as it is stored,
  // its own mark cleared, and only while still Queued and unsent (until 2026-12-05 the clear
  // compared this call's mark, failed, and the maintenance pass sent the run a second time).
  const stored = await c.get<TrainingRun>(tenant, 'job', id);
  if (!stored) return run;
  return stored.status === 'Queued' && typeof stored._unsent_since === 'number' ? await sendRun(c, queue, tenant, stored) : stored;
}

/**
 * Sends a stored run's message, then clears its `_unsent_since` mark (only while it holds the one
 * read). The clear is best-effort: once the message is sent, a mark left only costs the
 * maintenance pass's harmless second send (until 2026-12-05 a failed clear failed the request, and
 * `startTraining` ended a run Failed whose message was on the queue).
 */
export async function sendRun(c: Pick<ConsoleStore, 'update'>, queue: WorkQueue, tenant: string, run: TrainingRun): Promise<TrainingRun> {
  await queue.send('training', [{ type: 'train', tenant, job_name: run.job_name }]);
  if (typeof run._unsent_since === 'number') {
    await c.update(tenant, 'job', run.id, { _unsent_since: null }, { _unsent_since: run._unsent_since }).catch((e: unknown) => {
      logger.warn('training run sent; its unsent mark not cleared (the maintenance pass may send it again)', { tenant, run: run.job_name, error: errorMessage(e) });
    });
  }
  return { ...run, _unsent_since: null };
}

/** How long a run may stay stored and unsent before the maintenance pass sends it: its request's time and more. */
export const UNSENT_RUN_GRACE_SECONDS = 120;

export const trainingRunView = ({ id: _id, storing_version: _s, _storing_since: _ss, task: _t, _unsent_since: _u, _busy_retries: _b, _attempt: _a, ...j }: TrainingRun) => ({
  ...j,
  scheduled_at: j.scheduled_at ?? null,
});
/** The id of the run a name can belong to: exactly the name trainingRunName gives it, else none. */
const trainingRunIdOf = (name: string): number | undefined => {
  const id = trainingRunId(name);
  return Number.isSafeInteger(id) && id > 0 && trainingRunName(id) === name ? id : undefined;
};
/** A run's name (`job_name`) is opaque to a client: any name that is not one of the tenant's runs is not found. */
export async function getTrainingRun(c: ConsoleStore, tenant: string, name: string) {
  const id = trainingRunIdOf(name);
  const j = id === undefined ? undefined : await c.get<TrainingRun>(tenant, 'job', id);
  if (!j) throw notFound('training job', name.length > 64 ? `${name.slice(0, 64)}...` : name);
  return j;
}
export const trainingRunResource = async (c: ConsoleStore, tenant: string, name: string) => trainingRunView(await getTrainingRun(c, tenant, name));
/** The statuses of runs waiting or running: those `ConsoleStore.activeRunsIn` reads. */
export const ACTIVE_STATUSES: ReadonlySet<TrainingRunStatus> = new Set(['Queued', 'InProgress', 'Stopping']);

/**
 * Newest first; `starting_after` names the last run of the page before (its `job_name`); with
 * `status`, only the runs in it. A status of runs waiting or running (the console's Overview counts
 * them) reads a page of that status's runs in their index, whatever the tenant's history (until
 * 2026-12-05 such a page filtered the whole history, which a few matches did not cut short, then
 * read every run waiting or running, one GetItem each, whatever its status); an ended status
 * filters the runs newest first, a page at a time.
 */
export async function listTrainingRuns(c: ConsoleStore, tenant: string, q: z.output<typeof S.jobPageQuery>) {
  const after = q.starting_after === undefined ? undefined : trainingRunIdOf(q.starting_after);
  if (q.starting_after !== undefined && after === undefined) throw new InvalidInput('Invalid query parameters.', { starting_after: ['must be the job_name of a training job'] });
  if (q.status !== undefined && ACTIVE_STATUSES.has(q.status)) {
    const page = await c.activeRunsIn<TrainingRun>(tenant, q.status, { limit: q.limit, before: after });
    if (page) {
      const last = page.rows.at(-1);
      return platformList(page.rows.map(trainingRunView), { hasMore: page.hasMore, cursor: last ? trainingRunName(last.id) : null });
    }
    // Not indexed yet (until 2026-12-05 such a list answered none of the runs stored before the
    // index until the tenant's first maintenance upkeep): the runs filtered newest first, as an
    // ended status is.
  }
  const where = q.status === undefined ? undefined : { status: q.status };
  return recordPage(c, tenant, 'job', { limit: q.limit, after, newestFirst: true, where }, trainingRunView, (r: TrainingRun) => trainingRunName(r.id));
}
/**
 * Queued runs stop at once; running ones at the trainer's next check, leaving no version (the
 * trainer stores a version only if it marks the run before a stop does). Each change is
 * conditional on the status read: when the run moved meanwhile (the trainer took it up, or it
 * ended), the run is read again and the stop decided on what it is now.
 */
export async function stopTrainingRun(c: ConsoleStore, tenant: string, name: string) {
  // Every retry follows a change of status, and a run changes status at most MOST_STATUS_CHANGES times.
  for (let attempt = 0; attempt < MOST_STATUS_CHANGES + 2; attempt++) {
    const j = await getTrainingRun(c, tenant, name);
    if (j.status === 'Queued') {
      if (!(await c.update(tenant, 'job', j.id, { status: 'Stopped', finished_at: nowSeconds() }, { status: 'Queued' }))) continue;
      await c.appendLog(tenant, j.id, [{ ts: nowSeconds(), message: 'Stopped before it started' }]);
    } else if (j.status === 'InProgress') {
      if (j.storing_version !== undefined) throw new PreconditionFailed(`Training job ${name} is storing its new version and can no longer be stopped.`);
      if (!(await c.update(tenant, 'job', j.id, { status: 'Stopping' }, { status: 'InProgress', storing_version: undefined }))) continue;
      await c.appendLog(tenant, j.id, [{ ts: nowSeconds(), message: 'Stop requested' }]);
    } else if (j.status !== 'Stopping') {
      // The spec's guard is "run in progress": an ended run (Stopped too) is refused; a repeated
      // stop while one waits for the trainer answers the Stopping run.
      throw new PreconditionFailed(`Training job ${name} is ${j.status}; only a Queued or InProgress run can be stopped.`);
    }
    return trainingRunResource(c, tenant, name);
  }
  throw new PreconditionFailed(`Training job ${name} kept changing; retry.`);
}
/**
 * Times a run is queued again after a service it needs stayed busy through the client's retries
 * (`requeueBusyRun`); the next busy failure ends it Failed, saying so.
 */
export const BUSY_RETRIES = 3;

/**
 * The most times a run changes status: Queued → InProgress → Stopping → Stopped, and InProgress →
 * Queued → InProgress for each busy retry (a loop retried on each change is bounded by it).
 */
export const MOST_STATUS_CHANGES = 3 + 2 * BUSY_RETRIES;

/** How a busy write of a run's requeue or deferral is tried again (after the client's own retries). */
const BUSY_WRITE_RETRY = { attempts: 4, baseMs: 1000, maxMs: 8000, jitter: 'full' } as const;

/**
 * A run whose trainer met a busy service (throttled after the client's retries: `serviceBusy`)
 * before it stored a version: queued again from the start, as it was acknowledged (202, Queued),
 * instead of ending Failed for a moment's load. It goes back to Queued (progress 0, `started_at`
 * null), its container task claim, storing mark and attempt token dropped, marked unsent, so the maintenance pass
 * sends its message once UNSENT_RUN_GRACE_SECONDS have passed (`sweepTaskRuns`): the service has
 * had minutes to recover, and the new attempt has its worker's whole time. Only from InProgress
 * (a stop that came first wins: the caller ends the run Stopped) and only while the run has been
 * queued again fewer than BUSY_RETRIES times: false when it was not (the caller ends it Failed).
 * `job` names the run; `attempt` is the token (`_attempt`) of the attempt that met the busy
 * service, its trainer's (by default the one `job` holds): the run is read afresh, and queued again
 * only while it is still that attempt's, its retries counted as they are now (until 2026-12-07 the
 * count was its trainer's read before its start, and a run another delivery deferred in between,
 * `deferBusyStart`, had its requeue refused and ended Failed at its first busy attempt; nor did the
 * change hold the attempt). A busy read or write of the change is tried again a few times (after
 * the client's own retries) before it is given up, thrown. With `handBack`, the same change for a
 * container task that could not record its id on its run (its claim unconfirmed: the task sweep
 * could not follow it), which hands the run back at its start rather than train it: it counts as
 * one of the same BUSY_RETRIES (a new retry makes a new task token, so ECS starts a new task), and
 * is due at the next pass (no wait: nothing is busy); its log line says why. With `busy` too (the
 * task's read back of its run was refused for load past its retries), it waits
 * UNSENT_RUN_GRACE_SECONDS as a busy requeue does: until 2026-12-08 it was due at the next pass,
 * the table still busy.
 */
export async function requeueBusyRun(
  c: Pick<ConsoleStore, 'get' | 'update' | 'appendLog'>,
  tenant: string,
  job: TrainingRun,
  why: string,
  attempt = job._attempt,
  opts: { handBack?: boolean; busy?: boolean } = {},
): Promise<boolean> {
  let done = 0;
  // Due at the next pass: a hand-back with nothing busy, nothing to wait out.
  const dueNow = opts.handBack === true && opts.busy !== true;
  // Once the change was sent, the retry count it held. A change that landed but whose answer was
  // lost (the client sent it again and its own condition refused that, or an error came back after
  // it landed) is known by the run counting more retries than that: nothing else counts one of a
  // run InProgress under this attempt (`deferBusyStart` counts a Queued run's only). Until
  // 2026-12-07 such a requeue answered false: its trainer found the run moved on and left it
  // quietly, the run queued again with no line of its log saying so or why.
  let sent: number | undefined;
  /** When that change was sent (Unix ms): its log line is placed there (below). */
  let sentMs = 0;
  const landed = (run: TrainingRun | undefined) => sent !== undefined && (run?._busy_retries ?? 0) > sent;
  const requeued = await withRetry(BUSY_WRITE_RETRY, async () => {
    try {
      const run = await c.get<TrainingRun>(tenant, 'job', job.id);
      if (landed(run)) return { value: true };
      if (run?.status !== 'InProgress' || run._attempt !== attempt) return { value: false };
      done = run._busy_retries ?? 0;
      if (done >= BUSY_RETRIES) return { value: false };
      const queued = {
        status: 'Queued',
        progress: 0,
        started_at: null,
        task: undefined,
        storing_version: undefined,
        _storing_since: undefined,
        _attempt: undefined,
        _unsent_since: dueNow ? nowSeconds() - UNSENT_RUN_GRACE_SECONDS : nowSeconds(),
        _busy_retries: done + 1,
      };
      sent = done;
      sentMs = nowMs();
      if (await c.update(tenant, 'job', job.id, queued, { status: 'InProgress', _attempt: attempt, _busy_retries: run._busy_retries })) return { value: true };
      return { value: landed(await c.get<TrainingRun>(tenant, 'job', job.id)) };
    } catch (e) {
      return { failure: e, retryable: serviceBusy(e) };
    }
  });
  if (!requeued) return false;
  const message = opts.handBack
    ? `Its container task could not record its id on the run (${why}), so the run could not be followed were that task to stop: handed back, to start over with a new task ${dueNow ? 'at the next maintenance pass' : 'in a few minutes (the table was busy)'} (retry ${done + 1} of ${BUSY_RETRIES})`
    : `A service the run needs was busy (${why}): queued again to start over in a few minutes (retry ${done + 1} of ${BUSY_RETRIES}; its progress starts again from 0)`;
  // Best-effort: the run is queued again whether or not its log says so. Placed, and stamped, at
  // the time its change was sent: a change that landed but whose answer was lost is learnt of on a
  // retry, seconds later, and a stop of the Queued run may have ended it meanwhile (until
  // 2026-12-07 the line then followed its `Stopped before it started`).
  await c.appendLog(tenant, job.id, [{ ts: Math.floor(sentMs / 1000), message }], { atMs: sentMs }).catch(() => undefined);
  if (opts.handBack) logger.warn('training run handed back by its container task: it could not record its id', { tenant, run: job.job_name, retry: done + 1, error: why });
  else logger.warn('training run queued again: a service was busy', { tenant, run: job.job_name, retry: done + 1, error: why });
  return true;
}

/**
 * A training message whose handling met a busy service (throttled after the client's retries:
 * `serviceBusy`) before its run started: the worker's read of the run, its placement on a container
 * task (`placeRun`), the start's update to InProgress; in a task, its own read or start. Thrown, the
 * message would come again only after the queue's visibility timeout (90 minutes), and its last
 * delivery would end the run Failed; the task's run would be ended Failed by the task sweep.
 * Instead the run, still Queued, is marked unsent, as a create whose message the queue refused
 * (`startTraining`): the maintenance pass sends its message once UNSENT_RUN_GRACE_SECONDS have
 * passed (`sweepTaskRuns`), and this message (or task) is done with. It counts as one of the run's
 * BUSY_RETRIES (`_busy_retries`, as `requeueBusyRun`: a run of a container task then gets a new
 * task, `taskToken`); past them, it ends the run Failed (`busyFailure`). Only a run that is the
 * caller's: in the worker, one no task has claimed (a claimed run is its task's, which the
 * message's next delivery or the task sweep follow); with `asTask`, one claimed for a container
 * task whose claim is not confirmed, the claim dropped: in the task (it exits), or in the worker
 * whose launch of the task was refused for load, no task started (`placeRun`, LaunchThrottled:
 * only its own `claim`, still unconfirmed). A task passes its `token` (TRAINING_TASK_TOKEN) and
 * its own `ref`: only a claim of its attempt (the run's retries still make that token), not
 * another task's confirmed one, is its to drop (until 2026-12-07 a stray task of a claim dropped
 * since, throttled, dropped the next task's claim, spending a retry, or at the last ended the run
 * Failed). Answers whether it marked or ended the run; false for an
 * error that is not busy, a run not as above, or when its own read or write failed (the caller
 * goes on as before: thrown). Never throws.
 */
export async function deferBusyStart(
  c: Pick<ConsoleStore, 'get' | 'update' | 'appendLog'>,
  tenant: string,
  jobName: string,
  error: unknown,
  opts: { asTask?: boolean; claim?: RunTask; token?: string | undefined; ref?: string | undefined } = {},
): Promise<boolean> {
  if (!serviceBusy(error)) return false;
  const why = errorMessage(error);
  try {
    return await withRetry<boolean>(BUSY_WRITE_RETRY, async () => {
      try {
        return { value: await deferOnce(c, tenant, jobName, why, opts.asTask ?? false, opts) };
      } catch (e) {
        return { failure: e, retryable: serviceBusy(e) };
      }
    });
  } catch (e) {
    logger.warn('training run not deferred after a busy service (its message fails as before)', { tenant, run: jobName, error: why, deferral: errorMessage(e) });
    return false;
  }
}

async function deferOnce(
  c: Pick<ConsoleStore, 'get' | 'update' | 'appendLog'>,
  tenant: string,
  jobName: string,
  why: string,
  asTask: boolean,
  { claim: mine, token, ref }: { claim?: RunTask; token?: string | undefined; ref?: string | undefined },
): Promise<boolean> {
  const job = await c.get<TrainingRun>(tenant, 'job', trainingRunId(jobName));
  if (job?.status !== 'Queued' || (asTask ? !job.task : job.task)) return false;
  // A task's: only a claim of its own attempt, not another task's confirmed one.
  if (token !== undefined && token !== taskToken(tenant, jobName, job._busy_retries)) return false;
  if (ref !== undefined && job.task?.ref !== undefined && job.task.ref !== ref) return false;
  // Only that claim, still unconfirmed (a later delivery's claim, or its task's, is not the caller's to drop).
  if (mine && (job.task?.runner !== mine.runner || job.task.claimed_at !== mine.claimed_at || job.task.ref !== undefined)) return false;
  const claim = job.task ? { 'task.runner': job.task.runner, 'task.claimed_at': job.task.claimed_at, 'task.ref': job.task.ref } : { task: undefined };
  const expect = { status: 'Queued', _busy_retries: job._busy_retries, ...claim };
  const done = job._busy_retries ?? 0;
  const log = (message: string) => c.appendLog(tenant, job.id, [{ ts: nowSeconds(), message }]).catch(() => undefined);
  if (done >= BUSY_RETRIES) {
    const failed = busyFailure(why);
    if (!(await c.update(tenant, 'job', job.id, { status: 'Failed', finished_at: nowSeconds(), error: failed }, expect))) return false;
    await log(`Failed: ${failed}`);
    return true;
  }
  if (!(await c.update(tenant, 'job', job.id, { _unsent_since: nowSeconds(), _busy_retries: done + 1, task: undefined }, expect))) return false;
  // Best-effort: the run is marked whether or not its log says so.
  await log(`A service the run needs was busy before it started (${why}): its start is tried again in a few minutes (retry ${done + 1} of ${BUSY_RETRIES})`);
  logger.warn('training run to be sent again: a service was busy before it started', { tenant, run: jobName, retry: done + 1, error: why });
  return true;
}

/** The error of a run that met a busy service once more after BUSY_RETRIES retries. */
export const busyFailure = (why: string) =>
  `A service the run needs stayed busy (throttled) through ${BUSY_RETRIES + 1} attempts of the run; nothing was stored. Start a new run once the load has eased. Last error: ${why}`;

/** The error of a run whose container task could not record its id once more after BUSY_RETRIES retries (`requeueBusyRun` with `handBack`). */
export const handBackFailure = (why: string) =>
  `The run's container task could not record its id on the run (${why}), and the run had already been queued again ${BUSY_RETRIES} times; nothing was stored. Start a new run.`;

/** The training worker's time limit (its Lambda's timeout). */
const WORKER_SECONDS = workers.find((w) => w.handler === 'workers/train')?.timeoutSeconds ?? 900;
/**
 * A run of the training worker (no container task's) still InProgress or Stopping this long after
 * it started has lost its invocation: its time limit and a minute. Its message coming again then
 * (`runTraining`), or the maintenance pass (`sweepTaskRuns`), ends it as far as it got.
 */
export const WORKER_RUN_LOST_SECONDS = WORKER_SECONDS + 60;
/**
 * Why such a run is ended (its log line and its error, `endInterruptedRun`): it was not ended
 * within the worker's time limit, named (until 2026-12-07 only "its worker stopped", which left a
 * run that trains longer than the limit allows, its thread ended there, with no word of why).
 */
export const WORKER_RUN_LOST_REASON = `its worker stopped: the run had not ended within the training worker's time limit of ${WORKER_SECONDS % 60 === 0 ? `${WORKER_SECONDS / 60} minutes` : `${WORKER_SECONDS} seconds`}`;

/** A run's update once its version `v` is stored: Completed with it (by the trainer, or by whatever ends a run that stored one). */
export const completedWith = (v: Pick<ModelVersion, 'version' | 'metrics'>) => ({ status: 'Completed', progress: 1, finished_at: nowSeconds(), model_version: v.version, metrics: v.metrics }) as const;

/**
 * Ends a run whose worker or container task is gone without ending it, as far as it got: a run
 * asked to stop is Stopped; one that had stored its version (`storing_version` names a version
 * that exists) is Completed with it; any other is Failed, saying `why` (what stopped it).
 * Conditional on what was read (status, storing mark, task claim, the attempt's start), so a run
 * that ended or moved meanwhile keeps what it has; `held` adds to that condition (the sweep of a
 * run under an unconfirmed claim holds the claim and the attempt read). Answers the status it
 * ended with, or null when it was not ended.
 */
export async function endInterruptedRun(
  c: Pick<ConsoleStore, 'get' | 'update' | 'appendLog'>,
  tenant: string,
  job: TrainingRun,
  why: string,
  held: Record<string, unknown> = {},
): Promise<TrainingRunStatus | null> {
  const log = (message: string) => c.appendLog(tenant, job.id, [{ ts: nowSeconds(), message }]);
  if (job.status === 'Stopping') {
    if (!(await c.update(tenant, 'job', job.id, { status: 'Stopped', finished_at: nowSeconds() }, { ...held, status: 'Stopping' }))) return null;
    await log(`Stopped (${why})`);
    return 'Stopped';
  }
  if (job.status !== 'InProgress' && job.status !== 'Queued') return null;
  const v = job.storing_version;
  const stored = v === undefined ? undefined : await c.get<ModelVersion>(tenant, 'model', v);
  const error = `The run was interrupted before it stored a version (${why}); nothing was stored. Start a new run.`;
  const ended = stored ? completedWith(stored) : { status: 'Failed' as const, finished_at: nowSeconds(), error };
  // InProgress: this attempt only (its `started_at`): a run queued again and started anew since it
  // was read (`requeueBusyRun`) is another attempt's, not this one's to end.
  const attempt = job.started_at !== null ? { started_at: job.started_at } : {};
  // Queued: with the task claim read (none: still none; `task.ref` absent alone also held for a
  // claim a delivery at once took, its task being started, until 2026-12-07).
  const claim = job.task ? { 'task.ref': job.task.ref } : { task: undefined };
  const expect = { ...held, ...(job.status === 'Queued' ? { status: 'Queued', ...claim } : { status: 'InProgress', storing_version: v, ...attempt }) };
  if (!(await c.update(tenant, 'job', job.id, ended, expect))) return null;
  await log(stored ? `Completed: version ${stored.version}` : `Failed: ${error}`);
  return ended.status;
}
/**
 * The last delivery of a run's training message failed (its queue dead-letters it now): a run
 * that never started, nor had a task launched for it (the task sweep follows those, Stopping ones
 * too), ends Failed, or Stopped when asked to stop, instead of staying Queued for good. A run InProgress is left to
 * its invocation (no redelivery follows this one: the maintenance pass ends it once past the
 * worker's time limit, `sweepTaskRuns`).
 */
export async function endUndeliveredRun(c: Pick<ConsoleStore, 'get' | 'update' | 'appendLog'>, tenant: string, jobName: string, why: string): Promise<TrainingRunStatus | null> {
  const job = await c.get<TrainingRun>(tenant, 'job', trainingRunId(jobName));
  // A run Stopping under a task claim is its task's to end (until 2026-12-07 it was ended Stopped
  // here while its task went on logging, as a delivery that found it Stopping did until 3ad183f9).
  if (!job || job.task !== undefined || !(job.status === 'Stopping' || job.status === 'Queued')) return null;
  return endInterruptedRun(c, tenant, job, why);
}
/**
 * A page of a run's log. While the run has not ended (Queued, InProgress, Stopping) the page
 * that reaches the end still has a `next_cursor`, after its last line: a reader follows the log
 * by asking with it again (it was null, and a reader could only start over from the first line).
 * The status is read before the lines, so a run that ended meanwhile is read to its last line.
 */
export async function trainingRunLogs(c: ConsoleStore, tenant: string, name: string, cursor: string | undefined, limit: number) {
  const j = await getTrainingRun(c, tenant, name);
  const running = ACTIVE_STATUSES.has(j.status);
  const page = await c.logs(tenant, j.id, cursor, limit);
  return { job_name: name, lines: page.lines, next_cursor: page.cursor ?? (running ? page.end : null) };
}
