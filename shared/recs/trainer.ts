import { randomUUID } from 'node:crypto';
import { nowMs, nowSeconds as now } from '../clock.ts';
import type { BlobStore } from '../blob.ts';
import { seededRandom } from '../random.ts';
import type { ConsoleStore } from '../domain/console-records.ts';
import type { PromotionDue } from '../domain/automation.ts';
import {
  busyFailure,
  completedWith,
  endInterruptedRun,
  handBackFailure,
  requeueBusyRun,
  type RunTask,
  taskToken,
  trainingRunId,
  type TrainingRun,
  WORKER_RUN_LOST_REASON,
  WORKER_RUN_LOST_SECONDS,
} from '../domain/training-runs.ts';
import { withRetry } from '../retry.ts';
import { serviceBusy } from '../data/busy.ts';
import { logger } from '../observability.ts';
import type { EventType } from '../domain/event-types.ts';
import type { ModelVersion } from '../domain/model-versions.ts';
import type { Template } from '../domain/templates.ts';
import type { EventStore, ItemStore } from '../domain/types.ts';
import { DEFAULT_TRAINING_OPTIONS } from '../schemas/console.ts';
import { foldInUsers, historiesOf, holdsAnyOf, packModel, unreadItemsOf, withoutUsers, type ModelArtifact } from './artifact.ts';
import { erasedEvent, erasedFrom } from '../domain/erased-users.ts';
import { withoutErased } from './erase-from-models.ts';
import { Dataset, type Interaction } from './dataset.ts';
import { evaluate } from './evaluate.ts';
import { Stopped, trainBprFoldIn, trainEase, trainItemKnn, trainPopularity, type Model, type TrainHooks } from './models.ts';
import { describePoint, trainDefault, type CurvePoint, type Validation } from './tuning.ts';
import { catalogItemId } from '../domain/item-ids.ts';
import { errorMessage } from '../domain/errors.ts';

export const modelArtifactKey = (tenant: string, version: number) => `models/${tenant}/v${version}.bin`;

export interface TrainerDeps {
  console: ConsoleStore;
  events: EventStore;
  items: ItemStore;
  blobs: BlobStore;
}

export class ThresholdError extends Error {
  override name = 'ThresholdError';
}

/**
 * Trains `algorithm` on `ds` (the run's `options` for `bpr`): `auto` (EASE and iALS blended, choosing its own
 * hyperparameters on a validation split of `ds`, see tuning.ts) answers its validation too, and
 * tells `point` each validation point as it is measured.
 */
export async function trainAlgorithm(
  algorithm: string,
  ds: Dataset,
  options: Pick<TrainingRun['options'], 'epochs' | 'batch_size' | 'learning_rate'>,
  hooks: TrainHooks = {},
  point?: (p: CurvePoint) => void,
): Promise<{ model: Model; validation?: Validation }> {
  switch (algorithm) {
    case 'auto':
      return trainDefault(ds, hooks, point);
    case 'popularity':
      return { model: trainPopularity(ds) };
    case 'item_knn':
      return { model: trainItemKnn(ds, hooks, 200) };
    case 'bpr':
      return { model: await trainBprFoldIn(ds, { epochs: options.epochs, batchSize: options.batch_size, learningRate: options.learning_rate }, hooks) };
    default:
      return { model: trainEase(ds, { maxItems: 2500 }, hooks) };
  }
}

/** Holdout users scored at most (a seeded sample beyond, see sampleUsers): the metrics of a large tenant in seconds, not an hour. */
export const HOLDOUT_MAX_USERS = 2000;

/** A validation record as stored: figures rounded to 6 decimals (a number the table can store, and enough). */
function storedValidation(v: Validation): Validation {
  const r = (x: number) => Number(x.toFixed(6));
  const curve = v.curve.map((p) => ({
    ...p,
    ndcg_at_10: r(p.ndcg_at_10),
    ...(p.loss !== undefined ? { loss: r(p.loss) } : {}),
    ...(p.blend_ndcg_at_10 !== undefined ? { blend_ndcg_at_10: r(p.blend_ndcg_at_10) } : {}),
  }));
  return { ...v, ndcg_at_10: r(v.ndcg_at_10), curve };
}

/** Splits each user's interactions: a seeded random 20% (users with at least 5) are held out. */
function holdout(interactions: Interaction[]): { train: Interaction[]; test: Interaction[] } {
  const rand = seededRandom(1234);
  const byUser = new Map<string, Interaction[]>();
  for (const x of interactions) {
    let l = byUser.get(x.user);
    if (!l) byUser.set(x.user, (l = []));
    l.push(x);
  }
  const trainPart: Interaction[] = [];
  const test: Interaction[] = [];
  for (const l of byUser.values()) {
    if (l.length < 5) {
      trainPart.push(...l);
      continue;
    }
    for (const x of l) (rand() < 0.2 ? test : trainPart).push(x);
  }
  return { train: trainPart, test };
}

/**
 * The highest event id through which training has read every event there will ever be, so that
 * serving need read only the events after it. Ids are handed out in order, in blocks, after the
 * ingest request read its clock (an event's `created`), and a request ends within its 30 s
 * timeout. An id training did not read is a gap: an event still being stored, or one that never
 * will be (its request failed). A gap is closed for good once an event with a higher id was
 * created before `settledBefore`: the gap's id was handed out before that event's, within 30 s
 * of its `created`, and its request ended within 30 s more, before the read began (with the
 * margin `settledBefore` leaves). The answer stops below the first gap not closed that way.
 */
