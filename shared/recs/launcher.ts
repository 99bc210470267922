/**
 * Where a training run runs: in the training worker (a Lambda: 15 minutes, 10 GB), or, for a
 * tenant with many events, as a container task running the same training code
 * (functions/workers/train-task.ts): an ECS Fargate task on AWS, a child process locally. The
 * worker decides by the tenant's event count and hands the run over; the task writes the run's
 * status, logs and progress as the worker would (runTraining), and decides auto-promotion.
 */
import { nowSeconds as now } from '../clock.ts';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import * as z from 'zod/mini';
import { AwsClient, AwsHttpError } from '../aws/signed-fetch.ts';
import { config, type TrainingTaskSettings } from '../config.ts';
import type { ConsoleStore } from '../domain/console-records.ts';
import {
  ACTIVE_STATUSES,
  deferBusyStart,
  endInterruptedRun,
  sendRun,
  taskToken,
  trainingRunId,
  UNSENT_RUN_GRACE_SECONDS,
  type RunTask,
  type TrainingRun,
  WORKER_RUN_LOST_REASON,
  WORKER_RUN_LOST_SECONDS,
} from '../domain/training-runs.ts';
import type { EventStore } from '../domain/types.ts';
import { spawnTask } from './task-spawner.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { logger } from '../observability.ts';
import { errorMessage } from '../domain/errors.ts';
import { withRetry } from '../retry.ts';

/**
 * What became of a task: still there (starting or running); stopped, with what stopped it; or
 * gone, unknown to its runner (ECS forgets a stopped task after an hour or so, and may not know
 * a task it just started), which is trusted only once the task has had time to start.
 */
export type TaskState = { state: 'running' } | { state: 'stopped' | 'gone'; reason: string };

/**
 * A launch its runner refused for load on every attempt (ECS RunTask answered ThrottlingException
 * each time): no task was started. `refusal` is the last refusal.
 */
export class LaunchThrottled extends Error {
  override name = 'LaunchThrottled';
  constructor(readonly refusal: unknown) {
    super(errorMessage(refusal));
  }
}

/**
 * Starts a run's task; resolves once it started (not when it ends) with the task's id. Rejects with
 * LaunchThrottled only when surely no task started.
 */
export interface TaskLauncher {
  /** `ecs` or `child-process`, as the run's log and record say. */
  readonly runner: string;
  /**
   * `token` is the same for every delivery of one attempt of a run (`taskToken`: a new one after
   * each busy retry): a launcher that can, starts one task per token.
   */
  launch(run: { tenant: string; jobName: string; token: string }): Promise<string>;
  /** Whether the task `ref` (as `launch` answered it) is still there. */
  inspect(ref: string): Promise<TaskState>;
}

/**
 * The tenant's event count as far as a decision needs it, in one query per write shard: the
 * highest event id (ids come from one counter per tenant, so it counts every event ever
 * stored, erased ones included: an estimate from above).
 */
export async function estimateEvents(events: Pick<EventStore, 'latest'>, tenant: string): Promise<number> {
  return (await events.latest(tenant, 1))[0]?.id ?? 0;
}

/** The decision: a run over a tenant of at least `minEvents` events runs as a task. */
export function runsAsTask(estimatedEvents: number, minEvents: number): boolean {
  return estimatedEvents >= minEvents;
}

/** A claim whose task never confirmed it started (the worker stopped between) is retried after this. */
export const UNCONFIRMED_CLAIM_SECONDS = 300;

/** The condition that the run holds this claim, its task not yet confirmed (field by field: see Expr.fields). */
const unconfirmed = (claim: RunTask) => ({ 'task.runner': claim.runner, 'task.claimed_at': claim.claimed_at, 'task.ref': undefined });

/**
 * Why a run that started under a claim its task never confirmed is ended by the maintenance pass
 * (`sweepTaskRuns`): its log line and its error (`endInterruptedRun`).
 */
export const UNCONFIRMED_TASK_LOST_REASON = `its training task never recorded its id, ${UNCONFIRMED_CLAIM_SECONDS / 60} minutes after the run started: it could not be followed, and was taken for stopped`;

