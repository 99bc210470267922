import type { ConsoleKind, ConsoleRecord, ConsoleStore } from '../data/console.ts';
import { ApiError, ConflictError, NotFoundError } from '../errors.ts';
import type { JobQueue } from '../jobs.ts';
import * as S from '../schemas/console.ts';
import type { z } from 'zod/mini';
import { nowSeconds } from './items.ts';

/*
 * Console records of the Platform API: event types, contexts, training templates, serving
 * endpoints, training jobs and trained versions.
 */

export interface EventType extends ConsoleRecord { name: string; weight: number; created: number }
export interface Context extends ConsoleRecord { name: string; description: string; created: number }
export interface Template extends ConsoleRecord {
  name: string;
  /** `weight` multiplies the event type's own weight in the runs trained from it (1 when not sent). */
  event_types: { id: number; weight: number }[];
  thresholds: { per_signal_min: number; total_min: number };
  status: 'Draft' | 'Published';
  created: number;
  updated_at: number;
  /** When runs start by themselves (absent on templates stored before schedules: none). */
  schedule?: S.ScheduleBody | null;
  /** The next scheduled run's due time (unix seconds); null without a schedule. */
  next_run_at?: number | null;
  /** The latest run a schedule started, and the due time it was started for. */
  last_scheduled_run?: { job_name: string; due_at: number } | null;
  /** Promote a completed run's version to an endpoint when it is good enough (see automation.ts). */
  auto_promote?: S.AutoPromoteBody | null;
  /**
   * Internal, not shown: the job id a maintenance pass claimed a due time for, until its run is
   * stored and queued (a pass that stopped half way is finished by the next one).
   */
  _unsent_job?: number | null;
}
export interface Endpoint extends ConsoleRecord { endpoint_name: string; is_default: boolean; model_version: number | null; created: number; updated_at: number }
export type JobStatus = 'Queued' | 'InProgress' | 'Stopping' | 'Stopped' | 'Completed' | 'Failed';
export interface Job extends ConsoleRecord {
  job_name: string;
  template_id: number;
  options: S.TrainingOptions;
  status: JobStatus;
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
   * Internal, not shown: set (only while Queued, once) by the training worker that hands the run
   * to a container task (shared/recs/launcher.ts), so a redelivered message starts no second one.
   */
  task?: RunTask;
}
/** A run handed to a container task: the launcher, when it was claimed, and the task once started. */
export interface RunTask {
  runner: string;
  claimed_at: number;
  /** The task's id (ECS task ARN, local process id) once it started. */
  ref?: string;
}
export interface ModelVersion extends ConsoleRecord {
  version: number;
  template_id: number;
  job_name: string;
  created: number;
  algorithm: string;
  metrics: Record<string, number>;
  label: string | null;
  description: string | null;
  status: 'Trained' | 'Approved';
  artifact: string;
  /** What the trainer chose on its validation split and how it scored there (`ndcg_at_10`, ...). */
  validation?: Record<string, unknown> | null;
  /** The template's auto-promotion decision on this version, once made (see automation.ts). */
  promotion?: Promotion;
}
/** An auto-promotion decision: promoted or not, and why. */
export interface Promotion {
  automatic: true;
  promoted: boolean;
  endpoint_name: string;
  /** The version the endpoint served when the decision was made (null: none). */
  compared_with: number | null;
  reason: string;
  at: number;
}

const list = <T>(data: T[]) => ({ data, has_more: false, next_cursor: null });
const notFound = (what: string, id: number | string) => new NotFoundError(`${what.replace(/ /g, '_')}_not_found`, `No ${what} ${id}.`);
const badState = (message: string) => new ApiError('invalid_request_error', 'invalid_state', message);

export const jobName = (id: number) => `train-${id}`;
export const jobId = (name: string) => Number(name.slice('train-'.length));

/**
 * Stores a new record whose name is unique in its kind (the caller has checked it is free). Two
 * creates of one name at once both pass that check; the one with the lower id keeps the name,
 * the other takes its record back and answers 409 (`exists`) as if it had come second.
 */
async function putNamed<T extends ConsoleRecord>(c: ConsoleStore, tenant: string, kind: ConsoleKind, rec: T, sameName: (r: T) => boolean, exists: () => Error): Promise<void> {
  await c.put(tenant, kind, rec);
  if ((await c.list<T>(tenant, kind)).some((r) => sameName(r) && r.id < rec.id)) {
    await c.withdraw(tenant, kind, rec.id);
    throw exists();
  }
}

