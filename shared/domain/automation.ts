import { nowSeconds } from '../clock.ts';
import { serviceBusy } from '../data/busy.ts';
import { logger } from '../observability.ts';
import { withRetry } from '../retry.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { DEFAULT_TRAINING_OPTIONS } from '../schemas/console.ts';
import type { ConsoleRecord, ConsoleStore } from './console-records.ts';
import { findEndpoint, keptByName } from './endpoints.ts';
import { promotionEntry, promotionOf, type ModelVersion, type Promotion } from './model-versions.ts';
import { scheduleSeconds, type Template } from './templates.ts';
import { ACTIVE_STATUSES, trainingRunId, trainingRunName, queueRun, type TrainingRun, WORKER_RUN_LOST_SECONDS } from './training-runs.ts';
import { errorMessage } from './errors.ts';

/*
 * Training that runs itself: a template's schedule starts runs from the maintenance pass, and
 * its auto-promotion policy decides, when a run from it completes, whether its version serves.
 */

/** The first due time after `due` still to come at `now`: due times missed meanwhile make one run, not one each. */
export function nextAfter(due: number, every: number, now: number): number {
  return due + Math.max(1, Math.floor((now - due) / every) + 1) * every;
}

/**
 * How old a claim is before another pass finishes it: twice the maintenance pass's timeout
 * (shared/queue/workers.ts, 60 s), so the pass that made it has surely stopped.
 */
export const CLAIM_GRACE_SECONDS = 120;

/**
 * Starts the tenant's scheduled runs that are due (Published templates whose `next_run_at` has
 * come), once per due time however many passes overlap: a pass claims a due time by moving the
 * template's `next_run_at` on, conditionally on the value it read, so only one pass's claim
 * holds. The claim names the run's job id and when it was made; the run is stored and queued
 * after it, and a pass that stopped in between is finished by a pass at least
 * CLAIM_GRACE_SECONDS later (storing the run only if it is not there, sending its message again:
 * a run starts only once). A claim younger than that belongs to a pass still delivering it, and
 * is left to it. Answers the job names started.
 */
export async function startDueRuns(deps: { console: ConsoleStore; queue: WorkQueue }, tenant: string, now: number): Promise<string[]> {
  const c = deps.console;
  const started: string[] = [];
  for (const t of await c.list<Template>(tenant, 'template')) {
    if (typeof t._unsent_job === 'number' && !(typeof t._unsent_since === 'number' && now - t._unsent_since < CLAIM_GRACE_SECONDS)) {
      started.push(await deliver(deps, tenant, t, t._unsent_job));
    }
    const due = t.next_run_at;
    if (!t.schedule || typeof due !== 'number' || due > now || t.status !== 'Published') continue;
    const id = await c.nextId(tenant, 'job');
    const claim = { next_run_at: nextAfter(due, scheduleSeconds(t.schedule), now), last_scheduled_run: { job_name: trainingRunName(id), due_at: due }, _unsent_job: id, _unsent_since: now };
    // Another pass claimed this due time first (or the schedule changed): its run, not this one.
    if (!(await c.update(tenant, 'template', t.id, claim, { next_run_at: due }))) continue;
    started.push(await deliver(deps, tenant, { ...t, ...claim }, id));
  }
  return [...new Set(started)];
}

/** Stores and queues the run a pass claimed, then clears the claim. */
async function deliver(deps: { console: ConsoleStore; queue: WorkQueue }, tenant: string, t: Template, id: number): Promise<string> {
  const dueAt = t.last_scheduled_run?.job_name === trainingRunName(id) ? t.last_scheduled_run.due_at : nowSeconds();
  await queueRun(deps.console, deps.queue, tenant, t, id, t.schedule?.options ?? { ...DEFAULT_TRAINING_OPTIONS }, dueAt);
  await deps.console.update(tenant, 'template', t.id, { _unsent_job: null, _unsent_since: null }, { _unsent_job: id });
  return trainingRunName(id);
}