/**
 * How long the maintenance pass leaves a run under an unconfirmed claim that is storing its
 * version (`storing_version`, written `_storing_since`) before it ends it from what is stored:
 * its task, which the pass cannot ask after, may still be writing the artifact and the version
 * record, and storing takes no longer than a training worker's whole run may (WORKER_RUN_LOST_SECONDS).
 */
export const STORING_GRACE_SECONDS = WORKER_RUN_LOST_SECONDS;

/** The idempotency token of a run's task (shared/domain/training-runs.ts, where the task's start checks it too). */
export { taskToken };

/**
 * Decides where the run goes and, for a task, starts it. Answers `worker` when the worker runs it
 * (runTraining decides the rest: a run that is not Queued is left as it is) and `task` when a task
 * has it. The task is claimed on the job first (only while Queued, only once: a conditional
 * update), so a redelivered message starts no second task; a claim whose task never confirmed
 * it started (the worker stopped in between) is retried after UNCONFIRMED_CLAIM_SECONDS with the
 * same token. A launch that fails ends the run Failed with the reason.
 */
export async function placeRun(
  deps: { console: Pick<ConsoleStore, 'get' | 'update' | 'appendLog'>; events: Pick<EventStore, 'latest'> },
  tenant: string,
  jobName: string,
  opts: { minEvents: number; launcher: TaskLauncher },
): Promise<'worker' | 'task'> {
  const c = deps.console;
  const id = trainingRunId(jobName);
  const job = await c.get<TrainingRun>(tenant, 'job', id);
  if (!job) return 'worker';
  const log = (message: string) => c.appendLog(tenant, id, [{ ts: now(), message }]);
  const token = taskToken(tenant, jobName, job._busy_retries);
  let claim = job.task;
  if (claim) {
    // Already a task's. Started again only if it never confirmed it started and the run has not.
    if (job.status !== 'Queued' || claim.ref !== undefined || now() - claim.claimed_at < UNCONFIRMED_CLAIM_SECONDS) return 'task';
    const again = { ...claim, claimed_at: now() };
    if (!(await c.update(tenant, 'job', id, { task: again }, { status: 'Queued', ...unconfirmed(claim) }))) return 'task';
    claim = again;
  } else {
    if (job.status !== 'Queued') return 'worker';
    const events = await estimateEvents(deps.events, tenant);
    if (!runsAsTask(events, opts.minEvents)) return 'worker';
    claim = { runner: opts.launcher.runner, claimed_at: now() };
    if (!(await c.update(tenant, 'job', id, { task: claim }, { status: 'Queued', task: undefined }))) {
      // The run moved meanwhile: claimed by another delivery (a task's), or stopped (nothing to run).
      return (await c.get<TrainingRun>(tenant, 'job', id))?.task ? 'task' : 'worker';
    }
    try {
      await log(`Runs as a container task (${opts.launcher.runner}): about ${events} events, at least ${opts.minEvents} run outside the training worker`);
    } catch (e) {
      // No task was started: the claim is dropped (best-effort), the run left as the message found
      // it, so its failure is handled as any before the run started (deferBusyStart, a next
      // delivery, endUndeliveredRun), not kept Queued under a claim nothing follows until it is
      // UNCONFIRMED_CLAIM_SECONDS old.
      await c.update(tenant, 'job', id, { task: undefined }, { status: 'Queued', ...unconfirmed(claim) }).catch(() => undefined);
      throw e;
    }
  }
  let ref: string;
  try {
    ref = await opts.launcher.launch({ tenant, jobName, token });
  } catch (e) {
    if (e instanceof LaunchThrottled) {
      // Refused for load, no task started: a busy start, as a busy table's or S3's before the run
      // starts (until 2026-12-07 it ended the run Failed, "could not be started"): its claim
      // dropped, the run is sent again by the maintenance pass in a few minutes for a new task (a
      // new token), counting as one of its BUSY_RETRIES (past them, Failed). Not deferred (the run
      // moved meanwhile, or the deferral's own writes failed), the claim stays unconfirmed, and
      // the pass sends the run again once it is UNCONFIRMED_CLAIM_SECONDS old (same token).
      // Another error may have left a task started (a 5xx, an answer lost): ended Failed as before.
      await deferBusyStart(c, tenant, jobName, e.refusal, { asTask: true, claim });
      return 'task';
    }
    const message = `The training task could not be started: ${errorMessage(e)}`;
    if (await c.update(tenant, 'job', id, { status: 'Failed', finished_at: now(), error: message }, { status: 'Queued' })) await log(`Failed: ${message}`);
    return 'task';
  }
  // Its line only when the run names this task: the write applied, or the task confirmed its claim
  // with its own id first (train-task.ts). Refused otherwise, the claim has moved on (the task gave
  // the run up for a busy service, dropping the claim; a later delivery claimed it again): until
  // 2026-12-07 the log said the task started all the same, of a run that no longer followed it.
  if ((await c.update(tenant, 'job', id, { task: { ...claim, ref } }, unconfirmed(claim))) || (await c.get<TrainingRun>(tenant, 'job', id))?.task?.ref === ref) {
    await log(`Training task started: ${ref}`);
  } else logger.warn('training task started for a claim that moved on meanwhile: its id not recorded', { tenant, run: jobName, task: ref });
  return 'task';
}