// Event types
export async function createEventType(c: ConsoleStore, tenant: string, b: z.output<typeof S.eventTypeBody>) {
  const exists = () => new ConflictError('event_type_exists', `Event type ${b.name} exists.`);
  if ((await c.list<EventType>(tenant, 'event_type')).some((e) => e.name === b.name)) throw exists();
  const rec: EventType = { id: await c.nextId(tenant, 'event_type'), name: b.name, weight: b.weight, created: nowSeconds() };
  await putNamed(c, tenant, 'event_type', rec, (e) => e.name === b.name, exists);
  return rec;
}
export const listEventTypes = async (c: ConsoleStore, tenant: string) => list(await c.list<EventType>(tenant, 'event_type'));
export async function updateEventType(c: ConsoleStore, tenant: string, id: number, b: z.output<typeof S.eventTypePatch>) {
  if (!(await c.update(tenant, 'event_type', id, { weight: b.weight }))) throw notFound('event type', id);
  return (await c.get<EventType>(tenant, 'event_type', id)) as EventType;
}

// Contexts
export async function createContext(c: ConsoleStore, tenant: string, b: z.output<typeof S.contextBody>) {
  const rec: Context = { id: await c.nextId(tenant, 'context'), name: b.name, description: b.description, created: nowSeconds() };
  // The marker first: serving knows a context (its control Query lists it) once it is answered.
  await c.putContextMarker(tenant, rec.id);
  await c.put(tenant, 'context', rec);
  return rec;
}
export const listContexts = async (c: ConsoleStore, tenant: string) => list(await c.list<Context>(tenant, 'context'));

// Training templates
/** The template's event types as stored: known ids, each with its multiplier (1 when not sent). */
async function checkEventTypes(c: ConsoleStore, tenant: string, ids: { id: number; weight?: number | undefined }[]): Promise<Template['event_types']> {
  const known = new Set((await c.list<EventType>(tenant, 'event_type')).map((e) => e.id));
  const missing = ids.filter((e) => !known.has(e.id)).map((e) => e.id);
  if (missing.length) throw new ApiError('invalid_request_error', 'validation_error', `Unknown event type id(s): ${missing.join(', ')}.`);
  return ids.map((e) => ({ id: e.id, weight: e.weight ?? 1 }));
}
/** Interval of a schedule, in seconds. */
export const scheduleSeconds = (s: S.ScheduleBody): number => (s.every !== undefined ? S.EVERY_HOURS[s.every] : (s.every_hours as number)) * 3600;
/** The first due time of a schedule set at `now`: `start_at`, or the first interval after it still to come; without it, one interval from now. */
export function firstRunAt(s: S.ScheduleBody, now: number): number {
  const every = scheduleSeconds(s);
  if (s.start_at === undefined) return now + every;
  return s.start_at >= now ? s.start_at : s.start_at + Math.ceil((now - s.start_at) / every) * every;
}
/** The schedule's fields as a template stores them (a new schedule's next due time computed now). */
async function automationFields(c: ConsoleStore, tenant: string, b: { schedule?: S.ScheduleBody | null | undefined; auto_promote?: S.AutoPromoteBody | null | undefined }, now: number) {
  const out: Partial<Template> = {};
  if (b.schedule !== undefined) Object.assign(out, { schedule: b.schedule, next_run_at: b.schedule ? firstRunAt(b.schedule, now) : null });
  if (b.auto_promote !== undefined) {
    if (b.auto_promote && !(await findEndpoint(c, tenant, b.auto_promote.endpoint_name))) {
      throw new ApiError('invalid_request_error', 'validation_error', `auto_promote.endpoint_name: no serving endpoint ${b.auto_promote.endpoint_name}.`, {
        fieldErrors: { 'auto_promote.endpoint_name': [`No serving endpoint ${b.auto_promote.endpoint_name}.`] },
      });
    }
    out.auto_promote = b.auto_promote;
  }
  return out;
}
/** A template as answered: without internal fields, schedule fields null when never set. */
export const templateView = ({ _unsent_job: _u, ...t }: Template) => ({ ...t, schedule: t.schedule ?? null, next_run_at: t.next_run_at ?? null, last_scheduled_run: t.last_scheduled_run ?? null, auto_promote: t.auto_promote ?? null });
export async function createTemplate(c: ConsoleStore, tenant: string, b: z.output<typeof S.templateBody>) {
  const eventTypes = await checkEventTypes(c, tenant, b.event_types);
  const now = nowSeconds();
  const automation = await automationFields(c, tenant, b, now);
  const rec: Template = { id: await c.nextId(tenant, 'template'), name: b.name, event_types: eventTypes, thresholds: b.thresholds, status: 'Draft', created: now, updated_at: now, ...automation };
  await c.put(tenant, 'template', rec);
  return templateView(rec);
}
export const listTemplates = async (c: ConsoleStore, tenant: string) => list((await c.list<Template>(tenant, 'template')).map(templateView));
export async function findTemplate(c: ConsoleStore, tenant: string, id: number) {
  const t = await c.get<Template>(tenant, 'template', id);
  if (!t) throw notFound('template', id);
  return t;
}
export const getTemplate = async (c: ConsoleStore, tenant: string, id: number) => templateView(await findTemplate(c, tenant, id));
/**
 * A Draft template can be edited and published; a Published one is frozen (it is what runs
 * trained on), except for its schedule and auto-promotion policy, which change when it trains
 * and what happens to its versions, not what they train on.
 */
