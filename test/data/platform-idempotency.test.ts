import { DeleteCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableRef } from '../../shared/data/client.ts';
import { dynamoSynonymStore } from '../../shared/data/synonyms.ts';
import { createContext } from '../../shared/domain/contexts.ts';
import type { IdPlan } from '../../shared/domain/types.ts';
import { startTraining } from '../../shared/domain/training-runs.ts';
import { createTemplate } from '../../shared/domain/templates.ts';
import { createEventType } from '../../shared/domain/event-types.ts';
import { createExperiment, createRule, createSegment, deleteRule, deleteSegment, updateRule } from '../../shared/control/records.ts';
import { createEndpoint } from '../../shared/domain/endpoints.ts';
import { DeadlinePassed } from '../../shared/deadline.ts';
import { templateBody } from '../../shared/schemas/console.ts';
import { createSynonymSet, deleteSynonymSet, updateSynonymSet } from '../../shared/search/synonyms.ts';
import type { WorkQueue } from '../../shared/queue/messages.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * A Platform create under an Idempotency-Key (the HTTP layer's IdPlan, shared/http/idempotency.ts):
 * a first attempt records its id before it writes anything; a retry of an attempt that failed
 * after it may have written answers the record that attempt stored, writing nothing, or writes
 * the record under that attempt's id if it never got that far.
 */
let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

/** A first attempt's plan: the id it reserves, and whether a record with it existed then. */
function firstAttempt(exists: (id: number) => Promise<boolean>) {
  const seen: { id: number; stored: boolean }[] = [];
  const plan: IdPlan = { reserved: async (id) => void seen.push({ id, stored: await exists(id) }) };
  return { plan, seen };
}