/**
 * The task's run, as its entry point (functions/workers/train-task.ts) reads it from the
 * environment (TRAINING_TENANT, TRAINING_JOB_NAME), validated here with zod: the inputs of one
 * run, set per task by its launcher, not settings of the service, so not in shared/config.ts.
 */
export const taskRunSchema = z.object({
  TRAINING_TENANT: z.string().check(z.minLength(1)),
  TRAINING_JOB_NAME: z.string().check(z.minLength(1)),
  /**
   * The token the task was launched with (`taskToken`): the task starts its run only while the run
   * is claimed for that token's attempt (runTraining). Absent from a task launched before it was
   * passed (a rolling deploy): the task then starts a run under any claim, as before.
   */
  TRAINING_TASK_TOKEN: z.optional(z.string().check(z.minLength(1))),
});

/** The answer of the ECS task metadata endpoint's `/task` that a task names itself by. */
const taskMetadata = z.object({ TaskARN: z.optional(z.string()) });

/**
 * How a task's read of its own id from the ECS task metadata endpoint is tried again: 3 attempts,
 * a second, then two, apart. Not at random: the endpoint is the task's own, with no herd of
 * callers to spread (until a review on 2026-12-08 full jitter drew each wait from 0 up, half of it
 * on average, and a draw near 0 asked again at once: a blip at the container's start then cost
 * the run one of its retries).
 */
const METADATA_RETRY = { attempts: 3, baseMs: 500, maxMs: 2000, jitter: 'none' } as const;

/**
 * A container task's own id as its launcher names it, for its run to confirm its claim with
 * (functions/workers/train-task.ts, runTraining's `taskRef`): on ECS the task's ARN, from the
 * container's task metadata endpoint (ECS_CONTAINER_METADATA_URI_V4 in `env`); locally `pid <n>`.
 * A request that fails or answers an error status is tried again (METADATA_RETRY); undefined when
 * it cannot be told (the task then hands its run back, if its claim is unconfirmed: runTraining).
 * Until 2026-12-08 one failed request gave up, and since that day a task that cannot tell its id
 * gives its run back (one of the run's retries), so a blip at the container's start is waited out.
 */
export async function ownTaskRef(env: NodeJS.ProcessEnv = process.env, fetchTask: typeof fetch = fetch): Promise<string | undefined> {
  const metadata = env.ECS_CONTAINER_METADATA_URI_V4;
  if (!metadata) return `pid ${process.pid}`;
  try {
    return await withRetry<string | undefined>(METADATA_RETRY, async () => {
      try {
        const res = await fetchTask(`${metadata}/task`, { signal: AbortSignal.timeout(5000) });
        if (!res.ok) return { failure: new Error(`the task metadata endpoint answered ${res.status}`), retryable: true };
        const parsed = z.safeParse(taskMetadata, await res.json());
        return { value: parsed.success && parsed.data.TaskARN ? parsed.data.TaskARN : undefined };
      } catch (e) {
        return { failure: e, retryable: true };
      }
    });
  } catch (e) {
    logger.warn('training task could not tell its own id (the ECS task metadata endpoint)', { error: errorMessage(e) });
    return undefined;
  }
}

