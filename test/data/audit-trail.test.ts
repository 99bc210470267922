import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceInputTypes, ServiceOutputTypes } from '@aws-sdk/lib-dynamodb';
import type { Command } from '@smithy/types';
import { createExperiment, createRule, createSegment, deleteRule, getRerank, getRule, putRerank, updateExperiment, updateRule } from '../../shared/control/records.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { dynamoConsoleStore } from '../../shared/data/console.ts';
import type { AuditEntry, ConsoleStore } from '../../shared/domain/console-records.ts';
import { createContext } from '../../shared/domain/contexts.ts';
import { createEndpoint, type Endpoint } from '../../shared/domain/endpoints.ts';
import { promoteModel, type ModelVersion } from '../../shared/domain/model-versions.ts';
import { setClock } from '../../shared/clock.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * A control record's change and its audit entry are written in one transaction: a failure (or a
 * crash) between the two lost the entry, and for good, as the change's retry finds nothing to
 * change and writes no entry (until 2026-12-06).
 */
let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

type AnyCommand = Command<ServiceInputTypes, ServiceInputTypes, ServiceOutputTypes, ServiceOutputTypes, unknown>;

/** The console store over `table` whose next write of an audit entry fails, once, as a throttled write the SDK gave up retrying would. */
function auditWriteFailingOnce(table: TableRef): ConsoleStore {
  let failed = false;
  const send = (command: AnyCommand) => {
    if (!failed && JSON.stringify(command.input).includes('#AUDIT#')) {
      failed = true;
      return Promise.reject(Object.assign(new Error('Throughput exceeded'), { name: 'ProvisionedThroughputExceededException' }));
    }
    return table.doc.send(command);
  };
  const doc = new Proxy(table.doc, { get: (target, prop, receiver) => (prop === 'send' ? send : Reflect.get(target, prop, receiver)) });
  return dynamoConsoleStore({ ...table, doc });
}

const actions = (rows: AuditEntry[]) => rows.map((e) => e.action);