export async function updateTemplate(c: ConsoleStore, tenant: string, id: number, b: z.output<typeof S.templatePatch>) {
  const t = await findTemplate(c, tenant, id);
  const automationOnly = Object.keys(b).every((k) => (S.TEMPLATE_AUTOMATION_FIELDS as readonly string[]).includes(k));
  if (t.status === 'Published' && !automationOnly) throw badState(`Template ${id} is Published and can no longer be changed (except its schedule and auto_promote).`);
  const now = nowSeconds();
  const { schedule, auto_promote, ...rest } = b;
  const set = { ...rest, ...(b.event_types ? { event_types: await checkEventTypes(c, tenant, b.event_types) } : {}), ...(await automationFields(c, tenant, { schedule, auto_promote }, now)), updated_at: now };
  if (!(await c.update(tenant, 'template', id, set, automationOnly ? {} : { status: 'Draft' }))) throw badState(`Template ${id} changed meanwhile; retry.`);
  return getTemplate(c, tenant, id);
}

// Serving endpoints
export async function createEndpoint(c: ConsoleStore, tenant: string, b: z.output<typeof S.endpointBody>) {
  const exists = () => new ConflictError('endpoint_exists', `Endpoint ${b.endpoint_name} exists.`);
  const all = await c.list<Endpoint>(tenant, 'endpoint');
  if (all.some((e) => e.endpoint_name === b.endpoint_name)) throw exists();
  const now = nowSeconds();
  // One default per tenant: the first endpoint is the default; a new default takes over.
  const isDefault = b.is_default || all.length === 0;
  const rec: Endpoint = { id: await c.nextId(tenant, 'endpoint'), endpoint_name: b.endpoint_name, is_default: isDefault, model_version: null, created: now, updated_at: now };
  // Before it takes the default over: a create that loses its name changes nothing.
  await putNamed(c, tenant, 'endpoint', rec, (e) => e.endpoint_name === b.endpoint_name, exists);
  if (isDefault) for (const e of all.filter((x) => x.is_default)) await c.update(tenant, 'endpoint', e.id, { is_default: false, updated_at: now });
  return rec;
}
/** The endpoints, exactly one of them the default (see `pickEndpoint`). */
export async function listEndpoints(c: ConsoleStore, tenant: string) {
  const all = await c.list<Endpoint>(tenant, 'endpoint');
  const d = pickEndpoint(all, undefined);
  return list(all.map((e) => (e.is_default && e !== d ? { ...e, is_default: false } : e)));
}
/**
 * The endpoint by name, or the default one when no name is given: the newest endpoint created
 * as default. Two defaults created at once both write `is_default` before either clears the
 * other's; the newer one is the default, as if they had come one after the other.
 */
export function pickEndpoint(all: readonly Endpoint[], name: string | undefined): Endpoint | undefined {
  if (name !== undefined) return all.find((e) => e.endpoint_name === name);
  let d: Endpoint | undefined;
  for (const e of all) if (e.is_default && (!d || e.id > d.id)) d = e;
  return d;
}

export async function findEndpoint(c: ConsoleStore, tenant: string, name: string | undefined): Promise<Endpoint | undefined> {
  return pickEndpoint(await c.list<Endpoint>(tenant, 'endpoint'), name);
}