/** The task's entry point, run by node with the tsx loader locally (the container runs its bundle). */
export const TASK_ENTRY = fileURLToPath(new URL('../../functions/workers/train-task.ts', import.meta.url));
/**
 * Loaded first in the local task's process: it holds the task's calls to its role as the local
 * stack holds its functions' (local/task-grants.ts; a path only, nothing of the local stack is
 * imported here).
 */
const LOCAL_TASK_CHECKS = fileURLToPath(new URL('../../local/task-grants.ts', import.meta.url));

/** The repository, where `--import tsx` resolves. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

// How a local task process is started (this thread, or the local stack's main thread): a module
// of its own, which a handler thread loads without this one's (task-spawner.ts).
export { spawnInThisThread, spawnTask, type TaskSpawner, useTaskSpawner } from './task-spawner.ts';

/**
 * Locally: the task as a child process of this one (node with tsx, the same entry point the
 * container runs), with this process's environment (the table's endpoint, the blob folder).
 * Its output goes to this process's; it ends on its own when the run ends.
 */
export function childProcessLauncher(opts: { heapMb?: number } = {}): TaskLauncher {
  const started = new Map<string, string>();
  return {
    runner: 'child-process',
    async launch({ tenant, jobName, token }) {
      const known = started.get(token);
      if (known) return known;
      const child = await spawnTask([`--max-old-space-size=${opts.heapMb ?? 10240}`, '--import', 'tsx', '--import', LOCAL_TASK_CHECKS, TASK_ENTRY], {
        cwd: REPO_ROOT,
        // Without ECS_CONTAINER_METADATA_URI_V4: the task names itself by it (train-task.ts
        // `ownTaskRef`), and a stack run inside an ECS task (a dev or CI container) would hand it
        // on: the child then confirmed its claim with that container's ARN, which this launcher's
        // `inspect` takes for no process, and the sweep ended its run Failed as it trained.
        env: { ...process.env, ECS_CONTAINER_METADATA_URI_V4: undefined, TRAINING_TENANT: tenant, TRAINING_JOB_NAME: jobName, TRAINING_TASK_TOKEN: token },
      });
      const ref = `pid ${child.pid}`;
      started.set(token, ref);
      void child.exited.then(() => started.delete(token));
      return ref;
    },
    async inspect(ref) {
      const pid = Number(/^pid (\d+)$/.exec(ref)?.[1]);
      if (!Number.isSafeInteger(pid) || pid <= 0) return { state: 'gone', reason: `${ref} names no process` };
      // Asked from another thread than the one that started it (the maintenance pass; the local
      // stack's main thread reaps the process: local/task-spawn.ts) or after a restart: signal 0
      // asks whether the process is there.
      try {
        process.kill(pid, 0);
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === 'EPERM' ? { state: 'running' } : { state: 'stopped', reason: 'the process is gone' };
      }
      // Signal 0 reaches an exited process nothing has reaped too: one a thread started itself
      // (spawnInThisThread) before that thread was ended, since only the thread that spawned a
      // process reaps it (the local stack's threads have its main thread start them since e9fd0966). Until 2026-12-07 such a task, once
      // killed (out of memory), was taken for running, and its run stayed InProgress for good.
      return (await exitedUnreaped(pid)) ? { state: 'stopped', reason: 'the process is gone (exited)' } : { state: 'running' };
    },
  };
}

const execFileAsync = promisify(execFile);

/**
 * Whether process `pid` has exited and is not yet reaped (a zombie): its state in /proc on Linux,
 * else as `ps` tells it; false when neither can tell (taken for running, as before).
 */