export function eventsThroughOf(ids: ArrayLike<number>, created: ArrayLike<number>, settledBefore: number): number {
  const order = Array.from({ length: ids.length }, (_, k) => k).sort((a, b) => (ids[a] as number) - (ids[b] as number));
  // The earliest `created` among the events from each position on (in id order).
  const earliestFrom = new Float64Array(order.length + 1).fill(Infinity);
  for (let k = order.length - 1; k >= 0; k--) earliestFrom[k] = Math.min(earliestFrom[k + 1] as number, created[order[k] as number] as number);
  let through = 0;
  for (let k = 0; k < order.length; k++) {
    const id = ids[order[k] as number] as number;
    if (id > through + 1 && (earliestFrom[k] as number) >= settledBefore) break;
    through = id;
  }
  return through;
}

/** A trainer's end that found its run moved on (its status changed by another): said in the service's log only. */
const movedOn = (tenant: string, jobName: string, why: string) => logger.warn('training run moved on before its trainer could end it: left as it is', { tenant, run: jobName, error: why });

/** How a container task's confirmation of its claim is tried again while the table is busy (after the client's own retries): about 7 s at most. */
const CONFIRM_RETRY = { attempts: 4, baseMs: 500, maxMs: 4000, jitter: 'full' } as const;

/**
 * A container task that could not record its id on its run (its claim left unconfirmed: the task
 * sweep could not follow it), at its start: the run is handed back (`requeueBusyRun` with
 * `handBack`) rather than trained. The message says why; `busy`: the table was busy throughout
 * (its read back of the run refused for load past its retries), so the hand-back waits as a busy
 * requeue does.
 */
export class ClaimUnconfirmed extends Error {
  override name = 'ClaimUnconfirmed';
  constructor(
    message: string,
    readonly busy = false,
  ) {
    super(message);
  }
}

/**
 * A container task's confirmation of the claim `claim` of its run with its own id `ref`, under
 * attempt `attempt`: whether the task trains the run. A busy refusal is tried again
 * (CONFIRM_RETRY), then thrown. A refusal of its condition, any other failure (the write may have
 * landed: a dropped connection), or no `ref` (the task could not tell its own id), reads the run
 * back (a busy read tried again). No longer this attempt's (another owns it now): false, and the
 * task ends without training and writes nothing. This attempt's and named by this task (the
 * worker's write of the task's id landed first, or this one did; without a `ref`, by any task):
 * true. This attempt's under the claim unconfirmed, or named by another task (a worker's launch of
 * a new task for the same claim recorded that one's id: it finds the run started and leaves it),
 * or not read: ClaimUnconfirmed is thrown, and the trainer hands the run back. Until 2026-12-08 the
 * task trained on under the unconfirmed claim, and the maintenance pass ended the run Failed five
 * minutes in (`sweepTaskRuns`), its work lost; and a refusal counted as done, whoever the run then
 * named: the task trained a run another task, or another attempt, held.
 */
async function confirmClaim(c: Pick<ConsoleStore, 'get' | 'update'>, tenant: string, jobName: string, claim: RunTask, ref: string | undefined, attempt: string): Promise<boolean> {
  const id = trainingRunId(jobName);
  const unconfirmed = { 'task.runner': claim.runner, 'task.claimed_at': claim.claimed_at, 'task.ref': undefined };
  let why = 'the task could not tell its own id';
  if (ref !== undefined) {
    try {
      const applied = await withRetry(CONFIRM_RETRY, async () => {
        try {
          return { value: await c.update(tenant, 'job', id, { task: { ...claim, ref } }, { _attempt: attempt, ...unconfirmed }) };
        } catch (e) {
          return { failure: e, retryable: serviceBusy(e) };
        }
      });
      if (applied) return true;
      why = 'its write was refused: the run holds another claim or attempt';
    } catch (e) {
      if (serviceBusy(e)) throw e;
      why = `its write failed: ${errorMessage(e)}`;
    }
  }
  let run: TrainingRun | undefined;
  try {
    run = await readRun(c, tenant, id);
  } catch (e) {
    throw new ClaimUnconfirmed(`${why}; the run could not be read back: ${errorMessage(e)}`, serviceBusy(e));
  }
  // No longer this attempt's: in other hands, nothing of it is this task's to write.
  if (run?._attempt !== attempt) return false;
  // Named by this task now (the worker's write of its id, or this confirmation's, landed).
  if (run.task?.ref !== undefined && (ref === undefined || run.task.ref === ref)) return true;
  throw new ClaimUnconfirmed(why);
}

/** Run `id` read back after a write whose answer was lost: a busy read is tried again (CONFIRM_RETRY), then thrown. */
const readRun = (c: Pick<ConsoleStore, 'get'>, tenant: string, id: number): Promise<TrainingRun | undefined> =>
  withRetry<TrainingRun | undefined>(CONFIRM_RETRY, async () => {
    try {
      return { value: await c.get<TrainingRun>(tenant, 'job', id) };
    } catch (e) {
      return { failure: e, retryable: serviceBusy(e) };
    }
  });

