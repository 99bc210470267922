/**
 * Experiments at serving and ingest time: a request served in a running experiment is recorded
 * with its variant; an event that names that request's `request_id` within the experiment's
 * attribution window is attributed to the variant, once.
 */
import { outsideDeadline } from '../deadline.ts';
import { eachRequest } from '../domain/attribution.ts';
import type { ErasedUser } from '../domain/console-records.ts';
import type { EventRecord } from '../domain/types.ts';
import { planFor, type Assignment, type ControlDeps, type ServingPlan } from './serving.ts';

export interface ExposureRecord {
  requestId: string;
  experimentId: number;
  variant: number;
  userId: string;
  servedAt: number;
  attributeUntil: number;
}

/** An experiment variant's totals: requests served, distinct users, and by event type the events attributed, requests and users with at least one. */
export interface VariantTotals {
  requests: number;
  users: number;
  events: Record<string, number>;
  requestsWith: Record<string, number>;
  usersWith: Record<string, number>;
}

export interface ExposureStore {
  /**
   * `erasedThrough`: when the user's latest erasure ended (their marker's `completed_at`; Infinity
   * while it runs, or when the marker could not be read), when the caller read it. A membership
   * first served by then is the erasure's to delete (it, or its sweep a minute after it ends): a
   * container that recorded the user by then writes their row again, and a request served after
   * it writes a new row in place of such a one. `erasureBegan`: when that erasure began (the
   * marker's `requested_at`).
   * Rejects only when this request's own writes failed, and then what it wrote is taken back (its
   * exposure row, its counts, the membership row it wrote), as far as DynamoDB lets it: the
   * caller's `failed` has nothing to undo.
   */
  recordExposure(tenant: string, e: { requestId: string; experimentId: number; variant: number; userId: string; servedAt: number; windowSeconds: number } & Erasure): Promise<void>;
  exposure(tenant: string, requestId: string): Promise<ExposureRecord | undefined>;
  /**
   * Takes back a recorded request that then failed (its retry is a request of its own): its
   * exposure row, and the request in its variant's totals, once however many times it is asked.
   * The user stays counted in the variant (their membership row stays: another request of theirs
   * may have been served on it meanwhile).
   */
  forgetRequest(tenant: string, requestId: string): Promise<void>;
  /**
   * Counts the event for the exposure's variant unless it was counted before; whether it counted
   * now. The user's first conversion of its type counts only while their membership row is there
   * (not after an erasure deleted it).
   */
  attribute(tenant: string, x: ExposureRecord, event: { id: number; type: string; created: number }): Promise<boolean>;
  totals(tenant: string, experimentId: number): Promise<Map<number, VariantTotals>>;
  /**
   * Deletes the user's membership row (first served, conversions by type) in each of these
   * experiments, where there is one (a user's erasure); with `servedThrough`, only a row whose
   * user was first served by then (an erasure's sweep: a row a request served before the erasure
   * ended wrote after it looked). The totals keep what they counted.
   */
  forgetUser(tenant: string, userId: string, experimentIds: readonly number[], servedThrough?: number): Promise<void>;
}

/** What `ExposureStore.recordExposure` takes of the user's latest erasure (nothing for a user never erased). */
export interface Erasure {
  erasedThrough?: number;
  erasureBegan?: number;
}

/** `Erasure` from the user's erasure marker: its end (Infinity while it runs) and its start. */
export const erasureOf = (m: ErasedUser | undefined): Erasure => (m === undefined ? {} : { erasedThrough: m.completed_at ?? Number.POSITIVE_INFINITY, erasureBegan: m.requested_at });

/** Records a request served to `userId` under `a`, with the user's `erasure` as `ExposureStore.recordExposure` takes it. */
export function recordServed(store: ExposureStore, tenant: string, a: Assignment, userId: string, requestId: string, now: number, erasure: Erasure = {}): Promise<void> {
  return store.recordExposure(tenant, {
    requestId,
    experimentId: a.experiment.id,
    variant: a.index,
    userId,
    servedAt: now,
    windowSeconds: a.experiment.attribution_window_seconds,
    ...erasure,
  });
}