async function exitedUnreaped(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state ...`: the name may hold spaces and parentheses, the state follows the last ')'.
    return stat
      .slice(stat.lastIndexOf(')') + 1)
      .trim()
      .startsWith('Z');
  } catch {
    // No /proc (macOS): ask ps.
  }
  try {
    const { stdout } = await execFileAsync('ps', ['-o', 'stat=', '-p', String(pid)], { timeout: 5000 });
    return stdout.trim().startsWith('Z');
  } catch {
    return false;
  }
}

const describeTasksAnswer = z.object({
  tasks: z.optional(
    z.array(
      z.object({
        lastStatus: z.optional(z.string()),
        stopCode: z.optional(z.string()),
        stoppedReason: z.optional(z.string()),
        containers: z.optional(z.array(z.object({ exitCode: z.optional(z.number()), reason: z.optional(z.string()) }))),
      }),
    ),
  ),
  failures: z.optional(z.array(z.object({ reason: z.optional(z.string()), detail: z.optional(z.string()) }))),
});

/** A stopped ECS task's reason, as DescribeTasks gives it: ECS's reason, and the container's exit code and reason. */
function stoppedReason(t: NonNullable<z.infer<typeof describeTasksAnswer>['tasks']>[number]): string {
  const parts = [t.stoppedReason ?? t.stopCode ?? 'stopped'];
  const c = t.containers?.[0];
  if (c?.exitCode !== undefined) parts.push(`exit code ${c.exitCode}`);
  if (c?.reason) parts.push(c.reason);
  return `ECS: ${parts.join('; ')}`;
}

const runTaskAnswer = z.object({
  tasks: z.optional(z.array(z.object({ taskArn: z.optional(z.string()) }))),
  failures: z.optional(z.array(z.object({ reason: z.optional(z.string()), detail: z.optional(z.string()) }))),
});

/**
 * On AWS: ECS RunTask (Fargate) of the stack's task definition, the run in its container's
 * environment, through the small SigV4 client (no ECS SDK in the worker's bundle). `clientToken`
 * makes a repeated call for the same run start no second task.
 */
export function ecsLauncher(task: TrainingTaskSettings, region: string, client = new AwsClient({ url: `https://ecs.${region}.amazonaws.com`, region, service: 'ecs' })): TaskLauncher {
  return {
    runner: 'ecs',
    async launch({ tenant, jobName, token }) {
      const body = {
        cluster: task.clusterArn,
        taskDefinition: task.taskDefinitionArn,
        launchType: 'FARGATE',
        count: 1,
        clientToken: token,
        startedBy: 'recsearch-training',
        networkConfiguration: { awsvpcConfiguration: { subnets: task.subnets, securityGroups: task.securityGroups, assignPublicIp: 'ENABLED' } },
        overrides: {
          containerOverrides: [
            {
              name: task.containerName,
              environment: [
                { name: 'TRAINING_TENANT', value: tenant },
                { name: 'TRAINING_JOB_NAME', value: jobName },
                { name: 'TRAINING_TASK_TOKEN', value: token },
              ],
            },
          ],
        },
      };
      // Each attempt's failure: only when ECS refused every one for load did it surely start nothing
      // (a 5xx or a dropped answer may have started a task, which a later attempt's throttling hides).
      const failures: unknown[] = [];
      let res: Response;
      try {
        res = await client.send('POST', '/', {
          headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AmazonEC2ContainerServiceV20141113.RunTask' },
          body: JSON.stringify(body),
          onFailure: (f) => failures.push(f),
        });
      } catch (e) {
        if (failures.length > 0 && failures.every((f) => f instanceof AwsHttpError && f.code === 'ThrottlingException')) throw new LaunchThrottled(e);
        throw e;
      }
      const answer = z.parse(runTaskAnswer, await res.json());
      const arn = answer.tasks?.[0]?.taskArn;
      if (!arn) throw new Error(`ECS started no task: ${(answer.failures ?? []).map((f) => `${f.reason ?? ''} ${f.detail ?? ''}`.trim()).join('; ') || 'no reason given'}`);
      return arn;
    },
    async inspect(ref) {
      const res = await client.send('POST', '/', {
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AmazonEC2ContainerServiceV20141113.DescribeTasks' },
        body: JSON.stringify({ cluster: task.clusterArn, tasks: [ref] }),
      });
      const answer = z.parse(describeTasksAnswer, await res.json());
      const t = answer.tasks?.[0];
      if (t) return t.lastStatus === 'STOPPED' ? { state: 'stopped', reason: stoppedReason(t) } : { state: 'running' };
      // ECS describes a stopped task for at least an hour; after that it answers MISSING.
      if (answer.failures?.some((f) => f.reason === 'MISSING')) return { state: 'gone', reason: 'ECS no longer knows the task' };
      throw new Error(`ECS DescribeTasks answered neither the task nor MISSING: ${JSON.stringify(answer.failures ?? [])}`);
    },
  };
}