describe('a Platform create under an Idempotency-Key', () => {
  it('records its id before it writes the record; a retry of it answers the record as stored, writing nothing (no second audit entry, no id spent)', async () => {
    const T = 'idem-rules';
    const c = db.stores.console;
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const body = { name: 'no acme', context_id: ctx.id, conditions: [{ field: 'metadata.brand', op: 'eq' as const, value: 'Acme' }], boost: 0 };
    const { plan, seen } = firstAttempt(async (id) => (await c.get(T, 'rule', id)) !== undefined);
    const first = await createRule(c, { tenant: T, actor: 'abcd1234' }, body, plan);
    expect(seen).toEqual([{ id: first.id, stored: false }]);
    // The first attempt's answer was lost (a 5xx after its write): its retry resumes under its id.
    await c.update(T, 'rule', first.id, { enabled: false, _rev: 2 });
    const retried = await createRule(c, { tenant: T, actor: 'abcd1234' }, body, { reuse: first.id });
    expect(retried).toEqual({ ...first, enabled: false });
    expect((await c.list(T, 'rule')).map((r) => r.id)).toEqual([first.id]);
    expect((await c.auditPage(T, `rules/${first.id}`, { limit: 10 })).rows.map((e) => e.action)).toEqual(['create']);
    // No id was spent on the retry.
    expect((await createRule(c, { tenant: T, actor: 'abcd1234' }, { ...body, name: 'next' })).id).toBe(first.id + 1);
  });

  it('a retry of an attempt that failed before it wrote its record writes it under that id, with its audit entry', async () => {
    const T = 'idem-rules-unwritten';
    const c = db.stores.console;
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    // The failed attempt reserved id 7 and stopped there.
    const rule = await createRule(c, { tenant: T, actor: undefined }, { name: 'late', context_id: ctx.id, conditions: [], boost: 2 }, { reuse: 7 });
    expect(rule.id).toBe(7);
    expect(await c.get(T, 'rule', 7)).toMatchObject({ name: 'late', boost: 2 });
    expect((await c.auditPage(T, 'rules/7', { limit: 10 })).rows.map((e) => e.action)).toEqual(['create']);
  });

  it('a context, a synonym set and a training run resume the same way', async () => {
    const T = 'idem-kinds';
    const c = db.stores.console;
    const ctx = await createContext(c, T, { name: 'home', description: '' }, { reserved: async () => undefined });
    expect(await createContext(c, T, { name: 'home', description: '' }, { reuse: ctx.id })).toEqual(ctx);
    expect((await c.list(T, 'context')).map((r) => r.id)).toEqual([ctx.id]);

    const synonyms = dynamoSynonymStore(db.table);
    const { plan, seen } = firstAttempt(async (id) => (await synonyms.get(T, id)) !== undefined);
    const set = await createSynonymSet(synonyms, T, { synonyms: ['sofa', 'couch'] }, undefined, plan);
    expect(seen).toEqual([{ id: set.id, stored: false }]);
    expect(await createSynonymSet(synonyms, T, { synonyms: ['sofa', 'couch'] }, undefined, { reuse: set.id })).toEqual(set);
    expect((await synonyms.all(T)).map((s) => s.id)).toEqual([set.id]);

    const sent: unknown[] = [];
    const queue = { send: async (_name: string, messages: unknown[]) => void sent.push(...messages) } as unknown as WorkQueue;
    const type = await createEventType(c, T, { name: 'like', weight: 1 });
    const template = await createTemplate(c, T, templateBody.parse({ name: 't', event_types: [{ id: type.id }], thresholds: { per_signal_min: 1, total_min: 1 } }));
    await c.update(T, 'template', template.id, { status: 'Published' });
    const options = { algorithm: 'popularity' as const, epochs: 5, batch_size: 256 as const, learning_rate: 0.001 };
    const run = await startTraining(c, queue, T, { template_id: template.id, options }, { reserved: async () => undefined });
    expect(sent).toHaveLength(1);
    const again = await startTraining(c, queue, T, { template_id: template.id, options }, { reuse: run.id });
    expect(again).toEqual(await c.get(T, 'job', run.id));
    expect((await c.list(T, 'job')).map((r) => r.id)).toEqual([run.id]);
    expect(sent).toHaveLength(1);
    // An attempt stopped after it stored the run and before it sent it (its mark still on): the
    // retry sends it (until 2026-12-05 it answered the run, which stayed Queued for good).
    await c.update(T, 'job', run.id, { _unsent_since: 1 });
    await startTraining(c, queue, T, { template_id: template.id, options }, { reuse: run.id });
    expect(sent).toEqual([expect.objectContaining({ job_name: run.job_name }), expect.objectContaining({ job_name: run.job_name })]);
    expect(await c.get(T, 'job', run.id)).toMatchObject({ status: 'Queued', _unsent_since: null });
  });

  it('a rule, segment or synonym set deleted between the failed attempt that stored it and its retry stays deleted: the retry answers it as it was, and stores nothing', async () => {
    const T = 'idem-deleted';
    const c = db.stores.console;
    const who = { tenant: T, actor: 'abcd1234' };
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const ruleBody = { name: 'gone', context_id: ctx.id, conditions: [], boost: 2 };
    const rule = await createRule(c, who, ruleBody, { reserved: async () => undefined });
    await deleteRule(c, who, rule.id);
    expect(await createRule(c, who, ruleBody, { reuse: rule.id })).toEqual(rule);
    expect(await c.get(T, 'rule', rule.id)).toBeUndefined();
    expect((await c.auditPage(T, `rules/${rule.id}`, { limit: 10 })).rows.map((e) => e.action)).toEqual(['delete', 'create']);

    const segmentBody = { name: 'buyers', definition: { event_type: 'buy', min_count: 1, within_days: 7 } };
    const segment = await createSegment(c, who, segmentBody, { reserved: async () => undefined });
    await deleteSegment(c, who, segment.id);
    expect(await createSegment(c, who, segmentBody, { reuse: segment.id })).toEqual(segment);
    expect(await c.get(T, 'segment', segment.id)).toBeUndefined();
    expect((await c.controlConfig(T)).segments).toEqual([]);

    const synonyms = dynamoSynonymStore(db.table);
    const set = await createSynonymSet(synonyms, T, { synonyms: ['sofa', 'couch'] }, undefined, { reserved: async () => undefined });
    await deleteSynonymSet(synonyms, T, set.id);
    expect(await createSynonymSet(synonyms, T, { synonyms: ['sofa', 'couch'] }, undefined, { reuse: set.id })).toEqual(set);
    expect(await synonyms.all(T)).toEqual([]);

    // A retry of an attempt that stopped before it wrote (nothing stored, nothing deleted) still writes.
    expect((await createRule(c, who, ruleBody, { reuse: rule.id + 100 })).id).toBe(rule.id + 100);
    expect(await c.get(T, 'rule', rule.id + 100)).toMatchObject({ name: 'gone' });
  });

  it('a rule create refused 404 (its segment deleted as it ran: the rule taken back) is refused again by its retry, not answered with the rule it took back', async () => {
    const T = 'idem-takeback';
    const c = db.stores.console;
    const who = { tenant: T, actor: 'abcd1234' };
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, who, { name: 'buyers', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    // The segment's deletion runs between the create's check of the segment and its write (it sees no rule naming it).
    const racing: ConsoleStore = Object.create(c);
    racing.create = async (tenant, kind, rec, cap) => {
      if (kind === 'rule') await deleteSegment(c, who, seg.id);
      return c.create(tenant, kind, rec, cap);
    };
    let reserved: number | undefined;
    const body = { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id };
    await expect(createRule(racing, who, body, { reserved: async (id) => void (reserved = id) })).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(await c.get(T, 'rule', reserved as number)).toBeUndefined();
    // The key keeps the reserved id, so a retry reuses it: refused as the attempt was (a reviewer found it answered 201 with the rule taken back).
    await expect(createRule(c, who, body, { reuse: reserved as number })).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(await c.get(T, 'rule', reserved as number)).toBeUndefined();
  });

  it('a rule create cut off by its deadline (503) after its write, its segment deleted meanwhile, is refused 404 by its retry and taken back, not answered 201 naming a deleted segment', async () => {
    const T = 'idem-deadline';
    const c = db.stores.console;
    const who = { tenant: T, actor: 'abcd1234' };
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, who, { name: 'buyers', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    // The rule lands; the segment's deletion (which read the rules before it) removes the segment;
    // then the request's deadline passes, so its check of the segment after the write is refused.
    const cutOff = new AbortController();
    const racing: ConsoleStore = Object.create(c);
    racing.create = async (tenant, kind, rec, cap, audited) => {
      const made = await c.create(tenant, kind, rec, cap, audited);
      if (kind === 'rule') await c.remove(T, 'segment', seg.id, {}, { kept: true });
      cutOff.abort(new DeadlinePassed());
      return made;
    };
    racing.get = (tenant, kind, id) => {
      cutOff.signal.throwIfAborted();
      return c.get(tenant, kind, id);
    };
    let reserved: number | undefined;
    const body = { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id };
    await expect(createRule(racing, who, body, { reserved: async (id) => void (reserved = id) })).rejects.toBeInstanceOf(DeadlinePassed);
    const id = reserved as number;
    expect(await c.get(T, 'rule', id)).toMatchObject({ segment_id: seg.id });
    // The retry (the key marked failed after the 503 keeps the reserved id) checks what the attempt could not.
    await expect(createRule(c, who, body, { reuse: id })).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(await c.get(T, 'rule', id)).toBeUndefined();
    expect((await c.auditPage(T, `rules/${id}`, { limit: 10 })).rows).toEqual([]);
    // And again: the same answer.
    await expect(createRule(c, who, body, { reuse: id })).rejects.toMatchObject({ code: 'segment_not_found' });
  });

  it('an experiment create cut off the same way is refused 404 by its retry and taken back with its audit entry', async () => {
    const T = 'idem-deadline-exp';
    const c = db.stores.console;
    const who = { tenant: T, actor: 'abcd1234' };
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    await createEndpoint(c, T, { endpoint_name: 'main', is_default: true });
    const seg = await createSegment(c, who, { name: 'buyers', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    const cut: ConsoleStore = Object.create(c);
    cut.put = async (tenant, kind, rec, audited) => {
      await c.put(tenant, kind, rec, audited);
      if (kind === 'experiment') throw new DeadlinePassed();
    };
    let reserved: number | undefined;
    const body = {
      name: 'e',
      context_id: ctx.id,
      segment_id: seg.id,
      attribution_window_seconds: 86_400,
      variants: [
        { name: 'a', endpoint_name: 'main', traffic_percent: 50 },
        { name: 'b', endpoint_name: 'main', traffic_percent: 50 },
      ],
    };
    await expect(createExperiment(cut, who, body, { reserved: async (id) => void (reserved = id) })).rejects.toBeInstanceOf(DeadlinePassed);
    const id = reserved as number;
    expect(await c.get(T, 'experiment', id)).toMatchObject({ segment_id: seg.id });
    await c.remove(T, 'segment', seg.id, {}, { kept: true });
    await expect(createExperiment(c, who, body, { reuse: id })).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(await c.get(T, 'experiment', id)).toBeUndefined();
    expect((await c.auditPage(T, `experiments/${id}`, { limit: 10 })).rows).toEqual([]);
  });

  it('such a retry, the segment still there, answers the rule as stored (201), and one PATCHed since is answered as it is', async () => {
    const T = 'idem-deadline-live';
    const c = db.stores.console;
    const who = { tenant: T, actor: 'abcd1234' };
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, who, { name: 'buyers', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    const gone = await createSegment(c, who, { name: 'gone', definition: { event_type: 'buy', min_count: 2, within_days: 7 } });
    let reserved: number | undefined;
    const live = await createRule(c, who, { name: 'a', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id }, { reserved: async (id) => void (reserved = id) });
    await expect(createRule(c, who, { name: 'a', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id }, { reuse: reserved as number })).resolves.toEqual(live);
    // A rule PATCHed (200) after its attempt stored it unchecked, its segment gone since: kept, as the PATCH answered.
    const plan = { reserved: async (id: number) => void (reserved = id) };
    const cut: ConsoleStore = Object.create(c);
    cut.create = async (tenant, kind, rec, cap, audited) => {
      await c.create(tenant, kind, rec, cap, audited);
      throw new DeadlinePassed();
    };
    const body = { name: 'b', context_id: ctx.id, conditions: [], boost: 2, segment_id: gone.id };
    await expect(createRule(cut, who, body, plan)).rejects.toBeInstanceOf(DeadlinePassed);
    const patched = await updateRule(c, who, reserved as number, { boost: 7 });
    await c.remove(T, 'segment', gone.id, {}, { kept: true });
    await expect(createRule(c, who, body, { reuse: reserved as number })).resolves.toEqual(patched);
  });

  it("a synonym set changed between its delete's read and its DeleteItem is kept as deleted: the retry of its create answers that version", async () => {
    const T = 'idem-syn-race';
    const real = dynamoSynonymStore(db.table);
    const set = await createSynonymSet(real, T, { synonyms: ['sofa', 'couch'] }, undefined, { reserved: async () => undefined });
    let patched = false;
    const doc = new Proxy(db.table.doc, {
      get(target, prop, recv) {
        if (prop !== 'send') return Reflect.get(target, prop, recv);
        return async (cmd: unknown, ...rest: unknown[]) => {
          // The set's delete: alone, or in a transaction with its audit trail entry (as the API writes it).
          const setKey = (k: Record<string, unknown> | undefined) => String(k?.pk).endsWith('#SYNONYMS');
          const deletesSet = (cmd instanceof DeleteCommand && setKey(cmd.input.Key)) || (cmd instanceof TransactWriteCommand && (cmd.input.TransactItems ?? []).some((i) => setKey(i.Delete?.Key)));
          if (deletesSet && !patched) {
            patched = true;
            await updateSynonymSet(real, T, set.id, { synonyms: ['sofa', 'couch', 'settee'] });
          }
          return (target.send as (...a: unknown[]) => unknown).call(target, cmd, ...rest);
        };
      },
    });
    await deleteSynonymSet(dynamoSynonymStore({ ...db.table, doc } as TableRef), T, set.id);
    expect(patched).toBe(true);
    expect(await real.all(T)).toEqual([]);
    expect((await createSynonymSet(real, T, { synonyms: ['sofa', 'couch'] }, undefined, { reuse: set.id })).synonyms).toEqual(['sofa', 'couch', 'settee']);
  });
});