/**
 * A trainer's start of its attempt (`start`, holding its `_attempt` token), under `held`: whether
 * it applied. A write can land and its answer be lost (a throttled or dropped answer): the
 * client's retry of it is then refused (its condition no longer holds), or the client gives up
 * and throws. Either way the run is read back (a busy read tried again), and shows this attempt's start if it landed: the
 * trainer carries on. Until 2026-12-07 such a run was left InProgress with nothing training it
 * (the worker's invocation, or the container task, exited: the task with 1), and ended Failed
 * once the maintenance pass found it. A start neither applied nor read back throws the write's error.
 */
async function startAttempt(
  c: Pick<ConsoleStore, 'get' | 'update'>,
  tenant: string,
  id: number,
  start: Record<string, unknown> & { _attempt: string },
  held: Record<string, unknown>,
): Promise<boolean> {
  // The read back waits out a busy table (`readRun`): the start's answer was lost to load, and a
  // read at once often meets the same (until 2026-12-07 one refused read threw, and a start that
  // had landed was left InProgress with nothing training it).
  const ours = async () => (await readRun(c, tenant, id))?._attempt === start._attempt;
  let applied: boolean;
  try {
    applied = await c.update(tenant, 'job', id, start, held);
  } catch (e) {
    if (await ours().catch(() => false)) return true;
    throw e;
  }
  // Refused: another took the run (a second delivery, a stop), or this write landed and the retry was refused.
  return applied || (await ours());
}

/**
 * Runs one training job: gathers the tenant's events of the template's event types, each weighted
 * by its event type's weight (as of this run) times the template's multiplier, applies the
 * thresholds, evaluates on a holdout, trains on everything, stores the artifact and only then
 * creates the new version, so a crashed run leaves no half version. A stop wins unless the run
 * has marked itself as storing its version first (conditional updates on the job decide which),
 * so a run a stop was answered `Stopping` for ends `Stopped` with nothing stored.
 */