// Training jobs
export async function startTraining(c: ConsoleStore, queue: JobQueue, tenant: string, b: S.TrainingJobBody) {
  const t = await findTemplate(c, tenant, b.template_id);
  if (t.status !== 'Published') throw badState(`Template ${t.id} is a Draft: publish it (PATCH {"status":"Published"}) before training from it.`);
  return queueRun(c, queue, tenant, t, await c.nextId(tenant, 'job'), b.options);
}
/**
 * Stores run `id` of a template as Queued (unless a record with that id exists: a scheduled run
 * whose pass is finished by another stores it once) and sends it to the training queue (a
 * second message for a run does nothing: only a Queued run starts).
 */
export async function queueRun(c: ConsoleStore, queue: JobQueue, tenant: string, t: Template, id: number, options: S.TrainingOptions, scheduledAt?: number) {
  const job: Job = {
    id, job_name: jobName(id), template_id: t.id, options, status: 'Queued', progress: 0, created: nowSeconds(),
    started_at: null, finished_at: null, error: null, model_version: null, metrics: null, ...(scheduledAt !== undefined ? { scheduled_at: scheduledAt } : {}),
  };
  if (await c.replace(tenant, 'job', job, 'new')) {
    const by = scheduledAt !== undefined ? `, by its schedule (due ${new Date(scheduledAt * 1000).toISOString()})` : '';
    await c.appendLog(tenant, id, [{ ts: nowSeconds(), message: `Queued: template ${t.id} (${t.name})${by}, options ${JSON.stringify(options)}` }]);
  }
  await queue.send('training', [{ type: 'train', tenant, job_name: job.job_name }]);
  return job;
}
export const jobView = ({ id: _id, storing_version: _s, task: _t, ...j }: Job) => ({ ...j, scheduled_at: j.scheduled_at ?? null });
/** The id of the job a name can belong to: exactly the name jobName gives it, else none. */
const jobIdOf = (name: string): number | undefined => {
  const id = jobId(name);
  return Number.isSafeInteger(id) && id > 0 && jobName(id) === name ? id : undefined;
};
/** A job name is opaque to a client: any name that is not one of the tenant's jobs is not found. */
export async function getJob(c: ConsoleStore, tenant: string, name: string) {
  const id = jobIdOf(name);
  const j = id === undefined ? undefined : await c.get<Job>(tenant, 'job', id);
  if (!j) throw notFound('training job', name.length > 64 ? `${name.slice(0, 64)}...` : name);
  return j;
}
export const jobResource = async (c: ConsoleStore, tenant: string, name: string) => jobView(await getJob(c, tenant, name));
export const listJobs = async (c: ConsoleStore, tenant: string) => list((await c.list<Job>(tenant, 'job')).sort((a, b) => b.id - a.id).map(jobView));
/**
 * Queued runs stop at once; running ones at the trainer's next check, leaving no version (the
 * trainer stores a version only if it marks the run before a stop does). Each change is
 * conditional on the status read: when the run moved meanwhile (the trainer took it up, or it
 * ended), the job is read again and the stop decided on what it is now.
 */
export async function stopJob(c: ConsoleStore, tenant: string, name: string) {
  // Every retry follows a change of status, and a run changes status at most 3 times.
  for (let attempt = 0; attempt < 5; attempt++) {
    const j = await getJob(c, tenant, name);
    if (j.status === 'Queued') {
      if (!(await c.update(tenant, 'job', j.id, { status: 'Stopped', finished_at: nowSeconds() }, { status: 'Queued' }))) continue;
      await c.appendLog(tenant, j.id, [{ ts: nowSeconds(), message: 'Stopped before it started' }]);
    } else if (j.status === 'InProgress') {
      if (j.storing_version !== undefined) throw badState(`Training job ${name} is storing its new version and can no longer be stopped.`);
      if (!(await c.update(tenant, 'job', j.id, { status: 'Stopping' }, { status: 'InProgress', storing_version: undefined }))) continue;
      await c.appendLog(tenant, j.id, [{ ts: nowSeconds(), message: 'Stop requested' }]);
    } else if (j.status !== 'Stopping' && j.status !== 'Stopped') {
      throw badState(`Training job ${name} is ${j.status}; only a Queued or InProgress run can be stopped.`);
    }
    return jobResource(c, tenant, name);
  }
  throw badState(`Training job ${name} kept changing; retry.`);
}
export async function jobLogs(c: ConsoleStore, tenant: string, name: string, cursor: string | undefined, limit: number) {
  const j = await getJob(c, tenant, name);
  const page = await c.logs(tenant, j.id, cursor, limit);
  return { job_name: name, lines: page.lines, next_cursor: page.cursor };
}