/** Cache: the container's task launcher, made on first use. Bound: one. */
let launcher: TaskLauncher | undefined;

/** The container task's launcher: ECS Fargate where the stack configured one, a child process locally. */
export function taskLauncher(): TaskLauncher {
  const { task } = config().training;
  launcher ??= task ? ecsLauncher(task, config().region) : childProcessLauncher();
  return launcher;
}

/** A task its runner does not know (`gone`) is taken for stopped only this long after it was claimed. */
export const TASK_SWEEP_GRACE_SECONDS = 120;

/**
 * The maintenance pass's check of the tenant's runs that nothing would move on: a run still
 * Queued, InProgress or Stopping whose container task has stopped (killed for its memory, its
 * host reclaimed, a crash before it could mark the run) would stay so for good, since no message
 * will come for it again; so would a training worker's run InProgress or Stopping past the
 * worker's time limit (WORKER_RUN_LOST_SECONDS) whose message will not come again, and so would
 * a run InProgress or Stopping under a task claim still unconfirmed UNCONFIRMED_CLAIM_SECONDS
 * after it started (no task id to ask after: UNCONFIRMED_TASK_LOST_REASON). Each is ended
 * as far as it got (endInterruptedRun), its log and error saying what stopped it: named in
 * `ended`. A run stored Queued whose message its request never sent (`_unsent_since` older than
 * UNSENT_RUN_GRACE_SECONDS: stopped between the two), or that a busy service sent back
 * (`requeueBusyRun`, `deferBusyStart`), is sent (`sendRun`), and so is one Queued under a task claim
 * its task never confirmed for UNCONFIRMED_CLAIM_SECONDS (again only UNCONFIRMED_CLAIM_SECONDS
 * after such a send, noted on the claim: `sent_at`): named in `sent`.
 */