export async function runTraining(deps: TrainerDeps, tenant: string, jobName: string, opts: { asTask?: boolean; taskRef?: string; taskToken?: string } = {}): Promise<void> {
  const c = deps.console;
  const id = trainingRunId(jobName);
  const job = await c.get<TrainingRun>(tenant, 'job', id);
  if (!job) return;
  // The run is no longer this attempt's (ended by another, or another attempt's): a progress write
  // was refused and a read showed it, or a poll did. The trainer then stops quietly: it writes
  // nothing more, its log included, and ends nothing (its ends below hold this attempt only).
  let movedAway = false;
  // Its log lines stop there too (until 2026-12-07 lines written between the refusal and the next
  // check, `Training on all ...` after a refused progress write, landed after the run's end).
  const log = async (message: string) => {
    if (!movedAway) await c.appendLog(tenant, id, [{ ts: now(), message }]);
  };
  if (job.status === 'Stopping') {
    // Asked to stop while an attempt ran it (a stop comes only to an InProgress run not storing its
    // version, and the storing mark only to an InProgress run, so a Stopping run never ends but
    // Stopped, whoever ends it: no attempt of it can be about to complete it). Left, as an
    // InProgress run below, to its attempt while that may still run: a container task's (the task
    // ends it, or the task sweep once it stopped), or the worker's within its time limit (the
    // invocation ends it at its next check, within a second or so). Until 2026-12-07 a second
    // delivery of the message ended it at once, and the attempt, still training until that check,
    // logged lines after its `Stopped` line. Past the limit its invocation is over: ended here.
    if (job.task || (job.started_at !== null && now() - job.started_at <= WORKER_RUN_LOST_SECONDS)) return;
    // Its log says so, as every other end does (until 2026-12-07 it ended at "Stop requested").
    if (await c.update(tenant, 'job', id, { status: 'Stopped', finished_at: now() }, { status: 'Stopping' })) await log('Stopped; no version was created');
    return;
  }
  if (job.status === 'InProgress') {
    // The message came again. Within the worker's time limit that is SQS delivering it twice (at
    // least once), while the run goes on: it is left to its invocation. Past it, that invocation
    // ended (its time or its worker ran out) without ending the job: it is ended as far as it got,
    // so it does not stay InProgress (and, once storing began, unstoppable) for good. Only a
    // worker's run: a container task's trains past that limit, and the task sweep ends it once its
    // task has stopped. Until 2026-12-07 a stray task (of a claim dropped for a busy service, or a
    // second start of one token) coming that late ended another task's healthy run Failed: its
    // token is checked only at a Queued run's start, and the end held the run as read, that is the
    // live attempt's.
    if (job.task) return;
    if (job.started_at !== null && now() - job.started_at <= WORKER_RUN_LOST_SECONDS) return;
    await endInterruptedRun(c, tenant, job, WORKER_RUN_LOST_REASON);
    return;
  }
  // Only a Queued run starts (a redelivered message for a finished run does nothing); in the
  // training worker, only one no container task claimed (`asTask`: the task's own start). SQS can
  // deliver one message twice at once, and the second delivery can hand the run to a task while
  // the first trains it: until 2026-12-04 the worker started it all the same, the task then
  // found it taken and exited, and the task sweep ended the healthy run Failed.
  // This attempt's start, and its token (`_attempt`), unique to it: every write of its progress,
  // its storing mark and its ends hold it, so a write that comes late (the run ended meanwhile,
  // or queued again and started by another attempt, within the same second too) changes nothing
  // (until 2026-12-07 progress writes were unconditional, and a late one landed on an ended run
  // or on a later attempt's).
  // A container task starts only a run claimed for it: a claim there (a task of a claim dropped
  // since, for a busy service, `deferBusyStart`, `requeueBusyRun`, finds none, or a later
  // attempt's), not another task's confirmed one, and of its own attempt (the token it was launched
  // with, `taskToken`, is the one the run's retries make now). Held in the start (the claim's
  // runner, the retries read), so a claim dropped between the read and the start refuses it.
  // Until 2026-12-07 a task's start held only Queued, and such a stray task started a run sent
  // back for a new task: trained where its claim did not follow it (none: the sweep took it for a
  // worker's run, and ended it Failed past the worker's time limit as it trained), or beside the
  // new task.
  const claim = job.task;
  if (opts.asTask && job.status === 'Queued') {
    const another = !claim || (claim.ref !== undefined && opts.taskRef !== undefined && claim.ref !== opts.taskRef);
    if (another || (opts.taskToken !== undefined && opts.taskToken !== taskToken(tenant, jobName, job._busy_retries))) {
      logger.warn('training task found its run claimed for no task or another: left as it is', { tenant, run: jobName, task: opts.taskRef ?? null });
      return;
    }
  }
  // The claim as read, its time included: a worker's claim again of a run whose task never
  // confirmed it (`placeRun`, the same runner and token, a new task) between this read and the start
  // refuses it, the new task's to train (until 2026-12-08 the start held the runner only, and the
  // stray task trained the run the new task's claim named).
  const held =
    opts.asTask && claim
      ? { status: 'Queued', 'task.runner': claim.runner, 'task.claimed_at': claim.claimed_at, _busy_retries: job._busy_retries }
      : { status: 'Queued', ...(opts.asTask ? {} : { task: undefined }) };
  const startedAt = now();
  const attempt = randomUUID();
  if (!(await startAttempt(c, tenant, id, { status: 'InProgress', started_at: startedAt, progress: 0.01, _attempt: attempt }, held))) return;
  let lastCheck = 0;
  let stopRequested = false;
  const checkStop = async (fresh = false) => {
    if (!fresh && nowMs() - lastCheck < 1000) return stopRequested || movedAway;
    lastCheck = nowMs();
    const run = await c.get<TrainingRun>(tenant, 'job', id);
    stopRequested = run?.status === 'Stopping';
    if (run?._attempt !== attempt || (run.status !== 'InProgress' && run.status !== 'Stopping')) movedAway = true;
    return stopRequested || movedAway;
  };
  const hooks: TrainHooks = { shouldStop: () => stopRequested || movedAway };
  /**
   * A line of the run's progress (not its end): written after a fresh look at the run (a read that
   * fails writes it as before), so a run ended by another meanwhile gets none after its end. The
   * maintenance pass ends a run whose task may still train (one under a claim never confirmed,
   * `sweepTaskRuns`): until a review on 2026-12-07 (3329e50d) that task's lines up to its next
   * check ('Event type weights ...', 'Read N usable events ...') followed the pass's 'Failed' line.
   */
  const note = async (message: string) => {
    await checkStop(true).catch(() => undefined);
    await log(message);
  };
  /**
   * A write of the run's progress: only while it is InProgress in this attempt. Refused, the run is
   * read: asked to stop (Stopping, still this attempt's), the trainer stops as for any stop; no
   * longer this attempt's, it stops quietly.
   */
  const progress = async (fraction: number) => {
    if (movedAway) return;
    if (!(await c.update(tenant, 'job', id, { progress: fraction }, { status: 'InProgress', _attempt: attempt }))) await checkStop(true);
  };
  // A read that fails here is tried again at the next tick: left unhandled, its rejection would
  // end the process (the Lambda invocation, the container task, `npm start`) and the run with it.
  const poll = setInterval(() => void checkStop().catch(() => undefined), 1000);
  // Messages and validation points go to the log as they come (an empty message only moves the
  // fraction), written in order while training lets the event loop run; a failed write of
  // progress does not fail the run. The run's last line waits for them, so it stays the last.
  let written = Promise.resolve();
  // The version record once stored: from then on the run has made its version, whatever fails after.
  let storedVersion: ModelVersion | undefined;
  /** The version this run marked itself as storing, once it did. */
  let storingVersion: number | undefined;
  const later = (write: () => Promise<unknown>) => {
    written = written
      .then(() => (movedAway ? undefined : write()))
      .then(
        () => undefined,
        () => undefined,
      );
  };
  try {
    // A container task (`taskRef`: its own id, as its launcher names it) confirms a claim its worker
    // left unconfirmed (the write of the task's id refused, or its answer lost): the task sweep asks
    // after a claimed run by that id only, so a run started under an unconfirmed claim whose task
    // was then killed stayed InProgress for good (until 2026-12-07). Only while the claim is still
    // unconfirmed (the worker's own write may land first), and only this attempt's (its token),
    // whatever its status now: a stop answered as it started (Stopping) leaves the run this task's
    // all the same (until 2026-12-07 the condition held InProgress, and such a run whose task was
    // then killed stayed Stopping for good). A busy service is waited out (CONFIRM_RETRY: until
    // 2026-12-07 one refusal left the claim unconfirmed); still busy, it is thrown here and the run
    // queued again for a new task (requeueBusyRun, below), not trained where nothing can follow it.
    // Another failure, or a task that cannot tell its own id, leaves the run read back: still
    // unconfirmed, the task hands it back at once (ClaimUnconfirmed, below), before any work, so a
    // new task starts it at the next pass; until 2026-12-08 it trained on, and the maintenance
    // pass ended the run Failed five minutes in.
    if (opts.asTask && claim && claim.ref === undefined && !(await confirmClaim(c, tenant, jobName, claim, opts.taskRef, attempt))) {
      movedAway = true;
      logger.warn('training task found its run in other hands as it confirmed its claim: left as it is', { tenant, run: jobName, task: opts.taskRef ?? null });
      return;
    }
    // In the try: a refused write of this line is handled as any step's (a busy one queues the run
    // again); before the try it left the run InProgress until its message came back, 90 minutes on.
    await log('Started');
    const template = await c.get<Template>(tenant, 'template', job.template_id);
    if (!template) throw new ThresholdError(`Template ${job.template_id} no longer exists.`);
    const types = new Map((await c.list<EventType>(tenant, 'event_type')).map((e) => [e.id, e]));
    // An event type's weight as of this run, times the template's multiplier for it (default 1).
    const weightOf = new Map<string, number>();
    const weighed: string[] = [];
    for (const et of template.event_types) {
      const t = types.get(et.id);
      if (!t) continue;
      const multiplier = et.weight ?? 1;
      weightOf.set(t.name, t.weight * multiplier);
      weighed.push(`${t.name} ${weightOf.get(t.name)} (${t.weight} × ${multiplier})`);
    }
    await note(`Event type weights (the event type's weight × the template's): ${weighed.join(', ') || 'none'}`);
    const items = new Map<number, boolean>();
    // Item ids are handed out in ascending order: one above the highest taken before the read
    // began is of an item created since. One the read does not hold up to it was mostly deleted,
    // but its row may also have been stored after the read (a create's retry under the same
    // Idempotency-Key writes the ids its first attempt reserved, up to a day later; a create in
    // flight): such ids are looked up once the events are read (below), those named by an event
    // stored since the read began only. Such an item was stored after that, and a client names it
    // once told of it (its create's 201): an older event names an id no item had when it was sent.
    // Until 2026-12-06 every id of an item ever deleted that events name was looked up, every run.
    const readBegan = now();
    const takenBeforeRead = await deps.items.highestIdTaken(tenant);
    await deps.items.forEachPage(tenant, (page) => page.forEach((i) => items.set(i.id, i.active)));
    const counts = new Map<string, number>();
    const raw: { type: string; id: number; x: Interaction }[] = [];
    // Every event created before this was stored before the read began (an ingest request ends
    // within its 30 s timeout), so training sees it: serving adds only the events after it.
    const trainedBefore = now() - 60;
    // Serving reads only the events after `eventsThrough` (see eventsThroughOf). Events of types
    // training does not use are kept for the users' histories, weighed as serving weighs them.
    const readIds: number[] = [];
    const readCreated: number[] = [];
    const typeWeight = new Map([...types.values()].map((t) => [t.name, t.weight]));
    const servingWeight = (type: string) => typeWeight.get(type) ?? 1;
    const untrained: { id: number; x: Interaction }[] = [];
    // Events on items this run did not read (see UnreadItems): kept for the users' histories.
    const unreadEvents: { id: number; user: string; item: number; type: string }[] = [];
    // Those since the read began on an id taken before it: kept only if the item is stored once the events are read.
    const unreadTaken: { id: number; user: string; item: number; type: string }[] = [];
    // An event's time is what it was sent with; one sent without `occurred_at` is stamped on
    // arrival (occurred_at = created), which says when it was imported, not when it happened:
    // its time is unknown (NaN) to training, so a bulk import's order weighs nothing.
    const timeOf = (e: { occurred_at: number; created: number }) => (e.occurred_at === e.created ? Number.NaN : e.occurred_at);
    // Events an erasure covers that are still in the table (an ingest in flight when it began, or
    // one retried under its key after it, wrote them as it deleted the user's events) are not
    // training data: each user's marker says which are the erasure's, as serving reads them.
    const erasedBy = new Map((await c.servingConfig(tenant)).erased_user.map((m) => [m.user_id, erasedEvent(m)]));
    let leftOut = 0;
    await deps.events.forEachPage(tenant, (page) => {
      for (const e of page) {
        readIds.push(e.id);
        readCreated.push(e.created);
        if (erasedBy.get(e.user_id)?.(e)) {
          leftOut++;
          continue;
        }
        const item = catalogItemId(e.item_id);
        // Events for items that do not exist are not training data. Those on an item created
        // after the catalog read began (an id above the highest taken then, or one taken before
        // whose row is stored by the end of the events read, from an event stored since the read
        // began) are the user's all the same:
        // the artifact carries them, as serving reads no event up to `eventsThrough` (until
        // 2026-12-06 they were dropped here). Those on a deleted item are not carried: they
        // would grow every artifact of a tenant that deletes items, for nothing served.
        if (item === undefined) continue;
        if (!items.has(item)) {
          if (item > takenBeforeRead) unreadEvents.push({ id: e.id, user: e.user_id, item, type: e.type });
          // A minute's allowance for the clocks of the requests that stamp `created` (in seconds).
          else if (e.created >= readBegan - 60) unreadTaken.push({ id: e.id, user: e.user_id, item, type: e.type });
          continue;
        }
        const w = weightOf.get(e.type);
        if (w === undefined) {
          untrained.push({ id: e.id, x: { user: e.user_id, item, weight: servingWeight(e.type), at: timeOf(e) } });
          continue;
        }
        counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
        raw.push({ type: e.type, id: e.id, x: { user: e.user_id, item, weight: w, at: timeOf(e) } });
      }
    });
    const eventsThrough = eventsThroughOf(readIds, readCreated, trainedBefore - 30);
    // The ids taken before the catalog read that it did not hold, stored now: their events are
    // carried as those on an item created since (until 2026-12-06 they were taken for a deleted
    // item's, and an event on an item a retried create stored after the read was lost: neither in
    // the artifact nor read by serving). A deleted item's are still not carried. Consistent: the
    // row may have been stored a moment before an event on it that the read just took (an
    // eventually consistent read could miss it, and its events were then lost, until 2026-12-06).
    const takenIds = [...new Set(unreadTaken.filter((r) => r.id <= eventsThrough).map((r) => r.item))];
    const storedSince = new Set<number>();
    for (let i = 0; i < takenIds.length; i += 1000) {
      const ids = takenIds.slice(i, i + 1000);
      (await deps.items.getMany(tenant, ids, { consistent: true })).forEach((found, k) => found && storedSince.add(ids[k] as number));
    }
    for (const r of unreadTaken) if (storedSince.has(r.item)) unreadEvents.push(r);
    // An id above the highest handed out once the events are read was no item's when any event
    // read was sent (another system's ids, say): its events are not carried, as a deleted item's
    // are not (until 2026-12-06 every run carried them all, being above the first counter read).
    const takenAfterEvents = await deps.items.highestIdTaken(tenant);
    if (leftOut) await note(`Left out ${leftOut} events of erased users that their erasure covers (still in the table: written as it ran)`);
    await note(
      `Read ${raw.length} usable events of ${[...weightOf.keys()].join(', ') || 'no'} event types over ${items.size} items; every event through id ${eventsThrough} was read, serving reads the later ones`,
    );
    const { per_signal_min, total_min } = template.thresholds;
    const below = [...weightOf.keys()].filter((t) => (counts.get(t) ?? 0) < per_signal_min);
    if (below.length) await note(`Signals below per_signal_min ${per_signal_min}, left out: ${below.map((t) => `${t} (${counts.get(t) ?? 0})`).join(', ')}`);
    // Signals left out are not training data; like other types, they go into the histories.
    const kept: Interaction[] = [];
    for (const r of raw) {
      if (below.includes(r.type)) untrained.push({ id: r.id, x: { ...r.x, weight: servingWeight(r.type) } });
      else kept.push(r.x);
    }
    // The spec's total_min is "the minimum total number of events across all signals before
    // training proceeds": the template's every signal, those per_signal_min leaves out included
    // (until 2026-12-07 only the signals kept counted, so a run whose signals held total_min
    // events failed once one of them was left out). Training still needs a signal to train on.
    const leftOutSignals = below.length ? ` (left out: ${below.join(', ')}, below per_signal_min ${per_signal_min})` : '';
    if (raw.length < total_min) {
      throw new ThresholdError(`Not enough events: ${raw.length} usable events across all signals${leftOutSignals}, total_min is ${total_min}.`);
    }
    // No event at all, with total_min 0 (met): until 2026-12-08 this said "0 usable events across
    // all signals, total_min is 0", as if that threshold had refused the run.
    if (raw.length === 0) {
      throw new ThresholdError(
        `Not enough events: no usable event of the template's event types (${[...weightOf.keys()].join(', ') || 'none'}) to train on; total_min ${total_min} is met, but training needs events.`,
      );
    }
    // Events there are, and every signal holding them is below per_signal_min.
    if (kept.length === 0) {
      throw new ThresholdError(`Not enough events: no signal is left to train on${leftOutSignals}; ${raw.length} usable events across all signals, total_min is ${total_min}.`);
    }
    const algorithm = job.options.algorithm ?? DEFAULT_TRAINING_OPTIONS.algorithm;
    const universe = [...items.keys()];
    const split = holdout(kept);
    const evalSet = new Dataset(split.train, universe);
    await progress(0.1);
    if (stopRequested || movedAway) throw new Stopped('stopped');
    await note(`Evaluating ${algorithm} on a holdout of ${split.test.length} interactions`);
    const stage = (prefix: string, from: number): [TrainHooks, (p: CurvePoint) => void] => [
      {
        ...hooks,
        progress: (f, m) => {
          if (m) later(() => note(`${prefix}${m}`));
          later(() => progress(from + 0.4 * f));
        },
      },
      (p) => later(() => note(`${prefix}${describePoint(p)}`)),
    ];
    const evalModel = (await trainAlgorithm(algorithm, evalSet, job.options, ...stage('holdout: ', 0.1))).model;
    await written;
    const m = evaluate(evalModel, evalSet, split.test, 10, HOLDOUT_MAX_USERS);
    const metrics = {
      ndcg_at_10: m.ndcg_at_10,
      precision_at_10: m.precision_at_10,
      recall_at_10: m.recall_at_10,
      map_at_10: m.map_at_10,
      coverage: m.coverage,
      holdout_users: m.users,
      interactions: kept.length,
    };
    await note(`Holdout metrics: ${JSON.stringify(metrics)}`);
    if (await checkStop()) throw new Stopped('stopped');
    await progress(0.5);
    const full = new Dataset(kept, universe);
    if (algorithm === 'auto') await note(`Training on all ${kept.length} interactions, choosing its hyperparameters on a validation split of them`);
    const [fullHooks, fullPoint] = stage('', 0.5);
    // Only the default's messages are logged: the others' were logged by the holdout stage.
    const { model, validation } = await trainAlgorithm(algorithm, full, job.options, algorithm === 'auto' ? fullHooks : { ...hooks, progress: (f) => later(() => progress(0.5 + 0.4 * f)) }, fullPoint);
    const trainedTypes = [...weightOf.keys()].filter((t) => !below.includes(t));
    // The weights this model was trained with, for serving to weigh the latest events by: the
    // trained types' weights, and every other event type's weight as of this run (as the histories
    // hold them), so that a weight change takes effect at the next run, not before.
    const typeWeights = new Map([...typeWeight].map(([t, w]) => [t, trainedTypes.includes(t) ? (weightOf.get(t) as number) : w]));
    const extra = untrained.filter((r) => r.id <= eventsThrough).map((r) => r.x);
    // The events on items this run did not read that serving will not read (up to `eventsThrough`),
    // weighed as the histories weigh their types. Rather than lowering `eventsThrough` below the
    // first of them: an event on an item created after the read may be far older than the read
    // (sent before the item existed), and every request would then read up to 5,000 of the user's
    // events already in the artifact (SEEN_LIMIT, serve.ts) and still miss the older ones past that.
    const unread = unreadItemsOf(unreadEvents.filter((r) => r.id <= eventsThrough && r.item <= takenAfterEvents).map((r) => ({ user: r.user, item: r.item, weight: typeWeights.get(r.type) ?? 1 })));
    if (unread) await note(`Kept ${unread.items.length} user-item pairs on items the catalog read did not hold (not trained on; serving counts them as seen and in the taste while the item exists)`);
    const histories = {
      ...historiesOf(extra.length ? new Dataset([...kept, ...extra], universe) : full, trainedBefore, trainedTypes, eventsThrough),
      ...(unread ? { unread } : {}),
    };
    // iALS's users, folded in now so that serving need not (stored with the artifact).
    await foldInUsers(model, histories, hooks);
    await written;
    if (await checkStop(true)) throw new Stopped('stopped');
    // The version number is taken only now. Then the run is marked as storing it, only if it is
    // still InProgress: from then on a stop is refused (stopTrainingRun), while a stop that came first
    // wins and nothing is stored (the number is skipped, never reused). The artifact is stored
    // before the version record, and the record before the run is Completed.
    const version = await c.nextId(tenant, 'model');
    if (!(await c.update(tenant, 'job', id, { storing_version: version, _storing_since: now() }, { status: 'InProgress', storing_version: undefined, _attempt: attempt })))
      throw new Stopped('stopped');
    storingVersion = version;
    const key = modelArtifactKey(tenant, version);
    // Users whose erasure began before this run's read: their histories stay out of the artifact
    // (serving would not read them: the erasure's marker), as an erasure rewrites stored ones.
    const artifact: ModelArtifact = { model, items: full.items, popularity: Float32Array.from(full.itemWeight), histories, typeWeights };
    const erased = erasedFrom((await c.servingConfig(tenant)).erased_user, histories.trainedBefore);
    const stored = withoutUsers(artifact, erased) ?? artifact;
    await deps.blobs.put(key, packModel(stored));
    // Read once more before the version is listed: a run ended by another meanwhile (the
    // maintenance pass ends a run whose container task never recorded its id STORING_GRACE_SECONDS
    // after its storing mark, taking that task for gone: `sweepTaskRuns`) gets no version, its
    // trainer stopping quietly (until 2026-12-07 it stored the record beside the run ended Failed).
    if (await checkStop(true)) throw new Stopped('stopped');
    const rec: ModelVersion = {
      id: version,
      version,
      template_id: template.id,
      job_name: jobName,
      created: now(),
      algorithm,
      metrics,
      label: null,
      description: null,
      status: 'Trained',
      artifact: key,
      ...(validation ? { validation: storedValidation(validation) } : {}),
    };
    // Marked before the version is stored when its template asks for auto-promotion: the function
    // deciding it after the run's end may be cut off first, and the maintenance pass then decides
    // it (decideLeftPromotions).
    if (template.auto_promote) await c.put(tenant, 'promotion_due', { id, job_name: jobName, at: now() } satisfies PromotionDue);
    await c.put(tenant, 'model', rec);
    storedVersion = rec;
    // An erasure that began meanwhile may have listed the versions before this one was there:
    // read the markers again now it is, and take out of the artifact whoever it still holds.
    const holds = erasedFrom((await c.servingConfig(tenant)).erased_user, histories.trainedBefore);
    if (stored.histories && holdsAnyOf(stored.histories, holds)) await withoutErased(deps, tenant, key);
    // Its line only when it completed it: a run ended meanwhile by another (as interrupted) keeps
    // its end and log (until 2026-12-07 it said `Completed` of a run that was not).
    if (await c.update(tenant, 'job', id, completedWith(rec), { status: 'InProgress', storing_version: version })) await log(`Completed: version ${version}`);
    else movedOn(tenant, jobName, `it stored version ${version}`);
  } catch (e) {
    await written;
    if (e instanceof Stopped) {
      // Its line only when it ended it: a run that moved on meanwhile (ended by the task sweep or a
      // late delivery) keeps its own end and log.
      // Only this attempt's stop: one that moved away leaves a later attempt's to it.
      if (await c.update(tenant, 'job', id, { status: 'Stopped', finished_at: now() }, { status: 'Stopping', _attempt: attempt })) await log('Stopped; no version was created');
      else movedOn(tenant, jobName, 'it stopped');
      return;
    }
    const message = errorMessage(e);
    // Its version record may have landed though its write answered an error (its answer lost
    // after the SDK's last retry): read, as endInterruptedRun reads it. Until 2026-12-04 such a run
    // ended Failed beside the version it had stored.
    let unknown = false;
    const v =
      storedVersion ??
      (storingVersion !== undefined
        ? await c.get<ModelVersion>(tenant, 'model', storingVersion).catch(() => {
            unknown = true;
            return undefined;
          })
        : undefined);
    if (v) {
      // Its version is listed: the run is Completed with it (as endInterruptedRun ends a run that
      // stored its version), not Failed beside it; what failed after is logged and thrown.
      const completed = await c.update(tenant, 'job', id, completedWith(v), { status: 'InProgress', storing_version: v.version });
      await log(`After storing version ${v.version}: ${message}`);
      if (completed) await log(`Completed: version ${v.version}`);
      throw e;
    }
    if (unknown) {
      // Its version may be stored (its write answered an error) and the read of it failed: neither
      // Failed (beside a version it may have made) nor queued again (it would make a second). Left
      // InProgress with its storing mark, and thrown: what ends a run whose trainer is gone ends it
      // from what is stored (endInterruptedRun) once the trainer's time is surely over: the message
      // coming again past the worker's time limit, or the maintenance pass (sweepTaskRuns: a
      // worker's run past that limit, a task's once its task stopped; locally too). Until
      // 2026-12-07 it ended Failed, though its version might be listed.
      await log(`Could not tell whether version ${storingVersion} was stored (${message}): the run ends from what is stored once its trainer's time is over`).catch(() => undefined);
      throw e;
    }
    // A service busy after the client's retries (throttled: `serviceBusy`) is a moment's load, not
    // the run's fault: the run, acknowledged Queued, is queued again to start over (requeueBusyRun),
    // up to BUSY_RETRIES times, then ends Failed saying so. Its message is done (returned, not
    // thrown: a delivery again would start it at once, and its last one would end it Failed); the
    // maintenance pass sends another. Until 2026-12-07 it ended Failed at the first.
    const busy = serviceBusy(e);
    if (busy && (await requeueBusyRun(c, tenant, job, message, attempt))) return;
    // A container task that could not record its id hands its run back at its start (above), the
    // same way, counted as one of the same retries; past them, or the run no longer InProgress in
    // this attempt (asked to stop: ended Stopped below), it is not. A hand-back that fails (its
    // write refused for an error, thrown) ends the task at once: the run, left under its
    // unconfirmed claim, is ended by the maintenance pass five minutes after it started.
    const handBack = e instanceof ClaimUnconfirmed;
    if (handBack && (await requeueBusyRun(c, tenant, job, message, attempt, { handBack, busy: e.busy }))) return;
    // A run that ended meanwhile keeps its end; one asked to stop ends Stopped, as a stop answered
    // Stopping promises (until 2026-12-03 a failure after the stop ended it Failed), the failure logged.
    // Only this attempt (its `_attempt` token, and its `started_at`): a requeue whose answer was
    // lost (its retry refused, the run already Queued) may have been sent and started anew by now,
    // and that attempt is not this one's to end (until 2026-12-07 it was ended Failed as it ran;
    // then, until the token held it here, one started anew within the same second, as
    // `started_at` counts, still was). A requeue drops the token, so a start that writes none (a
    // trainer of before the token, in a rolling deploy) is not taken for this attempt's either.
    const failed = { status: 'Failed', finished_at: now(), error: busy ? busyFailure(message) : handBack ? handBackFailure(message) : message };
    if (await c.update(tenant, 'job', id, failed, { status: 'InProgress', started_at: startedAt, _attempt: attempt })) await log(`Failed: ${failed.error}`);
    else if (await c.update(tenant, 'job', id, { status: 'Stopped', finished_at: now() }, { status: 'Stopping', _attempt: attempt }))
      await log(`Stopped; no version was created (it failed as it stopped: ${message})`);
    else {
      // Neither: the run moved on meanwhile (ended by the task sweep or a late delivery; a requeue
      // whose answer was lost is known to have landed, and logged, by requeueBusyRun since
      // 2026-12-07, which answered false here before). Its log says nothing (until 2026-12-07 it said
      // `Failed: ...` of a run that was not), and its message is done: the run is in other hands
      // (thrown, the last delivery would end a run queued again Failed).
      movedOn(tenant, jobName, message);
      return;
    }
    // A run it ended (Failed on its data; a hand-back past its retries, or met by a stop) is done with.
    if (!(e instanceof ThresholdError || e instanceof ClaimUnconfirmed)) throw e;
  } finally {
    clearInterval(poll);
  }
}
