/**
 * The demo's model, set up as a tenant would through the Platform API (the same domain calls its
 * handlers make, with bodies parsed by the same schemas): event types, a published template, a
 * default endpoint, a training run; its version approved and promoted.
 */
import type { ConsoleStore } from '../domain/console-records.ts';
import { approveModel, promoteModel } from '../domain/model-versions.ts';
import { createEndpoint, type Endpoint } from '../domain/endpoints.ts';
import { createEventType, type EventType } from '../domain/event-types.ts';
import { createTemplate, updateTemplate, type Template } from '../domain/templates.ts';
import { getTrainingRun, startTraining, type TrainingRun } from '../domain/training-runs.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { endpointBody, eventTypeBody, templateBody, templatePatch, trainingJobBody } from '../schemas/console.ts';
import { DEMO_EVENT_TYPES, type DemoEventType } from './shoppers.ts';

/** How much each kind of event says about a shopper's taste. */
export const DEMO_EVENT_WEIGHTS: Record<DemoEventType, number> = { view: 1, add_to_cart: 4, purchase: 10 };
export const DEMO_TEMPLATE = 'demo shop';
export const DEMO_ENDPOINT = 'main';

export class DemoStopped extends Error {
  override name = 'DemoStopped';
}

export const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new DemoStopped('stopped'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new DemoStopped('stopped'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** The event types, a published template over them and a default endpoint, each unless it exists; answers the template's id. */
export async function setUpTraining(c: ConsoleStore, tenant: string): Promise<number> {
  const types = await c.list<EventType>(tenant, 'event_type');
  const ids: number[] = [];
  for (const name of DEMO_EVENT_TYPES) {
    const found = types.find((t) => t.name === name) ?? (await createEventType(c, tenant, eventTypeBody.parse({ name, weight: DEMO_EVENT_WEIGHTS[name] })));
    ids.push(found.id);
  }
  let template = (await c.list<Template>(tenant, 'template')).find((t) => t.name === DEMO_TEMPLATE);
  template ??= await createTemplate(c, tenant, templateBody.parse({ name: DEMO_TEMPLATE, event_types: ids.map((id) => ({ id })), thresholds: { per_signal_min: 10, total_min: 100 } }));
  if (template.status !== 'Published') await updateTemplate(c, tenant, template.id, templatePatch.parse({ status: 'Published' }));
  if (!(await c.list<Endpoint>(tenant, 'endpoint')).some((e) => e.endpoint_name === DEMO_ENDPOINT)) {
    await createEndpoint(c, tenant, endpointBody.parse({ endpoint_name: DEMO_ENDPOINT, is_default: true }));
  }
  return template.id;
}

/**
 * Waits for run `jobName` (recorded by an earlier start) to end, starting a run when there is
 * none; answers the Completed run. An earlier run still Queued or InProgress (the stack's start
 * queued it again, or its worker runs it) is waited for: a new run is started only when it ended
 * Failed or Stopped, or cannot be read. Until 2026-12-05 a run not Completed was passed over and a
 * new one started, and both trained: endpoint "main" served version 2.
 */
export async function train(c: ConsoleStore, queue: WorkQueue, tenant: string, templateId: number, jobName: string | null, onStart: (job: string) => void, signal?: AbortSignal): Promise<TrainingRun> {
  let name = jobName;
  let earlier = name !== null;
  for (;;) {
    if (name === null) {
      name = (await startTraining(c, queue, tenant, trainingJobBody.parse({ template_id: templateId, options: { algorithm: 'ease' } }))).job_name;
      earlier = false;
      onStart(name);
    }
    const job = earlier ? await getTrainingRun(c, tenant, name).catch(() => undefined) : await getTrainingRun(c, tenant, name);
    if (job?.status === 'Completed') return job;
    if (!job || job.status === 'Failed' || job.status === 'Stopped') {
      if (earlier) {
        name = null;
        continue;
      }
      throw new Error(`training run ${name} ended ${job?.status}${job?.error ? `: ${job.error}` : ''}`);
    }
    await pause(250, signal);
  }
}

/** Approves the version and has the demo endpoint serve it. */
export async function approveAndPromote(c: ConsoleStore, tenant: string, version: number): Promise<void> {
  await approveModel(c, tenant, version);
  await promoteModel(c, tenant, version, DEMO_ENDPOINT);
}