type NdcgSource = 'validation' | 'holdout';
/** A version's nDCG@10 of one kind (`source`), if it has it. */
function ndcgFrom(m: ModelVersion, source: NdcgSource): { value: number; source: NdcgSource } | undefined {
  const x = source === 'validation' ? m.validation?.ndcg_at_10 : m.metrics?.ndcg_at_10;
  return typeof x === 'number' && Number.isFinite(x) ? { value: x, source } : undefined;
}
/** A version's nDCG@10 for promotion: its validation figure, else its holdout metric. */
const ndcgOf = (m: ModelVersion) => ndcgFrom(m, 'validation') ?? ndcgFrom(m, 'holdout');
/**
 * The two versions' nDCG@10 measured alike: both validation figures, else both holdout metrics
 * (a validation figure against a holdout one compares two measures: an auto run's validation
 * 0.417 cleared a serving EASE version's holdout 0.255 x 1.3 with a holdout of its own of 0.216).
 */
function ndcgAlike(mine: ModelVersion, theirs: ModelVersion): { mine: { value: number; source: NdcgSource }; theirs: { value: number; source: NdcgSource } } | undefined {
  for (const source of ['validation', 'holdout'] as const) {
    const a = ndcgFrom(mine, source);
    const b = ndcgFrom(theirs, source);
    if (a && b) return { mine: a, theirs: b };
  }
  return undefined;
}
const fmt = (x: number) => String(Number(x.toFixed(4)));
const fmtFactor = (f: number) => (Number.isInteger(f) ? f.toFixed(1) : String(f));

/**
 * When run `name` has completed and its template has an auto-promotion policy: promotes the
 * run's version to the policy's endpoint if its validation nDCG@10 is at least the serving
 * version's times `min_factor`, approving it with the decision, else leaves it as it is; either
 * way the version record says so and why (`promotion`), once: a decision already recorded
 * stands. The endpoint is changed only if it still serves what the decision compared with
 * (else the decision is made again); a decider that stopped after changing it finds its
 * version serving when the message comes again, and records that.
 * Answers the decision, or undefined when there is none to make.
 */
export async function decideAutoPromotion(c: ConsoleStore, tenant: string, name: string, until = Number.POSITIVE_INFINITY): Promise<Promotion | undefined> {
  // A busy table (throttled after the client's own retries) is waited out: the decision is made
  // once, after the run Completed, and nothing else decides it for 16 minutes (the maintenance
  // pass's `decideLeftPromotions`; a worker's message comes again only after 90 min): until
  // 2026-12-07 one throttled read or write left the version's `promotion` null for good.
  // Each try starts over from what is stored (a decision recorded meanwhile stands), but keeps
  // the decision whose endpoint write landed before a later step was refused (`landed`). With
  // `until` (performance.now() time: the maintenance pass's budget), no wait runs past it: the
  // busy failure is thrown then, and the pass tries again at its next run. Once a try's promotion
  // has landed on the endpoint (`landed`, with its audit entry), the decision is finished, its
  // record and log written, within LANDED_DECISION_GRACE_MS past the budget. Cut there, the next
  // pass started over without it and recorded "already serves", compared with the version itself
  // (9d463ade, until a review on 2026-12-07).
  const tries: DecideTries = {};
  return withRetry(
    DECIDE_RETRY,
    async () => {
      try {
        return { value: await decideOnce(c, tenant, name, tries) };
      } catch (e) {
        return { failure: e, retryable: serviceBusy(e) };
      }
    },
    () => (tries.landed ? until + LANDED_DECISION_GRACE_MS : until),
  );
}

/**
 * How long past a caller's time budget (`decideAutoPromotion`'s `until`) a decision whose promotion
 * landed on the endpoint still waits out a busy table to write its record: the maintenance pass's
 * budget (40 s) and this stay within its function's 60 s.
 */
export const LANDED_DECISION_GRACE_MS = 15_000;

/** How a decision is tried again while the table is busy: 6 tries, waits of up to 1, 2, 4, 8 and 16 s (full jitter: about 15 s in all on average). */
const DECIDE_RETRY = { attempts: 6, baseMs: 500, maxMs: 16_000, jitter: 'full' } as const;

