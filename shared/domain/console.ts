import type { ConsoleKind, ConsoleRecord, ConsoleStore } from '../data/console.ts';
import { ApiError, ConflictError, NotFoundError } from '../errors.ts';
import type { JobQueue } from '../jobs.ts';
import type * as S from '../schemas/console.ts';
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
  /**
   * Internal, not shown: set by the trainer (from InProgress, only if no stop came first) once
   * it begins storing this version. From then on a stop is refused, so a run answered `Stopping`
   * never ends `Completed`.
   */
  storing_version?: number;
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
export async function createTemplate(c: ConsoleStore, tenant: string, b: z.output<typeof S.templateBody>) {
  const eventTypes = await checkEventTypes(c, tenant, b.event_types);
  const now = nowSeconds();
  const rec: Template = { id: await c.nextId(tenant, 'template'), name: b.name, event_types: eventTypes, thresholds: b.thresholds, status: 'Draft', created: now, updated_at: now };
  await c.put(tenant, 'template', rec);
  return rec;
}
export const listTemplates = async (c: ConsoleStore, tenant: string) => list(await c.list<Template>(tenant, 'template'));
export async function getTemplate(c: ConsoleStore, tenant: string, id: number) {
  const t = await c.get<Template>(tenant, 'template', id);
  if (!t) throw notFound('template', id);
  return t;
}
/** A Draft template can be edited and published; a Published one is frozen (it is what runs trained on). */
export async function updateTemplate(c: ConsoleStore, tenant: string, id: number, b: z.output<typeof S.templatePatch>) {
  const t = await getTemplate(c, tenant, id);
  if (t.status === 'Published') throw badState(`Template ${id} is Published and can no longer be changed.`);
  const set = { ...b, ...(b.event_types ? { event_types: await checkEventTypes(c, tenant, b.event_types) } : {}), updated_at: nowSeconds() };
  if (!(await c.update(tenant, 'template', id, set, { status: 'Draft' }))) throw badState(`Template ${id} changed meanwhile; retry.`);
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
  const t = await getTemplate(c, tenant, b.template_id);
  if (t.status !== 'Published') throw badState(`Template ${t.id} is a Draft: publish it (PATCH {"status":"Published"}) before training from it.`);
  const id = await c.nextId(tenant, 'job');
  const job: Job = {
    id, job_name: jobName(id), template_id: t.id, options: b.options, status: 'Queued', progress: 0, created: nowSeconds(),
    started_at: null, finished_at: null, error: null, model_version: null, metrics: null,
  };
  await c.put(tenant, 'job', job);
  await c.appendLog(tenant, id, [{ ts: nowSeconds(), message: `Queued: template ${t.id} (${t.name}), options ${JSON.stringify(b.options)}` }]);
  await queue.send('training', [{ type: 'train', tenant, job_name: job.job_name }]);
  return job;
}
const jobView = ({ id: _id, storing_version: _s, ...j }: Job) => j;
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
async function modelView(c: ConsoleStore, tenant: string, m: ModelVersion) {
  const endpoints = (await c.list<Endpoint>(tenant, 'endpoint')).filter((e) => e.model_version === m.version).map((e) => e.endpoint_name);
  const { id: _id, artifact: _a, ...rest } = m;
  return { ...rest, endpoints };
}
export async function getModel(c: ConsoleStore, tenant: string, version: number) {
  const m = await c.get<ModelVersion>(tenant, 'model', version);
  if (!m) throw notFound('model version', version);
  return m;
}
export const modelResource = async (c: ConsoleStore, tenant: string, version: number) => modelView(c, tenant, await getModel(c, tenant, version));
export async function listModels(c: ConsoleStore, tenant: string) {
  const all = (await c.list<ModelVersion>(tenant, 'model')).sort((a, b) => b.version - a.version);
  return list(await Promise.all(all.map((m) => modelView(c, tenant, m))));
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