export async function sweepTaskRuns(
  deps: { console: Pick<ConsoleStore, 'activeRuns' | 'get' | 'update' | 'appendLog'>; decide: DecideRun; queue: WorkQueue },
  tenant: string,
  taskRunner: TaskLauncher,
  now: number,
): Promise<{ ended: string[]; sent: string[] }> {
  const c = deps.console;
  const ended: string[] = [];
  const sent: string[] = [];
  // The runs waiting or running only (until 2026-12-05 every pass read the tenant's whole history,
  // which grows with every run, a page at a time).
  for (const job of await c.activeRuns<TrainingRun>(tenant, { upkeep: true })) {
    if (job.status === 'Queued' && !job.task && typeof job._unsent_since === 'number' && now - job._unsent_since >= UNSENT_RUN_GRACE_SECONDS) {
      // A send the queue refuses is tried again at the next pass; the tenant's other runs are
      // still swept (until 2026-12-07 it ended this sweep: while the queue refused, a run whose
      // task had stopped was not ended, nor another unsent run sent).
      try {
        await sendRun(c, deps.queue, tenant, job);
        sent.push(job.job_name);
      } catch (e) {
        logger.error('unsent training run not sent (the next pass tries again)', { tenant, run: job.job_name, error: errorMessage(e) });
      }
      continue;
    }
    const claim = job.task;
    if (job.status === 'Queued' && claim && claim.ref === undefined && now - Math.max(claim.claimed_at, claim.sent_at ?? 0) >= UNCONFIRMED_CLAIM_SECONDS) {
      // Claimed for a task that never confirmed it started (the worker stopped or failed between
      // the claim and the task's id: its write refused, its answer lost): only the run's message
      // coming again starts its task again (`placeRun`, same token), and none comes after a last
      // delivery (endUndeliveredRun leaves a claimed run), nor locally after a restart: until
      // 2026-12-07 such a run stayed Queued for good. Its message is sent: the worker starts the
      // task again, or finds the one the token started (the claim stays; a second message does nothing).
      // The send is noted on the claim (`sent_at`, while it is the one read), and the message is
      // not sent again for UNCONFIRMED_CLAIM_SECONDS: until 2026-12-08 every pass, each minute,
      // sent another while the first waited in the queue (harmless duplicates, each a worker's
      // invocation reading the run). A note that fails only costs such a duplicate.
      try {
        await deps.queue.send('training', [{ type: 'train', tenant, job_name: job.job_name }]);
        sent.push(job.job_name);
        await c.update(tenant, 'job', job.id, { task: { ...claim, sent_at: now } }, { status: 'Queued', ...unconfirmed(claim) }).catch((e: unknown) => {
          logger.warn('training run of an unconfirmed task claim sent; the send not noted (the next pass may send it again)', { tenant, run: job.job_name, error: errorMessage(e) });
        });
      } catch (e) {
        logger.error('training run of an unconfirmed task claim not sent (the next pass tries again)', { tenant, run: job.job_name, error: errorMessage(e) });
      }
      continue;
    }
    if (claim && claim.ref === undefined && job.status !== 'Queued' && now - (job.started_at ?? claim.claimed_at) >= UNCONFIRMED_CLAIM_SECONDS) {
      // InProgress or Stopping under a claim still unconfirmed UNCONFIRMED_CLAIM_SECONDS after the
      // run started: its task confirms the claim with its own id right after its start, within
      // seconds (the trainer's first step; a busy table waited out, else the run queued again; a
      // confirmation failed otherwise, or a task that cannot tell its own id, hands the run back at
      // once since 2026-12-08), so it never will: the task was killed between its start and that
      // confirmation, or its hand-back failed too (the task then exits at once), or it is a
      // trainer of before 2026-12-08 that trained on (a rolling deploy). Nothing can ask after a task
      // it cannot name, and no message comes for a run that started (a delivery leaves it to its
      // task): until 2026-12-07 such a run stayed InProgress or Stopping for good once its task
      // died. Ended as far as it got, under the claim and the attempt (`_attempt`) read: a run that
      // moved on (its claim confirmed, queued again, another attempt's) is left. A task of that
      // attempt still training finds its run ended at its next check (not its attempt's any more)
      // and stops quietly; its own ends hold the attempt and its status, so it writes no second one.
      // Not while it may be storing its version (its storing mark younger than STORING_GRACE_SECONDS):
      // past that mark the task no longer checks its run, and stores the version record whatever the
      // run says, so a Failed end now ("nothing was stored") would be followed by a version listed
      // beside it (3329e50d, until a review on 2026-12-07). The task completes it, or, dead, the
      // pass ends it from what is stored once the grace has passed.
      const storingSince = job._storing_since ?? job.started_at ?? claim.claimed_at;
      if (job.status === 'InProgress' && job.storing_version !== undefined && now - storingSince < STORING_GRACE_SECONDS) continue;
      const unconfirmedAttempt = { ...unconfirmed(claim), _attempt: job._attempt };
      const status = await endInterruptedRun(c, tenant, job, UNCONFIRMED_TASK_LOST_REASON, unconfirmedAttempt);
      if (!status) continue;
      ended.push(job.job_name);
      if (status === 'Completed') await deps.decide(tenant, job.job_name);
      continue;
    }
    if (!claim && job.status !== 'Queued' && job.started_at !== null && now - job.started_at > WORKER_RUN_LOST_SECONDS) {
      // The training worker's run, past its time limit: its invocation is over. Ended as far as it
      // got, as its message coming again would end it; none may come (its last delivery failed,
      // the message dead-lettered; locally a delivery again comes within seconds, and leaves the
      // run to its invocation): until 2026-12-07 such a run stayed InProgress for good (the runs are
      // read consistently; the end is conditional on what was read).
      const status = await endInterruptedRun(c, tenant, job, WORKER_RUN_LOST_REASON);
      if (!status) continue;
      ended.push(job.job_name);
      if (status === 'Completed') await deps.decide(tenant, job.job_name);
      continue;
    }
    if (!claim?.ref || claim.runner !== taskRunner.runner || !ACTIVE_STATUSES.has(job.status)) continue;
    const state = await taskRunner.inspect(claim.ref);
    if (state.state === 'running' || (state.state === 'gone' && now - claim.claimed_at < TASK_SWEEP_GRACE_SECONDS)) continue;
    // Read again: the task may have ended the run just before it stopped, or given it up (queued
    // again for a busy service, its claim dropped: `requeueBusyRun`, `deferBusyStart`) and then
    // exited; the run is then waiting to be sent again, or already another task's. Only a run still
    // this task's is ended (until 2026-12-07 such a run was ended Failed as its old task stopped).
    const fresh = await c.get<TrainingRun>(tenant, 'job', job.id);
    if (!fresh || !ACTIVE_STATUSES.has(fresh.status) || fresh.task?.ref !== claim.ref) continue;
    const status = await endInterruptedRun(c, tenant, fresh, `its training task stopped: ${state.reason}`);
    if (!status) continue;
    ended.push(job.job_name);
    if (status === 'Completed') await deps.decide(tenant, job.job_name);
  }
  return { ended, sent };
}