/**
 * A request's plan for its context, with the request recorded as served in the experiment that
 * assigns the user a variant. The write starts once the variant is known, the caller confirmed
 * (`authorized`) and the request accepted (`accept()`, called by the caller once the request is
 * valid: a request refused after its plan was made, an unknown item or a bad cursor, was not
 * served and counts nothing), so it runs while the request is ranked. The caller answers only
 * once `recorded` settles. Without `served` (a request naming its own endpoint) the experiment
 * is bypassed: no variant is assigned (nor its rerank controls applied) and nothing is recorded.
 * `erased`: the user's erasure marker, when the caller reads it anyway (`planFor`). `page`: a
 * later page of a context's search, planned as its first page was (`planFor`'s `now` and
 * `eventsBelow`); the request is recorded as served `now`.
 */
export function planAndRecord(
  deps: ControlDeps,
  store: ExposureStore,
  tenant: string,
  contextId: number,
  userId: string | undefined,
  now: number,
  served: { requestId: string; authorized: Promise<unknown> } | undefined,
  erased?: Promise<ErasedUser | undefined>,
  page?: { at: number; eventsBelow: number | undefined },
): { plan: Promise<ServingPlan>; recorded: Promise<void>; accept: () => void; failed: () => Promise<void> } {
  let isAccepted = false;
  let accept = () => {};
  const accepted = new Promise<void>((resolve) => {
    accept = () => {
      isAccepted = true;
      resolve();
    };
  });
  let recording: Promise<void> | undefined;
  const onAssigned =
    served && userId !== undefined
      ? (a: Assignment) => {
          // The user's erasure marker, when read: a failed read only costs the membership's write its shortcut.
          const erasure = erased?.then(erasureOf, (): Erasure => ({ erasedThrough: Number.POSITIVE_INFINITY }));
          recording = Promise.all([served.authorized, accepted, erasure]).then(([, , e]) => recordServed(store, tenant, a, userId, served.requestId, now, e));
          recording.catch(() => undefined);
        }
      : undefined;
  const plan = planFor(deps, tenant, contextId, userId, page?.at ?? now, onAssigned, { experiment: served !== undefined, erased, eventsBelow: page?.eventsBelow });
  const recorded = plan.then(() => recording);
  for (const p of [plan, recorded]) p.catch(() => undefined);
  // A request that failed once accepted (its ranking, a read, its deadline) was not served: its
  // exposure, once written, is taken back, outside the deadline (a 503's take-back too). Until
  // 2026-12-05 it stayed, and its retry counted the same user action a second time.
  const failed = async () => {
    if (!isAccepted || !served || !recording) return;
    const landed = await recording.then(
      () => true,
      () => false,
    );
    if (landed) await outsideDeadline(() => store.forgetRequest(tenant, served.requestId));
  };
  return { plan, recorded, accept, failed };
}

/**
 * Attributes stored events that name a served request (by `request_id`) and its user: each to
 * that request's variant when it was ingested within the experiment's attribution window (the
 * window the experiment had when the request was served). Requests are worked
 * through in parallel, the events of one request in order.
 */
export async function attributeEvents(store: ExposureStore, tenant: string, events: readonly EventRecord[]): Promise<number> {
  let counted = 0;
  await eachRequest(events, async (requestId, list) => {
    const x = await store.exposure(tenant, requestId);
    if (!x) return;
    for (const e of list) {
      // Only the user the request was served to converts in its variant (another user's event that names it is not theirs).
      if (e.user_id !== x.userId) continue;
      // A clock-skew second before the request is tolerated; after the window nothing counts.
      if (e.created < x.servedAt - 5 || e.created > x.attributeUntil) continue;
      if (await store.attribute(tenant, x, { id: e.id, type: e.type, created: e.created })) counted++;
    }
  });
  return counted;
}