describe("a control record's change and its audit entry", () => {
  /**
   * A tenant's context and segment, and the store as a rule's create meets it when the segment goes
   * meanwhile: read as there when the rule names it, gone when read again after the rule's write;
   * the take-back's removals go through `remove` (given the store and the removal's arguments).
   */
  async function segmentGoingAway(T: string, remove: (target: ConsoleStore, args: Parameters<ConsoleStore['remove']>) => Promise<boolean>) {
    const c = db.stores.console;
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, { tenant: T }, { name: 's', description: '', definition: { event_type: 'purchase', min_count: 1, within_days: 30 } });
    let segmentReads = 0;
    const racing = new Proxy(c, {
      get: (target, prop, receiver) => {
        if (prop === 'get') return (tenant: string, kind: string, id: number) => (kind === 'segment' && ++segmentReads > 1 ? Promise.resolve(undefined) : target.get(tenant, kind as 'segment', id));
        if (prop === 'remove') return (...args: Parameters<ConsoleStore['remove']>) => remove(target, args);
        return Reflect.get(target, prop, receiver);
      },
    });
    const create = () => createRule(racing, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 1, segment_id: seg.id });
    return { c, create };
  }

  it('a rule created naming a segment that went meanwhile is taken back (404) even when its first removal meets another write (false): neither the rule nor its entry stays', async () => {
    const T = 'take-back-retried';
    // The rule's first removal refused (a transaction on it under way).
    let refused = false;
    const { c, create } = await segmentGoingAway(T, (target, args) => {
      if (refused) return target.remove(...args);
      refused = true;
      return Promise.resolve(false);
    });
    await expect(create()).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(refused).toBe(true);
    expect(await c.list(T, 'rule')).toEqual([]);
    expect((await c.auditPage(T, 'rules/1', { limit: 10 })).rows).toEqual([]);
  });

  it('a rule created naming a segment that went meanwhile, and deleted by its owner before it is taken back, answers 404 segment_not_found at once (not 409 after every retry)', async () => {
    const T = 'take-back-gone';
    // The rule, listed meanwhile, deleted by its owner (DELETE /api/rules/{id}) just before the take-back.
    let removals = 0;
    const { c, create } = await segmentGoingAway(T, async (target, args) => {
      if (removals++ === 0) await deleteRule(target, { tenant: T }, args[2]);
      return target.remove(...args);
    });
    await expect(create()).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(removals).toBe(1);
    expect(await c.list(T, 'rule')).toEqual([]);
  });

  it('an update whose entry cannot be written is not written either; sent again, it writes both (one entry)', async () => {
    const T = 'atomic-update';
    const c = db.stores.console;
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const r = await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 1 });
    await expect(updateRule(auditWriteFailingOnce(db.table), { tenant: T }, r.id, { boost: 3 })).rejects.toThrow('Throughput exceeded');
    expect((await getRule(c, T, r.id)).boost).toBe(1);
    expect(actions((await c.auditPage(T, `rules/${r.id}`, { limit: 10 })).rows)).toEqual(['create']);
    // The PATCH sent again: a change (the rule still has the boost it had), and its entry.
    await updateRule(c, { tenant: T, actor: 'abcd1234' }, r.id, { boost: 3 });
    const trail = (await c.auditPage(T, `rules/${r.id}`, { limit: 10 })).rows;
    expect(actions(trail)).toEqual(['update', 'create']);
    expect(trail[0]).toMatchObject({ actor: 'abcd1234', before: { boost: 1 }, after: { boost: 3 } });
  });

  it('a create or a delete whose entry cannot be written is not done either; sent again, it is, with one entry', async () => {
    const T = 'atomic-create-delete';
    const c = db.stores.console;
    const failing = auditWriteFailingOnce(db.table);
    await expect(createSegment(failing, { tenant: T }, { name: 's', definition: { event_type: 'view', min_count: 1, within_days: 7 } })).rejects.toThrow('Throughput exceeded');
    expect(await c.list(T, 'segment')).toEqual([]);
    const s = await createSegment(c, { tenant: T }, { name: 's', definition: { event_type: 'view', min_count: 1, within_days: 7 } });
    expect(actions((await c.auditPage(T, `segments/${s.id}`, { limit: 10 })).rows)).toEqual(['create']);

    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const r = await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 1 });
    await expect(deleteRule(auditWriteFailingOnce(db.table), { tenant: T }, r.id)).rejects.toThrow('Throughput exceeded');
    expect(await c.get(T, 'rule', r.id)).toBeDefined();
    await deleteRule(c, { tenant: T }, r.id);
    expect(actions((await c.auditPage(T, `rules/${r.id}`, { limit: 10 })).rows)).toEqual(['delete', 'create']);
  });

  it("an experiment's start and a rerank PUT whose entries cannot be written are not written either; sent again, each is, with one entry", async () => {
    const T = 'atomic-start-rerank';
    const c = db.stores.console;
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    await createEndpoint(c, T, { endpoint_name: 'main', is_default: true });
    const body = { name: 'e', context_id: ctx.id, attribution_window_seconds: 86_400, variants: [{ name: 'a', endpoint_name: 'main', traffic_percent: 100 }] };
    const e = await createExperiment(c, { tenant: T }, body);
    await expect(updateExperiment(auditWriteFailingOnce(db.table), { tenant: T }, e.id, { status: 'Running' })).rejects.toThrow('Throughput exceeded');
    expect(await c.get(T, 'experiment', e.id)).toMatchObject({ status: 'Draft' });
    expect((await updateExperiment(c, { tenant: T }, e.id, { status: 'Running' })).status).toBe('Running');
    const trail = (await c.auditPage(T, `experiments/${e.id}`, { limit: 10 })).rows;
    expect(trail.map((x) => [x.action, (x.after as { status?: string }).status])).toEqual([
      ['update', 'Running'],
      ['create', 'Draft'],
    ]);

    await expect(putRerank(auditWriteFailingOnce(db.table), { tenant: T }, ctx.id, { diversity: 0.3 })).rejects.toThrow('Throughput exceeded');
    expect((await getRerank(c, T, ctx.id)).updated_at).toBeNull();
    await putRerank(c, { tenant: T }, ctx.id, { diversity: 0.3 });
    expect(actions((await c.auditPage(T, `rerank-controls/${ctx.id}`, { limit: 10 })).rows)).toEqual(['create']);
  });

  it("a write whose record's condition fails answers false (as without an entry) and writes no entry", async () => {
    const T = 'atomic-conditions';
    const c = db.stores.console;
    const entry = async (resource: string): Promise<AuditEntry> => ({ id: await c.auditId(T), at: 1, actor: null, action: 'update', resource, before: null, after: null });
    await c.put(T, 'rule', { id: 1, name: 'r', _rev: 1 });
    expect(await c.update(T, 'rule', 1, { name: 'x', _rev: 3 }, { _rev: 2 }, { entry: await entry('rules/1') })).toBe(false);
    expect(await c.remove(T, 'rule', 1, { _rev: 2 }, { kept: true, audited: { entry: await entry('rules/1') } })).toBe(false);
    expect(await c.replace(T, 'rerank', { id: 1, context_id: 1, _rev: 1 }, { _rev: 1 }, { entry: await entry('rerank-controls/1') })).toBe(false);
    expect(await c.get(T, 'rule', 1)).toEqual({ id: 1, name: 'r', _rev: 1 });
    expect((await c.auditPage(T, 'rules/1', { limit: 10 })).rows).toEqual([]);
    expect((await c.auditPage(T, 'rerank-controls/1', { limit: 10 })).rows).toEqual([]);
    // Once it holds: the record and its entry.
    const last = await entry('rules/1');
    expect(await c.update(T, 'rule', 1, { name: 'x', _rev: 2 }, { _rev: 1 }, { entry: last })).toBe(true);
    expect((await c.auditPage(T, 'rules/1', { limit: 10 })).rows).toEqual([last]);
    // A change undone takes its entry out with it.
    expect(await c.update(T, 'rule', 1, { name: 'r', _rev: 3 }, { _rev: 2 }, { undoes: last })).toBe(true);
    expect((await c.auditPage(T, 'rules/1', { limit: 10 })).rows).toEqual([]);
  });
});