/**
 * What one try of a decision tells the next: the decision whose promotion it wrote to the endpoint
 * (before its approval or keptByName's read was refused for load). The next try finds its version
 * serving there and records that decision, not one "already serving" compared with itself (until
 * 2026-12-07 the retry recorded `compared_with` the version itself, though the audit trail's entry
 * of that write says what it replaced).
 */
interface DecideTries {
  landed?: Promotion | undefined;
}

async function decideOnce(c: ConsoleStore, tenant: string, name: string, tries: DecideTries = {}): Promise<Promotion | undefined> {
  const id = trainingRunId(name);
  if (!Number.isSafeInteger(id) || trainingRunName(id) !== name) return undefined;
  const job = await c.get<TrainingRun>(tenant, 'job', id);
  if (job?.status !== 'Completed' || job.model_version === null) return undefined;
  const policy = (await c.get<Template>(tenant, 'template', job.template_id))?.auto_promote;
  if (!policy) return undefined;
  const version = job.model_version;
  for (let attempt = 0; attempt < 5; attempt++) {
    const m = await c.get<ModelVersion>(tenant, 'model', version);
    if (!m) return undefined;
    if (m.promotion) return m.promotion;
    const endpoint = await findEndpoint(c, tenant, policy.endpoint_name);
    const serving = endpoint?.model_version ?? null;
    const decide = (promoted: boolean, reason: string): Promotion => ({ automatic: true, promoted, endpoint_name: policy.endpoint_name, compared_with: serving, reason, at: nowSeconds() });
    let decision: Promotion;
    const mine = ndcgOf(m);
    if (!endpoint) decision = decide(false, `no serving endpoint ${policy.endpoint_name}`);
    else if (serving === version && tries.landed?.endpoint_name === policy.endpoint_name) decision = tries.landed;
    else if (serving === version) decision = decide(true, `version ${version} already serves ${endpoint.endpoint_name}`);
    else if (!mine) decision = decide(false, `version ${version} has no nDCG@10 to compare`);
    else if (serving === null) decision = decide(true, `${mine.source} nDCG@10 ${fmt(mine.value)}; no version served ${endpoint.endpoint_name}`);
    else {
      const servingRec = await c.get<ModelVersion>(tenant, 'model', serving);
      const theirs = servingRec ? ndcgOf(servingRec) : undefined;
      const alike = servingRec ? ndcgAlike(m, servingRec) : undefined;
      if (!theirs) decision = decide(true, `${mine.source} nDCG@10 ${fmt(mine.value)}; version ${serving} serving ${endpoint.endpoint_name} has no nDCG@10 to compare with`);
      else if (!alike)
        decision = decide(
          false,
          `version ${version} has a ${mine.source} nDCG@10 and version ${serving} serving ${endpoint.endpoint_name} a ${theirs.source} one only: no figure measured alike to compare`,
        );
      else {
        const ok = alike.mine.value >= alike.theirs.value * policy.min_factor;
        decision = decide(
          ok,
          `${alike.mine.source} nDCG@10 ${fmt(alike.mine.value)} ${ok ? '>=' : '<'} ${fmt(alike.theirs.value)} x ${fmtFactor(policy.min_factor)} of version ${serving} serving ${endpoint.endpoint_name}`,
        );
      }
    }
    // Only if the endpoint still serves what was compared with (none: null, as a promotion made by
    // hand within the second of its updated_at leaves that as it was): else decide again.
    if (decision.promoted && endpoint && serving !== version) {
      // Written with its audit entry (resource model-endpoints/<id>), as a promotion by hand is.
      const at = nowSeconds();
      const entry = promotionEntry(await c.auditId(tenant), `auto_promote:templates/${job.template_id}`, endpoint, version, at);
      const write = promotionOf(endpoint, version, at);
      if (!(await c.update(tenant, 'endpoint', endpoint.id, write.set, write.expect, { entry }))) continue;
      tries.landed = decision;
      // Written to a record a create of its name at once is taking back: decided again on the one kept.
      if (!(await keptByName(c, tenant, endpoint))) {
        tries.landed = undefined;
        continue;
      }
    }
    // Approved with the decision that promoted it (a refused version stays as it was).
    if (!(await c.update(tenant, 'model', version, { promotion: decision, ...(decision.promoted ? { status: 'Approved' } : {}) }, { promotion: undefined }))) continue;
    await c.appendLog(tenant, id, [{ ts: nowSeconds(), message: `Auto-promotion to ${policy.endpoint_name}: ${decision.promoted ? 'promoted' : 'not promoted'} (${decision.reason})` }]);
    return decision;
  }
  return (await c.get<ModelVersion>(tenant, 'model', version))?.promotion;
}

