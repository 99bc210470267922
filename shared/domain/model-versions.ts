import type { z } from 'zod/mini';
import { nowSeconds } from '../clock.ts';
import type * as S from '../schemas/console.ts';
import { notFound, recordPage, type AuditEntry, type ConsoleRecord, type ConsoleStore } from './console-records.ts';
import { findEndpoint, keptByName, type Endpoint } from './endpoints.ts';
import { Conflict, NotFound, PreconditionFailed } from './errors.ts';

/** Model versions: what a completed training run stored, compared, approved and promoted to an endpoint. */

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

async function modelView(c: ConsoleStore, tenant: string, m: ModelVersion, all?: Endpoint[]) {
  const endpoints = (all ?? (await c.list<Endpoint>(tenant, 'endpoint'))).filter((e) => e.model_version === m.version).map((e) => e.endpoint_name);
  const { id: _id, artifact: _a, ...rest } = m;
  // Every version has `validation`: null where its run chose nothing on a validation split (an `ease` or `popularity` run; until 2026-12-05 such a version had no such key).
  return { ...rest, validation: m.validation ?? null, promotion: m.promotion ?? null, endpoints };
}
export async function getModel(c: ConsoleStore, tenant: string, version: number) {
  const m = await c.get<ModelVersion>(tenant, 'model', version);
  if (!m) throw notFound('model version', version);
  return m;
}
export const modelResource = async (c: ConsoleStore, tenant: string, version: number) => modelView(c, tenant, await getModel(c, tenant, version));
/** Newest first; `starting_after` names the last version of the page before. */
export async function listModels(c: ConsoleStore, tenant: string, q: S.RecordPageQuery) {
  const [page, endpoints] = await Promise.all([
    recordPage(c, tenant, 'model', { limit: q.limit, after: q.starting_after, newestFirst: true }, (m: ModelVersion) => m),
    c.list<Endpoint>(tenant, 'endpoint'),
  ]);
  return { ...page, data: await Promise.all(page.data.map((m) => modelView(c, tenant, m, endpoints))) };
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
/**
 * `GET /api/models/compare?versions=3,4`: the versions, their holdout metrics and validation
 * figures side by side. A version given as its digits past the largest exact integer is one the
 * tenant does not have (named as sent, never looked up rounded).
 */
export async function compareModels(c: ConsoleStore, tenant: string, asked: readonly (number | string)[]) {
  const versions = asked.map(Number);
  const lookup = (v: number) => (Number.isSafeInteger(v) ? c.get<ModelVersion>(tenant, 'model', v) : Promise.resolve(undefined));
  const [found, endpoints] = await Promise.all([Promise.all(versions.map(lookup)), c.list<Endpoint>(tenant, 'endpoint')]);
  const missing = asked.filter((_, i) => !found[i]);
  if (missing.length) throw new NotFound('model_version_not_found', `No model version ${missing.join(', ')}.`);
  const models = found as ModelVersion[];
  return {
    versions,
    models: await Promise.all(models.map((m) => modelView(c, tenant, m, endpoints))),
    metrics: sideBySide(
      versions,
      models.map((m) => m.metrics),
    ),
    validation: sideBySide(
      versions,
      models.map((m) => m.validation),
    ),
  };
}
/**
 * Sets a version's label or description, and answers the version as this request left it: read
 * back after the write, two PATCHes at once could each answer the other's label.
 */
export async function updateModel(c: ConsoleStore, tenant: string, version: number, b: z.output<typeof S.modelPatch>) {
  await getModel(c, tenant, version);
  const m = await c.updated<ModelVersion>(tenant, 'model', version, b);
  if (!m) throw notFound('model version', version);
  return modelView(c, tenant, m);
}
export async function approveModel(c: ConsoleStore, tenant: string, version: number) {
  await getModel(c, tenant, version);
  await c.update(tenant, 'model', version, { status: 'Approved' });
  return modelResource(c, tenant, version);
}
/** Tries of a promotion whose endpoint was taken back (a create that lost its name) between its read and its write. */
const PROMOTE_TRIES = 3;
/** Tries of a promotion whose endpoint changed between its read and its write (another promotion, a default move). */
const PROMOTE_RACES = 8;
/**
 * A promotion's audit entry (resource `model-endpoints/<id>`): the endpoint's name and the version
 * it served before and after. `actor` is the API key's prefix (or console user) of a promotion by
 * hand, `auto_promote:templates/<id>` of one the template's policy made.
 */
export function promotionEntry(id: number, actor: string | null, e: Endpoint, version: number, at: number): AuditEntry {
  const shown = (v: number | null) => ({ endpoint_name: e.endpoint_name, model_version: v });
  return { id, at, actor, action: 'update', resource: `model-endpoints/${e.id}`, before: shown(e.model_version), after: shown(version) };
}
/**
 * A promotion's write of endpoint `e` (as read) to `version` at `at`: its fields, and the condition
 * that the endpoint is still as read, by its promotions' count (`_rev`) as well as its version and
 * `updated_at`. Those two alone (seconds) held again after two promotions within the same second,
 * the second putting back the version read: until 2026-12-07 the write then landed with the audit
 * entry id it took before them, and the trail listed it below theirs though it was written last.
 */
export function promotionOf(e: Endpoint, version: number, at: number) {
  return {
    set: { model_version: version, updated_at: at, _rev: (e._rev ?? 0) + 1 },
    expect: { model_version: e.model_version, updated_at: e.updated_at, _rev: e._rev },
  };
}
/**
 * Only an approved version can serve; the endpoint serves it from its next request. Answers the
 * version with the endpoint serving it as this request left it. The endpoint's change is written
 * with its audit entry (one transaction), conditional on the endpoint as read, so each entry's
 * `before` is what it served then: one that changed meanwhile (another promotion at once) is read
 * again. An endpoint taken back before the write (the second of two creates of its name) is looked
 * for again by name (the one that kept it), not answered as promoted.
 */
export async function promoteModel(c: ConsoleStore, tenant: string, version: number, endpointName: string, actor?: string) {
  const m = await getModel(c, tenant, version);
  if (m.status !== 'Approved') throw new PreconditionFailed(`Version ${version} is not approved: approve it before promoting it.`);
  let found = false;
  for (let attempt = 0, raced = 0; attempt < PROMOTE_TRIES && raced < PROMOTE_RACES; ) {
    const e = await findEndpoint(c, tenant, endpointName);
    if (!e) break;
    found = true;
    // Already serving it (a promotion sent again): nothing to write, and no audit entry of no change.
    // Answered with the endpoint as read, serving it, as a promotion written is (a promotion of
    // another version landing right after does not answer this one as not served there).
    if (e.model_version === version) {
      const [cur, all] = await Promise.all([getModel(c, tenant, version), c.list<Endpoint>(tenant, 'endpoint')]);
      return modelView(c, tenant, cur, [...all.filter((x) => x.id !== e.id), e]);
    }
    const now = nowSeconds();
    const entry = promotionEntry(await c.auditId(tenant), actor ?? null, e, version, now);
    const write = promotionOf(e, version, now);
    if (!(await c.update(tenant, 'endpoint', e.id, write.set, write.expect, { entry }))) {
      raced++;
      continue;
    }
    // Written to a record a create of its name at once is taking back: promoted to the one kept instead.
    if (!(await keptByName(c, tenant, e))) {
      attempt++;
      continue;
    }
    const [now2, all] = await Promise.all([getModel(c, tenant, version), c.list<Endpoint>(tenant, 'endpoint')]);
    const wrote: Endpoint = { ...e, ...write.set };
    return modelView(c, tenant, now2, [...all.filter((x) => x.id !== e.id), wrote]);
  }
  // The code every change that kept finding its record changed answers (rules, segments, synonym sets: docs/api.md's Error codes).
  if (found && (await findEndpoint(c, tenant, endpointName))) throw new Conflict('changed_meanwhile', `Endpoint ${endpointName} kept changing meanwhile; retry.`);
  throw notFound('endpoint', endpointName);
}