describe("an endpoint's promotions in its audit trail", () => {
  it('a promotion whose read came before two others made within the same second (the second putting back the version it read) is read again: listed newest first in the order written', async () => {
    // Until 2026-12-07 its write held the endpoint as read by version and updated_at (seconds) only:
    // it landed after the two with the entry id it took before them, listed below them though
    // written last (the newest entry's after was not what the endpoint served).
    const T = 'audit-promote-aba';
    const c = db.stores.console;
    const at = 1_800_000_000;
    const restore = setClock({ nowMs: () => at * 1000 + 500 });
    try {
      await c.put(T, 'endpoint', { id: 1, endpoint_name: 'prod', is_default: true, model_version: 3, created: at, updated_at: at } satisfies Endpoint);
      for (const v of [3, 4, 5])
        await c.put(T, 'model', {
          id: v,
          version: v,
          template_id: 1,
          job_name: `train-${v}`,
          created: at,
          algorithm: 'popularity',
          metrics: {},
          label: null,
          description: null,
          status: 'Approved',
          artifact: `models/${T}/v${v}.bin`,
        } satisfies ModelVersion);
      let raced = false;
      // Version 5 promoted, then 3 again, after this promotion read the endpoint and took its entry's id.
      const racing: ConsoleStore = {
        ...c,
        auditId: async (tenant) => {
          const id = await c.auditId(tenant);
          if (!raced) {
            raced = true;
            await promoteModel(c, T, 5, 'prod', 'other');
            await promoteModel(c, T, 3, 'prod', 'other');
          }
          return id;
        },
      };
      await promoteModel(racing, T, 4, 'prod', 'mine');
      expect((await c.get<Endpoint>(T, 'endpoint', 1))?.model_version).toBe(4);
      const trail = (await c.auditPage(T, 'model-endpoints/1', { limit: 10 })).rows;
      const served = (x: unknown) => (x as { model_version: number }).model_version;
      expect(trail.map((e) => [served(e.before), served(e.after)])).toEqual([
        [3, 4],
        [5, 3],
        [3, 5],
      ]);
      expect(trail.map((e) => e.actor)).toEqual(['mine', 'other', 'other']);
    } finally {
      restore();
    }
  });
});