/**
 * A run whose template asked for auto-promotion as it stored its version (kind `promotion_due`, by
 * the run's id), marked before the version is stored: the maintenance pass decides what its
 * trainer did not (`decideLeftPromotions`), then takes the mark out.
 */
export interface PromotionDue extends ConsoleRecord {
  id: number;
  job_name: string;
  /** Unix seconds: when the version was about to be stored. */
  at: number;
}

/**
 * How old a mark is before the maintenance pass decides its run's promotion: the training worker's
 * time limit and a minute (`WORKER_RUN_LOST_SECONDS`), so the function that stored the version, a
 * worker or a container task, has decided it (a task decides within a minute of its run's end) or
 * has surely stopped. A decider still at it then changes nothing twice: a decision is recorded
 * once (conditionally on none), and the endpoint written once, with its one audit entry.
 */
export const PROMOTION_REVISIT_SECONDS = WORKER_RUN_LOST_SECONDS;

/**
 * The maintenance pass's look at the tenant's runs marked for an auto-promotion decision at least
 * PROMOTION_REVISIT_SECONDS ago (`PromotionDue`): a run still waiting or running is left for a
 * later pass; an ended one whose version has no `promotion` is decided (`decideAutoPromotion`);
 * then the mark goes. Until 2026-12-07 the decision was made only by the function that completed
 * the run, and nothing revisited it: a worker or task cut off between the run's end and the
 * decision (its time limit, a crash, a pass past its time) left the version undecided for good.
 * No decision starts past `until` (performance.now() time), nor waits out a busy table past it
 * (until 2026-12-07 one started just inside it could wait some 30 s past it); one that fails is
 * logged and tried at the next pass. Answers the runs it decided.
 */
export async function decideLeftPromotions(c: ConsoleStore, tenant: string, now: number, until = Number.POSITIVE_INFINITY): Promise<string[]> {
  const decided: string[] = [];
  for (const due of await c.list<PromotionDue>(tenant, 'promotion_due')) {
    if (performance.now() >= until) break;
    if (now - due.at < PROMOTION_REVISIT_SECONDS) continue;
    try {
      const run = await c.get<TrainingRun>(tenant, 'job', due.id);
      if (run && ACTIVE_STATUSES.has(run.status)) continue;
      const version = run?.status === 'Completed' ? run.model_version : null;
      const undecided = version !== null && !(await c.get<ModelVersion>(tenant, 'model', version))?.promotion;
      if (undecided && (await decideAutoPromotion(c, tenant, due.job_name, until))) decided.push(due.job_name);
    } catch (e) {
      logger.error('auto-promotion not decided (the next pass tries again)', { tenant, run: due.job_name, error: errorMessage(e) });
      continue;
    }
    // A removal refused (a busy table) leaves the mark for the next pass, which finds the version
    // decided and takes it out; the tenant's other marks are still revisited (until 2026-12-07 the
    // refusal ended the tenant's revisit for the pass, as did a refused read of a run).
    await c.remove(tenant, 'promotion_due', due.id).catch((e: unknown) => {
      logger.error('auto-promotion mark not removed (the next pass removes it)', { tenant, run: due.job_name, error: errorMessage(e) });
    });
  }
  return decided;
}