/**
 * What is done for a run ended Completed here (its task, or the local process, stopped after it
 * stored its version): its template's auto-promotion decided (`decideAutoPromotion`), as the worker
 * or task that ran it would have after it. Nothing else would (a task's message is spent; the
 * sweep passes over Completed runs): until 2026-12-04 such a version never got its `promotion`.
 */
export type DecideRun = (tenant: string, jobName: string) => Promise<unknown>;

/**
 * The local stack's start: its queues live in memory, so the training messages of a previous
 * process (stopped while runs were queued or running) are gone, where SQS would deliver them
 * again. A run not handed to a container task (those are `sweepTaskRuns`') that is still Queued
 * is queued again; one InProgress or Stopping, whose worker was that process, is ended as far as
 * it got (`endInterruptedRun`). Answers what became of each.
 */
export async function recoverLocalRuns(deps: { console: Pick<ConsoleStore, 'page' | 'get' | 'update' | 'appendLog'>; queue: WorkQueue; decide: DecideRun }, tenant: string): Promise<string[]> {
  const done: string[] = [];
  const queued: string[] = [];
  for await (const job of eachRun(deps.console, tenant)) {
    if (!ACTIVE_STATUSES.has(job.status) || job.task?.ref) continue;
    if (job.status === 'Queued') queued.unshift(job.job_name);
    else {
      const ended = await endInterruptedRun(deps.console, tenant, job, 'the local server stopped while it ran');
      if (ended) done.push(`${job.job_name} ${ended}`);
      if (ended === 'Completed') await deps.decide(tenant, job.job_name);
    }
  }
  // Oldest first, as they were queued (the runs are read newest first).
  for (const name of queued) {
    await deps.queue.send('training', [{ type: 'train', tenant, job_name: name }]);
    done.push(`${name} queued again`);
  }
  return done;
}

async function* eachRun(c: Pick<ConsoleStore, 'page'>, tenant: string): AsyncGenerator<TrainingRun> {
  let after: number | undefined;
  for (;;) {
    const page = await c.page<TrainingRun>(tenant, 'job', { limit: 500, after, newestFirst: true });
    yield* page.rows;
    const last = page.rows[page.rows.length - 1];
    if (!page.hasMore || !last) return;
    after = last.id;
  }
}
