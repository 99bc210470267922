import type { z } from 'zod/mini';
import { canonicalJson } from '../canonical-json.ts';
import { nowSeconds } from '../clock.ts';
import * as S from '../schemas/console.ts';
import { newId, notFound, recordPage, storedBefore, type ConsoleRecord, type ConsoleStore } from './console-records.ts';
import { findEndpoint } from './endpoints.ts';
import { Conflict, InvalidInput, PreconditionFailed } from './errors.ts';
import type { EventType } from './event-types.ts';
import type { IdPlan } from './types.ts';

/** Training templates: what a training run reads (event types and their weights, thresholds), when runs start by themselves, and whether their versions promote themselves. */

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
  /** Internal, not shown: when that claim was made (unix seconds; absent on claims stored before it: finished at once). */
  _unsent_since?: number | null;
}

/** The template's event types as stored: known ids, each with its multiplier (1 when not sent). */
async function checkEventTypes(c: ConsoleStore, tenant: string, ids: { id: number; weight?: number | undefined }[]): Promise<Template['event_types']> {
  const known = new Set((await c.list<EventType>(tenant, 'event_type')).map((e) => e.id));
  const missing = ids.filter((e) => !known.has(e.id)).map((e) => e.id);
  if (missing.length) throw new InvalidInput(`Unknown event type id(s): ${missing.join(', ')}.`);
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
/**
 * The schedule's fields as a template stores them (a new schedule's next due time computed now).
 * The schedule the template has already (`current`), sent again (a client saving the whole
 * template, a retried PATCH), is no change: its next due time stays. Until 2026-12-07 it was
 * computed anew, so a daily schedule without `start_at` saved an hour before its run moved that run
 * a day on, and one with `start_at` saved between a due time and the pass that starts its run
 * skipped that run.
 */
async function automationFields(
  c: ConsoleStore,
  tenant: string,
  b: { schedule?: S.ScheduleBody | null | undefined; auto_promote?: S.AutoPromoteBody | null | undefined },
  now: number,
  current?: Template,
) {
  const out: Partial<Template> = {};
  const unchanged = b.schedule !== undefined && current !== undefined && canonicalJson(b.schedule) === canonicalJson(current.schedule ?? null);
  if (b.schedule !== undefined && !unchanged) Object.assign(out, { schedule: b.schedule, next_run_at: b.schedule ? firstRunAt(b.schedule, now) : null });
  if (b.auto_promote !== undefined) {
    if (b.auto_promote && !(await findEndpoint(c, tenant, b.auto_promote.endpoint_name))) {
      throw new InvalidInput('Invalid auto_promote.', {
        'auto_promote.endpoint_name': [`No serving endpoint ${b.auto_promote.endpoint_name}.`],
      });
    }
    out.auto_promote = b.auto_promote;
  }
  return out;
}
/** A template as answered: without internal fields, schedule fields null when never set. */
export const templateView = ({ _unsent_job: _u, _unsent_since: _s, ...t }: Template) => ({
  ...t,
  schedule: t.schedule ?? null,
  next_run_at: t.next_run_at ?? null,
  last_scheduled_run: t.last_scheduled_run ?? null,
  auto_promote: t.auto_promote ?? null,
});
export async function createTemplate(c: ConsoleStore, tenant: string, b: z.output<typeof S.templateBody>, ids?: IdPlan) {
  const done = await storedBefore<Template>(c, tenant, 'template', ids);
  if (done) return templateView(done);
  const eventTypes = await checkEventTypes(c, tenant, b.event_types);
  const now = nowSeconds();
  const automation = await automationFields(c, tenant, b, now);
  const rec: Template = {
    id: await newId(() => c.nextId(tenant, 'template'), ids),
    name: b.name,
    event_types: eventTypes,
    thresholds: b.thresholds,
    status: 'Draft',
    created: now,
    updated_at: now,
    ...automation,
  };
  await c.put(tenant, 'template', rec);
  return templateView(rec);
}
export const listTemplates = (c: ConsoleStore, tenant: string, q: S.RecordPageQuery) => recordPage(c, tenant, 'template', { limit: q.limit, after: q.starting_after }, templateView);
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
  // A change whose template was published meanwhile is decided again on it as Published: a publish
  // (with automation fields at most) is the retried publish it now is (two publishes at once, a
  // client's retry of one still in flight, say; until 2026-12-03 the second was refused, "changed
  // meanwhile"), an edit is refused as frozen.
  for (let attempt = 0; ; attempt++) {
    const t = await findTemplate(c, tenant, id);
    const holds = (k: string, v: unknown) => canonicalJson(v ?? null) === canonicalJson(t[k as keyof Template] ?? null);
    // Publishing a Published template again (a retried PATCH) changes nothing: taken as the automation fields are, not refused.
    const republish = t.status === 'Published' && b.status === 'Published';
    // So is a frozen field a Published template holds as sent (a publish that renamed it, sent
    // again, or two such at once; a form saved unchanged): until 2026-12-08 refused, 400 "is Published".
    const heldAsSent = (k: keyof typeof b) => t.status === 'Published' && holds(k, k === 'event_types' ? b.event_types?.map((e) => ({ id: e.id, weight: e.weight ?? 1 })) : b[k]);
    const automationOnly = (Object.keys(b) as (keyof typeof b)[]).every((k) => (S.TEMPLATE_AUTOMATION_FIELDS as readonly string[]).includes(k) || (k === 'status' && republish) || heldAsSent(k));
    if (t.status === 'Published' && !automationOnly) throw new PreconditionFailed(`Template ${id} is Published and can no longer be changed (except its schedule and auto_promote).`);
    const now = nowSeconds();
    const { schedule, auto_promote, ...sent } = b;
    // Of a Published template, only the automation fields can change (the others it holds as sent).
    const rest = t.status === 'Published' ? {} : sent;
    const changes: Record<string, unknown> = {
      ...rest,
      ...(rest.event_types ? { event_types: await checkEventTypes(c, tenant, rest.event_types) } : {}),
      ...(await automationFields(c, tenant, { schedule, auto_promote }, now, t)),
    };
    // A change of nothing (each field sent as the template holds it: a retried publish, a PATCH
    // sent twice, a form saved unchanged) writes nothing and answers the template as it is,
    // `updated_at` as it was, as a rule's does (until 2026-12-08 only a publish sent alone did so).
    if (Object.entries(changes).every(([k, v]) => holds(k, v))) return templateView(t);
    const set = { ...changes, updated_at: now };
    // Answered as this write left it: read back after it, a PATCH made meanwhile answered its own name or event types for this one's.
    const written = await c.updated<Template>(tenant, 'template', id, set, automationOnly ? {} : { status: 'Draft' });
    if (written) return templateView(written);
    // Written only while a Draft, and a template is never a Draft again once published: a change
    // whose write found it published meanwhile is decided again on it as it is now, a publish as
    // the retried publish it has become, an edit refused as a Published template's edit is (until
    // 2026-12-08 the edit was refused with 400 "changed meanwhile; retry", a retry that could
    // only meet that refusal). A second miss (no template to write) is a conflict, 409.
    if (attempt > 0) throw new Conflict('changed_meanwhile', `Template ${id} kept changing meanwhile; retry.`);
  }
}