// Trained versions
async function modelView(c: ConsoleStore, tenant: string, m: ModelVersion, all?: Endpoint[]) {
  const endpoints = (all ?? (await c.list<Endpoint>(tenant, 'endpoint'))).filter((e) => e.model_version === m.version).map((e) => e.endpoint_name);
  const { id: _id, artifact: _a, ...rest } = m;
  return { ...rest, promotion: m.promotion ?? null, endpoints };
}
export async function getModel(c: ConsoleStore, tenant: string, version: number) {
  const m = await c.get<ModelVersion>(tenant, 'model', version);
  if (!m) throw notFound('model version', version);
  return m;
}
export const modelResource = async (c: ConsoleStore, tenant: string, version: number) => modelView(c, tenant, await getModel(c, tenant, version));
export async function listModels(c: ConsoleStore, tenant: string) {
  const [all, endpoints] = await Promise.all([c.list<ModelVersion>(tenant, 'model'), c.list<Endpoint>(tenant, 'endpoint')]);
  return list(await Promise.all(all.sort((a, b) => b.version - a.version).map((m) => modelView(c, tenant, m, endpoints))));
}

/**
 * Which way a measure is better: ranking quality and coverage higher, losses and errors lower;
 * anything else (counts of users or interactions, chosen hyperparameters) is shown, not ranked.
 */
export function betterWhen(name: string): 'higher' | 'lower' | null {
  if (/(^|_)(loss|error|rmse|mae)(_|$)/.test(name)) return 'lower';
  if (/^(ndcg|precision|recall|map|mrr|hit_rate|auc)(_at_[0-9]+)?$/.test(name) || name === 'coverage') return 'higher';
  return null;
}
/** Each numeric field of the records side by side, by version, with the versions that score best on it. */
function sideBySide(versions: number[], records: (Record<string, unknown> | null | undefined)[]) {
  const names = [...new Set(records.flatMap((r) => (r ? Object.keys(r).filter((k) => typeof r[k] === 'number') : [])))];
  return names.map((name) => {
    const values: Record<string, number | null> = {};
    versions.forEach((v, i) => {
      const x = records[i]?.[name];
      values[String(v)] = typeof x === 'number' ? x : null;
    });
    const better = betterWhen(name);
    const present = Object.values(values).filter((x): x is number => x !== null);
    const top = better === 'higher' ? Math.max(...present) : Math.min(...present);
    const best = better && present.length ? versions.filter((v) => values[String(v)] === top) : null;
    return { name, higher_is_better: better === null ? null : better === 'higher', values, best };
  });
}
/** `GET /api/models/compare?versions=3,4`: the versions, their holdout metrics and validation figures side by side. */
export async function compareModels(c: ConsoleStore, tenant: string, versions: number[]) {
  const [found, endpoints] = await Promise.all([Promise.all(versions.map((v) => c.get<ModelVersion>(tenant, 'model', v))), c.list<Endpoint>(tenant, 'endpoint')]);
  const missing = versions.filter((_, i) => !found[i]);
  if (missing.length) throw new NotFoundError('model_version_not_found', `No model version ${missing.join(', ')}.`);
  const models = found as ModelVersion[];
  return {
    versions,
    models: await Promise.all(models.map((m) => modelView(c, tenant, m, endpoints))),
    metrics: sideBySide(versions, models.map((m) => m.metrics)),
    validation: sideBySide(versions, models.map((m) => m.validation)),
  };
}
export async function updateModel(c: ConsoleStore, tenant: string, version: number, b: z.output<typeof S.modelPatch>) {
  await getModel(c, tenant, version);
  await c.update(tenant, 'model', version, b);
  return modelResource(c, tenant, version);
}
export async function approveModel(c: ConsoleStore, tenant: string, version: number) {
  await getModel(c, tenant, version);
  await c.update(tenant, 'model', version, { status: 'Approved' });
  return modelResource(c, tenant, version);
}
/** Only an approved version can serve; the endpoint serves it from its next request. */
export async function promoteModel(c: ConsoleStore, tenant: string, version: number, endpointName: string) {
  const m = await getModel(c, tenant, version);
  if (m.status !== 'Approved') throw badState(`Version ${version} is not approved: approve it before promoting it.`);
  const e = await findEndpoint(c, tenant, endpointName);
  if (!e) throw notFound('endpoint', endpointName);
  await c.update(tenant, 'endpoint', e.id, { model_version: version, updated_at: nowSeconds() });
  return modelResource(c, tenant, version);
}
