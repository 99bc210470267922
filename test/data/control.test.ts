import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { nowSeconds } from '../../shared/clock.ts';
import { createRule, createSegment, createExperiment, deleteSegment, getSegment, updateExperiment, updateRule, updateSegment, getRule } from '../../shared/control/records.ts';
import { refreshSegmentSizes } from '../../shared/control/segment-size.ts';
import { latestFromPlan, planFor, SEGMENT_EVENTS, SEGMENT_PAGES, type ControlDeps, type ServingPlan } from '../../shared/control/serving.ts';
import { controlDepsOf } from '../../shared/control/deps.ts';
import { dynamoEventStore } from '../../shared/data/events.ts';
import { STARTING_SECONDS, type Experiment, type Segment } from '../../shared/control/types.ts';
import { dynamoConsoleStore } from '../../shared/data/console.ts';
import { Experiment as ExperimentRecord } from '../../shared/data/entities.ts';
import { put } from '../../shared/data/ops.ts';
import type { AuditEntry, Audited, ConsoleKind, ConsoleRecord, ConsoleStore } from '../../shared/domain/console-records.ts';
import { dynamoSegmentEvents } from '../../shared/data/segment-events.ts';
import { createContext } from '../../shared/domain/contexts.ts';
import { createEndpoint } from '../../shared/domain/endpoints.ts';
import type { NewEvent } from '../../shared/domain/types.ts';
import { testTable, type TestTable } from '../helpers/table.ts';
import { gate } from '../helpers/fixtures.ts';
import { DeadlinePassed } from '../../shared/deadline.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

/** The console store over the test table, counting the Query requests it sends. */
function counted(): { c: ConsoleStore; queries: () => number } {
  let n = 0;
  const signed = { ...db.table.signed, query: (input: Parameters<typeof db.table.signed.query>[0]) => (n++, db.table.signed.query(input)) };
  return { c: dynamoConsoleStore({ ...db.table, signed }), queries: () => n };
}

/** The console store over the test table, counting the rows its Queries read. */
function rowsCounted(): { c: ConsoleStore; rows: () => number } {
  let n = 0;
  const signed = {
    ...db.table.signed,
    query: async (input: Parameters<typeof db.table.signed.query>[0]) => {
      const out = await db.table.signed.query(input);
      n += out.ScannedCount ?? out.Items?.length ?? 0;
      return out;
    },
  };
  return { c: dynamoConsoleStore({ ...db.table, signed }), rows: () => n };
}

type StoredSegment = Segment & ConsoleRecord;

const rule = (id: number, extra: Record<string, unknown> = {}) => ({
  id,
  name: `r${id}`,
  context_id: 1,
  conditions: [],
  boost: 2,
  segment_id: null,
  starts_at: null,
  ends_at: null,
  enabled: true,
  created: 1,
  updated_at: 1,
  _rev: 1,
  ...extra,
});

describe('control records in one partition', () => {
  it('controlConfig answers rules, segments, experiments, rerank controls and context ids with one Query, and nothing else', async () => {
    const c = db.stores.console;
    const T = 'cfg';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const ctx2 = await createContext(c, T, { name: 'pdp', description: '' });
    await c.put(T, 'rule', rule(1));
    await c.put(T, 'rule', rule(2, { context_id: ctx2.id }));
    await c.put(T, 'rule', rule(3));
    await c.remove(T, 'rule', 3); // deleted
    await c.put(T, 'rule', rule(4));
    await c.withdraw(T, 'rule', 4); // taken back
    await c.put(T, 'segment', {
      id: 1,
      name: 's',
      description: '',
      definition: { event_type: 'buy', min_count: 1, within_days: 7 },
      size_estimate: null,
      size_computed_at: null,
      created: 1,
      updated_at: 1,
      _rev: 1,
      _deleting: null,
    });
    await c.put(T, 'experiment', {
      id: 1,
      name: 'e',
      context_id: ctx.id,
      segment_id: null,
      variants: [],
      status: 'Draft',
      attribution_window_seconds: 60,
      started_at: null,
      stopped_at: null,
      created: 1,
      updated_at: 1,
      _rev: 3,
    });
    await c.put(T, 'rerank', { id: ctx.id, context_id: ctx.id, diversity: 0.5, updated_at: 1, _rev: 1 });
    // Other kinds and other tenants stay out.
    await c.put(T, 'event_type', { id: 1, name: 'buy', weight: 1 });
    await c.put(T, 'endpoint', { id: 1, endpoint_name: 'main', is_default: true, model_version: null });
    await c.put('cfg-other', 'rule', rule(9));
    await createContext(c, 'cfg-other', { name: 'theirs', description: '' });

    const { c: store, queries } = counted();
    const cfg = await store.controlConfig(T);
    expect(queries()).toBe(1);
    expect(cfg.rules.map((r) => r.id)).toEqual([1, 2]);
    expect(cfg.rules[0]).toEqual({ id: 1, name: 'r1', context_id: 1, conditions: [], boost: 2, segment_id: null, starts_at: null, ends_at: null, enabled: true, created: 1, updated_at: 1 });
    expect(cfg.segments.map((s) => [s.id, Object.keys(s).some((k) => k.startsWith('_'))])).toEqual([[1, false]]);
    expect(cfg.experiments.map((e) => [e.id, '_rev' in e])).toEqual([[1, false]]);
    expect(cfg.rerank).toEqual([{ id: ctx.id, context_id: ctx.id, diversity: 0.5, updated_at: 1 }]);
    expect(cfg.contexts).toEqual([ctx.id, ctx2.id]);
    expect(await store.controlConfig('cfg-none')).toEqual({ rules: [], segments: [], experiments: [], rerank: [], contexts: [] });
    // The context records themselves are still where they were.
    expect((await c.list(T, 'context')).map((x) => x.name)).toEqual(['home', 'pdp']);
  });

  it('pages a kind in id order, filtered by field, after an id', async () => {
    const c = db.stores.console;
    const T = 'pages';
    for (let id = 1; id <= 7; id++) await c.put(T, 'rule', rule(id, { context_id: id % 2 ? 1 : 2 }));
    await c.put(T, 'segment', { id: 1, name: 's' });
    const first = await c.page(T, 'rule', { limit: 2, where: { context_id: 1 } });
    expect([first.rows.map((r) => r.id), first.hasMore]).toEqual([[1, 3], true]);
    const next = await c.page(T, 'rule', { limit: 2, after: 3, where: { context_id: 1 } });
    expect([next.rows.map((r) => r.id), next.hasMore]).toEqual([[5, 7], false]);
    const all = await c.page(T, 'rule', { limit: 100, after: 5 });
    expect([all.rows.map((r) => r.id), all.hasMore]).toEqual([[6, 7], false]);
    expect((await c.page(T, 'segment', { limit: 10 })).rows.map((r) => r.id)).toEqual([1]);
    // Newest first: descending ids, below `after`.
    const newest = await c.page(T, 'rule', { limit: 3, newestFirst: true });
    expect([newest.rows.map((r) => r.id), newest.hasMore]).toEqual([[7, 6, 5], true]);
    const older = await c.page(T, 'rule', { limit: 3, after: 5, newestFirst: true, where: { context_id: 1 } });
    expect([older.rows.map((r) => r.id), older.hasMore]).toEqual([[3, 1], false]);
    expect((await c.page(T, 'rule', { limit: 3, after: 1, newestFirst: true })).rows).toEqual([]);
  });

  it('replace and remove hold to their conditions', async () => {
    const c = db.stores.console;
    const T = 'conds';
    expect(await c.replace(T, 'rerank', { id: 1, context_id: 1, diversity: 0.1, _rev: 1 }, 'new')).toBe(true);
    expect(await c.replace(T, 'rerank', { id: 1, context_id: 1, diversity: 0.2, _rev: 1 }, 'new')).toBe(false);
    expect(await c.replace(T, 'rerank', { id: 1, context_id: 1, _rev: 2 }, { _rev: 5 })).toBe(false);
    expect(await c.replace(T, 'rerank', { id: 1, context_id: 1, _rev: 2 }, { _rev: 1 })).toBe(true);
    expect(await c.get(T, 'rerank', 1)).toEqual({ id: 1, context_id: 1, _rev: 2 }); // replaced whole: diversity gone
    expect(await c.remove(T, 'rerank', 1, { _rev: 1 })).toBe(false);
    expect(await c.remove(T, 'rerank', 1, { _rev: 2 })).toBe(true);
    expect(await c.remove(T, 'rerank', 1)).toBe(false);
  });

  it("keeps a resource's audit trail newest first, paged, apart from other resources and tenants", async () => {
    const c = db.stores.console;
    const entry = async (tenant: string, action: AuditEntry['action'], resource: string, actor: string | null, after: unknown): Promise<Audited> => ({
      entry: { id: await c.auditId(tenant), at: 1, actor, action, resource, before: null, after },
    });
    for (const action of ['create', 'update', 'delete'] as const) await c.put('aud', 'rule', rule(1), await entry('aud', action, 'rules/1', 'abcd1234', { n: action }));
    await c.put('aud', 'rule', rule(2), await entry('aud', 'create', 'rules/2', null, null));
    await c.put('aud-other', 'rule', rule(1), await entry('aud-other', 'create', 'rules/1', null, null));
    const first = await c.auditPage('aud', 'rules/1', { limit: 2 });
    expect([first.rows.map((e) => e.action), first.hasMore]).toEqual([['delete', 'update'], true]);
    const rest = await c.auditPage('aud', 'rules/1', { limit: 2, after: first.cursorAfter(first.rows[1]?.id ?? 0) });
    expect([rest.rows.map((e) => e.action), rest.hasMore]).toEqual([['create'], false]);
    // The cursor names its trail: another resource's or tenant's is refused, not read as an entry id.
    const otherRule = c.auditPage('aud', 'rules/2', { limit: 2, after: first.cursorAfter(first.rows[1]?.id ?? 0) });
    await expect(otherRule).rejects.toMatchObject({ code: 'validation_error', message: 'Invalid cursor.' });
    const otherTenant = c.auditPage('aud-other', 'rules/1', { limit: 2, after: first.cursorAfter(first.rows[1]?.id ?? 0) });
    await expect(otherTenant).rejects.toMatchObject({ code: 'validation_error', message: 'Invalid cursor.' });
    expect(rest.rows[0]).toMatchObject({ actor: 'abcd1234', resource: 'rules/1', before: null, after: { n: 'create' } });
  });
});

/** An experiment of two variants at 50/50 on the endpoint `main`, in the context. */
const fiftyFifty = (contextId: number) => ({
  name: 'e',
  context_id: contextId,
  attribution_window_seconds: 86_400,
  variants: [
    { name: 'a', endpoint_name: 'main', traffic_percent: 50 },
    { name: 'b', endpoint_name: 'main', traffic_percent: 50 },
  ],
});

/** The store, with `meanwhile` run once, right after experiment `id`'s start (Running) is written, before that start looks for others Running. */
function onceStarting(c: ConsoleStore, id: number, meanwhile: (tenant: string) => Promise<void>): ConsoleStore {
  let done = false;
  return {
    ...c,
    async update(tenant, kind, at, set, expect) {
      const written = await c.update(tenant, kind, at, set, expect);
      if (!done && kind === 'experiment' && at === id && set.status === 'Running') {
        done = true;
        await meanwhile(tenant);
      }
      return written;
    },
  };
}

/** Tenant `tenant`'s context `home`, its default endpoint `main`, and two Draft experiments there (50/50 on it). */
async function twoDrafts(c: ConsoleStore, tenant: string) {
  const ctx = await createContext(c, tenant, { name: 'home', description: '' });
  await createEndpoint(c, tenant, { endpoint_name: 'main', is_default: true });
  const a = await createExperiment(c, { tenant }, fiftyFifty(ctx.id));
  const b = await createExperiment(c, { tenant }, fiftyFifty(ctx.id));
  return { ctx, a, b };
}

/** Experiment `id` written Running (started at 1) behind the domain's back, as another start landing meanwhile would. */
async function startBehind(c: ConsoleStore, tenant: string, id: number): Promise<void> {
  const cur = (await c.get<Experiment & ConsoleRecord & { _rev: number }>(tenant, 'experiment', id)) as Experiment & { _rev: number };
  await c.update(tenant, 'experiment', id, { status: 'Running', started_at: 1, _rev: cur._rev + 1 });
}

/** Waits until segment `id`'s deletion under way has marked it. */
const deletionMarked = (c: ConsoleStore, tenant: string, id: number) =>
  vi.waitFor(async () => expect((await c.get<ConsoleRecord & { _deleting?: number | null }>(tenant, 'segment', id))?._deleting).toBeTypeOf('number'), { timeout: 2000, interval: 5 });
/** What a deletion came to: 'deleted', or its error's code. */
const deletion = (p: Promise<void>): Promise<string | undefined> =>
  p.then(
    () => 'deleted',
    (e: { code?: string }) => e.code,
  );
/** The store with its reads of the control records `ms` slower (a tenant with many). */
const slowRecords = (c: ConsoleStore, ms: number): ConsoleStore => ({
  ...c,
  async controlConfig(tenant) {
    await new Promise((r) => setTimeout(r, ms));
    return c.controlConfig(tenant);
  },
});

describe('races between changes', () => {
  it('a rule created while its segment is being deleted is taken back (404), not left naming a deleted segment', async () => {
    const c = db.stores.console;
    const T = 'race-seg';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, { tenant: T }, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    // The deletion marks the segment right after the rule's first check of it, then finds no rule.
    const racing: ConsoleStore = {
      ...c,
      async create(tenant, kind, rec, cap) {
        if (kind === 'rule') await c.update(tenant, 'segment', seg.id, { _deleting: Math.floor(Date.now() / 1000) });
        return c.create(tenant, kind, rec, cap);
      },
    };
    await expect(createRule(racing, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id })).rejects.toMatchObject({ code: 'segment_not_found' });
    expect((await c.controlConfig(T)).rules).toEqual([]);
    await expect(getRule(c, T, 1)).rejects.toMatchObject({ code: 'rule_not_found' });
  });

  it("a rule PATCHed between its create's write and that create's take-back (its segment went meanwhile) is kept, the PATCH with it: the create is answered as made", async () => {
    // Found by a review (2026-12-08): the take-back deleted the record whatever it held, so a
    // PATCH of it answered 200 in between was lost.
    const c = db.stores.console;
    const T = 'race-seg-patch';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, { tenant: T }, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    let patched: unknown;
    // Once the rule is written: the segment's deletion marks it, and another request PATCHes the rule (200).
    const racing: ConsoleStore = {
      ...c,
      async create(tenant, kind, rec, cap, audited) {
        const made = await c.create(tenant, kind, rec, cap, audited);
        if (kind === 'rule') {
          await c.update(tenant, 'segment', seg.id, { _deleting: Math.floor(Date.now() / 1000) });
          patched = await updateRule(c, { tenant: T }, rec.id, { name: 'renamed', boost: 5 });
        }
        return made;
      },
    };
    const made = await createRule(racing, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id });
    expect(patched).toMatchObject({ name: 'renamed', boost: 5 });
    expect(made).toMatchObject({ id: 1, name: 'renamed', boost: 5, segment_id: seg.id });
    expect(await getRule(c, T, 1)).toEqual(patched);
    // Both changes are in the trail: the create's entry is not taken out with a take-back that did not happen.
    const trail = await c.auditPage(T, 'rules/1', { limit: 10 });
    expect(trail.rows.map((e) => e.action)).toEqual(['update', 'create']);
  });

  it('a PATCH naming a segment, cut off by its deadline (503) between its write and its check, the segment deleted meanwhile: sent again it is 404 and the change undone, not 200 naming a deleted segment', async () => {
    const c = db.stores.console;
    const T = 'race-seg-patch-503';
    const who = { tenant: T, actor: 'abcd1234' };
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, who, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    const made = await createRule(c, who, { name: 'r', context_id: ctx.id, conditions: [], boost: 2 });
    // The change lands; the segment's deletion (which read the rules before it) removes the segment; then the time runs out.
    let cut = false;
    const racing: ConsoleStore = {
      ...c,
      async update(tenant, kind, id, set, expect, audited) {
        const ok = await c.update(tenant, kind, id, set, expect, audited);
        if (kind === 'rule' && ok) {
          await c.remove(T, 'segment', seg.id, {}, { kept: true });
          cut = true;
        }
        return ok;
      },
      get(tenant, kind, id) {
        if (cut) throw new DeadlinePassed();
        return c.get(tenant, kind, id);
      },
    };
    const patch = { name: 'renamed', segment_id: seg.id };
    await expect(updateRule(racing, who, made.id, patch)).rejects.toBeInstanceOf(DeadlinePassed);
    expect(await getRule(c, T, made.id)).toMatchObject({ name: 'renamed', segment_id: seg.id });
    // Was: 200, the rule naming the deleted segment.
    await expect(updateRule(c, who, made.id, patch)).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(await getRule(c, T, made.id)).toMatchObject({ name: 'r', segment_id: null, updated_at: made.updated_at });
    expect((await c.auditPage(T, `rules/${made.id}`, { limit: 10 })).rows.map((e) => e.action)).toEqual(['create']);
    // A PATCH naming a live segment the rule names already is no change, as before.
    const live = await createSegment(c, who, { name: 'live', definition: { event_type: 'buy', min_count: 2, within_days: 7 } });
    const named = await updateRule(c, who, made.id, { segment_id: live.id });
    await expect(updateRule(c, who, made.id, { segment_id: live.id })).resolves.toEqual(named);
  });

  it('a PATCH naming the segment its rule names while a deletion of it stays marked (one that died midway) undoes no acknowledged change', async () => {
    // Found by a review (2026-12-08): past the wait, a segment still marked was taken as gone, and
    // the change that named it (checked, answered 200) was undone, though the segment is there.
    const c = db.stores.console;
    const T = 'race-seg-patch-marked';
    const who = { tenant: T, actor: 'abcd1234' };
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, who, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    const made = await createRule(c, who, { name: 'r', context_id: ctx.id, conditions: [], boost: 2 });
    const named = await updateRule(c, who, made.id, { name: 'named', segment_id: seg.id });
    await c.update(T, 'segment', seg.id, { _deleting: nowSeconds() });
    await expect(updateRule(c, who, made.id, { boost: 5, segment_id: seg.id })).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(await getRule(c, T, made.id)).toEqual(named);
    expect((await c.auditPage(T, `rules/${made.id}`, { limit: 10 })).rows.map((e) => e.action)).toEqual(['update', 'create']);
  });

  it('so is a Draft experiment PATCH naming a segment, cut off the same way: sent again it is 404 and the change undone', async () => {
    const c = db.stores.console;
    const T = 'race-seg-exp-503';
    const who = { tenant: T, actor: 'abcd1234' };
    const { a } = await twoDrafts(c, T);
    const seg = await createSegment(c, who, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    let cut = false;
    const racing: ConsoleStore = {
      ...c,
      async update(tenant, kind, id, set, expect, audited) {
        const ok = await c.update(tenant, kind, id, set, expect, audited);
        if (kind === 'experiment' && ok) {
          await c.remove(T, 'segment', seg.id, {}, { kept: true });
          cut = true;
        }
        return ok;
      },
      get(tenant, kind, id) {
        if (cut) throw new DeadlinePassed();
        return c.get(tenant, kind, id);
      },
    };
    const patch = { name: 'renamed', segment_id: seg.id };
    await expect(updateExperiment(racing, who, a.id, patch)).rejects.toBeInstanceOf(DeadlinePassed);
    expect(await c.get(T, 'experiment', a.id)).toMatchObject({ name: 'renamed', segment_id: seg.id });
    await expect(updateExperiment(c, who, a.id, patch)).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(await c.get(T, 'experiment', a.id)).toMatchObject({ name: 'e', segment_id: null, status: 'Draft' });
    expect((await c.auditPage(T, `experiments/${a.id}`, { limit: 10 })).rows.map((e) => e.action)).toEqual(['create']);
  });

  it('a segment deletion that finds a rule naming it is refused and unmarks the segment', async () => {
    const c = db.stores.console;
    const T = 'race-del';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, { tenant: T }, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id });
    await expect(deleteSegment(c, { tenant: T }, seg.id)).rejects.toMatchObject({ code: 'segment_in_use' });
    // Still usable at once: the deletion's mark is gone.
    await expect(createRule(c, { tenant: T }, { name: 'r2', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id })).resolves.toMatchObject({ segment_id: seg.id });
  });

  it('a rule naming a segment whose deletion is still reading the records (then refused) is stored: of the two, one is done', async () => {
    // The deletion keeps its mark while it reads a recent rule naming the segment again (up to a
    // second): a create naming the segment meanwhile answered 404 at its first check, though the
    // deletion was then refused and the segment stayed: neither was done.
    const c = db.stores.console;
    const T = 'race-del-wait';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, { tenant: T }, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id });
    const deleting = deletion(deleteSegment(c, { tenant: T }, seg.id));
    await deletionMarked(c, T, seg.id);
    const second = createRule(c, { tenant: T }, { name: 'r2', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id });
    await expect(second).resolves.toMatchObject({ segment_id: seg.id });
    expect(await deleting).toBe('segment_in_use');
    await expect(getSegment(c, T, seg.id)).resolves.toMatchObject({ id: seg.id });
  });

  it('a rule naming a segment whose deletion reads the records slowly (a tenant with many) still waits for the deletion to end', async () => {
    // Found by a review of 0060ff2 (2026-12-06): the name waited 15 reads of the segment, the
    // deletion 10 pauses and 11 reads of the whole control partition, each counted, not timed: with
    // those reads the slower (150 ms here), the name gave up first and was refused 404 while the
    // deletion was then refused 409, the segment staying: neither request done.
    const c = db.stores.console;
    const T = 'race-del-slow';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, { tenant: T }, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id });
    const deleting = deletion(deleteSegment(slowRecords(c, 150), { tenant: T }, seg.id));
    await deletionMarked(c, T, seg.id);
    const second = createRule(c, { tenant: T }, { name: 'r2', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id }).then(
      (r) => r.segment_id,
      (e: { code?: string }) => e.code,
    );
    expect([await second, await deleting]).toEqual([seg.id, 'segment_in_use']);
    await expect(getSegment(c, T, seg.id)).resolves.toMatchObject({ id: seg.id });
  });

  it('a second deletion of a segment while the first reads the records slowly waits for it, and then finds no segment (404 segment_not_found)', async () => {
    // An open finding of earlier stops (2026-12-06): the second deletion, finding the first's mark,
    // retried about 1.5 s in all (RACES' tries) and answered 409 changed_meanwhile while the
    // first, its records read in 2 s here (a tenant with many), then deleted the segment.
    // Was: the first's records read took 2 s of real time, the second waiting up to MARK_WAIT_MS
    // (3 s) by performance.now(): about 1 s of margin on a loaded machine. Now the first's read is
    // held by a gate, and performance.now() stands still while the test holds it (a fake clock):
    // it is moved on by the 2 s the read takes, and the gate opened only once the second has read
    // the marked segment 33 times since (RACES' 32 tries, all the old code waited, could not do it).
    const c = db.stores.console;
    const T = 'race-del-twice';
    const seg = await createSegment(c, { tenant: T }, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    const records = gate();
    const slow: ConsoleStore = {
      ...c,
      async controlConfig(tenant) {
        await records.opened;
        return c.controlConfig(tenant);
      },
    };
    const first = deletion(deleteSegment(slow, { tenant: T }, seg.id));
    await deletionMarked(c, T, seg.id);
    // The second's reads of the segment, counted.
    let reads = 0;
    let onRead = () => {};
    const counting: ConsoleStore = {
      ...c,
      get: (async (tenant: string, kind: ConsoleKind, id: number) => {
        const r = await c.get(tenant, kind, id);
        if (kind === 'segment') {
          reads += 1;
          onRead();
        }
        return r;
      }) as ConsoleStore['get'],
    };
    let at = performance.now();
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => at);
    try {
      const second = deletion(deleteSegment(counting, { tenant: T }, seg.id));
      const ended = second.then(() => undefined);
      const readsReach = (n: number) =>
        Promise.race([
          new Promise<void>((resolve) => {
            onRead = () => reads >= n && resolve();
            onRead();
          }),
          ended,
        ]);
      await readsReach(1);
      at += 2000;
      await readsReach(reads + 33);
      records.open();
      expect([await first, await second]).toEqual(['deleted', 'segment_not_found']);
    } finally {
      records.open();
      clock.mockRestore();
    }
  });

  it('a segment deletion that finds a rule whose writer is about to take it back (it saw the mark) goes on: of the two, one is done', async () => {
    // Found by a black-box run (2026-12-06): a DELETE of a segment racing a PATCH of a rule naming
    // it failed 409 naming the rule, while the PATCH, finding the deletion's mark, took itself
    // back (404): neither was done, in 2 of 45 tries.
    const c = db.stores.console;
    const T = 'race-del-undo';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, { tenant: T }, { name: 's', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    const rule = await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: null });
    let reads = 0;
    let undone: Promise<unknown> | undefined;
    const racing: ConsoleStore = {
      ...c,
      async controlConfig(tenant) {
        // The rule's change is written just before the deletion reads the rules; its writer then
        // finds the mark and takes it back before the deletion reads them again (was: 150 ms
        // later by a timer, which a loaded machine could run past the deletion's 1 s of reading again).
        reads += 1;
        if (reads === 1) await c.update(tenant, 'rule', rule.id, { segment_id: seg.id, updated_at: Math.floor(Date.now() / 1000) });
        if (reads === 2) await (undone = c.update(tenant, 'rule', rule.id, { segment_id: null }));
        return c.controlConfig(tenant);
      },
    };
    await deleteSegment(racing, { tenant: T }, seg.id);
    await undone;
    await expect(getSegment(c, T, seg.id)).rejects.toMatchObject({ code: 'segment_not_found' });
    expect((await getRule(c, T, rule.id)).segment_id).toBeNull();
  });

  it('a segment changed while its deletion looks for records naming it is not left marked, nor the change lost', async () => {
    const c = db.stores.console;
    const T = 'race-del-change';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const used = await createSegment(c, { tenant: T }, { name: 'used', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    const unused = await createSegment(c, { tenant: T }, { name: 'unused', definition: { event_type: 'buy', min_count: 1, within_days: 7 } });
    await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: used.id });
    // A PATCH of the segment lands after the deletion's mark, before it looks for records naming it.
    const changing = (id: number): ConsoleStore => {
      let raced = false;
      return {
        ...c,
        async controlConfig(tenant) {
          if (!raced) {
            raced = true;
            await updateSegment(c, { tenant }, id, { description: 'changed' });
          }
          return c.controlConfig(tenant);
        },
      };
    };
    // Until 2026-12-02 the unmark, conditional on the revision marked, failed: 409 'kept changing
    // meanwhile', and the segment stayed marked (a rule naming it was 404 for a minute).
    await expect(deleteSegment(changing(used.id), { tenant: T }, used.id)).rejects.toMatchObject({ code: 'segment_in_use' });
    await expect(createRule(c, { tenant: T }, { name: 'r2', context_id: ctx.id, conditions: [], boost: 2, segment_id: used.id })).resolves.toMatchObject({ segment_id: used.id });
    expect((await getSegment(c, T, used.id)).description).toBe('changed');
    // Named by none: deleted, after the change.
    await deleteSegment(changing(unused.id), { tenant: T }, unused.id);
    await expect(getSegment(c, T, unused.id)).rejects.toMatchObject({ code: 'segment_not_found' });
  });

  it('of two experiments started at once in one context, neither is left Running beside the other', async () => {
    const c = db.stores.console;
    const T = 'race-run';
    const { a, b } = await twoDrafts(c, T);
    // A's start writes Running after B checked there was none, before B looks again.
    const racing = onceStarting(c, b.id, (tenant) => startBehind(c, tenant, a.id));
    await expect(updateExperiment(racing, { tenant: T }, b.id, { status: 'Running' })).rejects.toMatchObject({ code: 'experiment_running' });
    const after = (await c.controlConfig(T)).experiments;
    expect(after.map((e) => [e.id, e.status, e.started_at])).toEqual([
      [a.id, 'Running', 1],
      [b.id, 'Draft', null],
    ]);
  });

  it('a start that finds another Running undoes itself on the experiment as changed meanwhile: neither left Running beside the other, nor the change lost', async () => {
    const c = db.stores.console;
    const T = 'race-run-edit';
    const { a, b } = await twoDrafts(c, T);
    // Once B's start is written: A starts, and B is renamed, before B's start looks for others.
    let raced = false;
    const racing = onceStarting(c, b.id, async (tenant) => {
      raced = true;
      await startBehind(c, tenant, a.id);
      await updateExperiment(c, { tenant }, b.id, { name: 'renamed' });
    });
    // Until 2026-12-02 the undo, conditional on the revision B's start wrote, failed: B stayed
    // Running beside A, and its next try answered 400 (B "is Running").
    await expect(updateExperiment(racing, { tenant: T }, b.id, { status: 'Running' })).rejects.toMatchObject({ code: 'experiment_running' });
    expect(raced).toBe(true);
    expect((await c.controlConfig(T)).experiments.map((e) => [e.id, e.name, e.status])).toEqual([
      [a.id, a.name, 'Running'],
      [b.id, 'renamed', 'Draft'],
    ]);
  });

  it('names no experiment as Running whose own start is still being checked, however long that takes (it may undo itself)', async () => {
    const c = db.stores.console;
    const T = 'race-slow';
    const { a, b } = await twoDrafts(c, T);
    // A's start, written and being checked (on a loaded machine, for longer than two reads 25 ms
    // apart: the wait that named the Running one before), then undone.
    const cur = (await c.get<Experiment & ConsoleRecord & { _rev: number }>(T, 'experiment', a.id)) as Experiment & { _rev: number };
    expect(await c.update(T, 'experiment', a.id, { status: 'Running', started_at: 1, _starting: true, _rev: cur._rev + 1 }, { _rev: cur._rev })).toBe(true);
    const refused = updateExperiment(c, { tenant: T }, b.id, { status: 'Running' });
    // Undone once B's start has answered (was: 100 ms in, which a loaded machine could reach before B's reads).
    const undone = refused
      .then(
        () => undefined,
        () => undefined,
      )
      .then(async () => {
        expect(await c.update(T, 'experiment', a.id, { status: 'Draft', started_at: null, _starting: null, _rev: cur._rev + 2 }, { _rev: cur._rev + 1 })).toBe(true);
      });
    await expect(refused).rejects.toMatchObject({ code: 'experiment_running', message: expect.stringMatching(/^Another experiment of context \d+ is starting at the same time/) });
    await undone;
    expect((await c.controlConfig(T)).experiments.map((e) => [e.id, e.status])).toEqual([
      [a.id, 'Draft'],
      [b.id, 'Draft'],
    ]);
    // A start that held is named: its mark is cleared.
    await updateExperiment(c, { tenant: T }, a.id, { status: 'Running' });
    expect((await c.get<Experiment & ConsoleRecord & { _starting?: boolean | null }>(T, 'experiment', a.id))?._starting ?? null).toBeNull();
    await expect(updateExperiment(c, { tenant: T }, b.id, { status: 'Running' })).rejects.toMatchObject({ message: expect.stringMatching(new RegExp(`^Experiment ${a.id} is already Running`)) });
  });

  it('a start sent again after its first stopped before its check (a crash, STARTING_SECONDS ago) checks in its stead: taken back when another is Running, held when none is', async () => {
    const c = db.stores.console;
    const T = 'start-crashed';
    const { a, b } = await twoDrafts(c, T);
    // B started and held; A's start written, its check never run (the process died), long enough ago.
    await updateExperiment(c, { tenant: T }, b.id, { status: 'Running' });
    const crashed = async () => {
      const cur = (await c.get<Experiment & ConsoleRecord & { _rev: number }>(T, 'experiment', a.id)) as Experiment & { _rev: number };
      await c.update(T, 'experiment', a.id, { status: 'Running', started_at: nowSeconds() - STARTING_SECONDS - 5, _starting: true, _rev: cur._rev + 1 }, { _rev: cur._rev });
    };
    await crashed();
    // Until 2026-12-06 this answered A Running, unchecked, beside B.
    await expect(updateExperiment(c, { tenant: T }, a.id, { status: 'Running' })).rejects.toMatchObject({
      code: 'experiment_running',
      message: expect.stringMatching(new RegExp(`^Experiment ${b.id} is already Running`)),
    });
    expect((await c.controlConfig(T)).experiments.map((e) => [e.id, e.status, e.started_at])).toEqual([
      [a.id, 'Draft', null],
      [b.id, 'Running', expect.any(Number)],
    ]);
    // The trail says A was taken back.
    const [back] = (await c.auditPage(T, `experiments/${a.id}`, { limit: 1 })).rows;
    expect(back).toMatchObject({ action: 'update', before: { status: 'Running' }, after: { status: 'Draft' } });
    // With B stopped, the same crashed start sent again holds: its mark cleared.
    await updateExperiment(c, { tenant: T }, b.id, { status: 'Stopped' });
    await crashed();
    expect((await updateExperiment(c, { tenant: T }, a.id, { status: 'Running' })).status).toBe('Running');
    expect((await c.get<ConsoleRecord & { _starting?: boolean | null }>(T, 'experiment', a.id))?._starting ?? null).toBeNull();
  });

  it('a start sent again while the first start of the same experiment is still being checked answers what that start comes to', async () => {
    const c = db.stores.console;
    const T = 'race-start-again';
    const { a, b } = await twoDrafts(c, T);
    // A's start is written; B's start lands meanwhile (and holds); A's start is sent again (a
    // retry) while the first is still to look for others, and will undo itself on finding B.
    let again: Promise<unknown> | undefined;
    const racing = onceStarting(c, a.id, async (tenant) => {
      await startBehind(c, tenant, b.id);
      const p = updateExperiment(c, { tenant }, a.id, { status: 'Running' });
      again = p.then(
        (e) => e,
        (e: unknown) => e,
      );
      // Long enough for the repeat to answer, were it to answer without waiting for the first start.
      await Promise.race([again, new Promise((r) => setTimeout(r, 200))]);
    });
    await expect(updateExperiment(racing, { tenant: T }, a.id, { status: 'Running' })).rejects.toMatchObject({ code: 'experiment_running' });
    // Until the fix the repeat answered A Running (a status it already had), though A's start undid itself.
    expect(await again).toMatchObject({ code: 'experiment_running' });
    expect((await c.controlConfig(T)).experiments.map((e) => [e.id, e.status])).toEqual([
      [a.id, 'Draft'],
      [b.id, 'Running'],
    ]);
    // Once a start has held, a start sent again is the experiment as it is.
    await updateExperiment(c, { tenant: T }, b.id, { status: 'Stopped' });
    const held = await updateExperiment(c, { tenant: T }, a.id, { status: 'Running' });
    expect(await updateExperiment(c, { tenant: T }, a.id, { status: 'Running' })).toEqual(held);
  });

  it('of experiments started at once in one context, exactly one is Running, the others 409', async () => {
    const c = db.stores.console;
    const T = 'race-start';
    await createEndpoint(c, T, { endpoint_name: 'main', is_default: true });
    for (let round = 0; round < 4; round++) {
      const ctx = await createContext(c, T, { name: `ctx ${round}`, description: '' });
      const body = fiftyFifty(ctx.id);
      const exps = [await createExperiment(c, { tenant: T }, body), await createExperiment(c, { tenant: T }, body), await createExperiment(c, { tenant: T }, body)];
      const outcomes = await Promise.allSettled(exps.map((e) => updateExperiment(c, { tenant: T }, e.id, { status: 'Running' })));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const running = (await c.controlConfig(T)).experiments.filter((e) => e.context_id === ctx.id && e.status === 'Running');
      expect(running).toHaveLength(1);
      // A refusal names the one Running, or none when none was yet: never a start that undid itself meanwhile (a Draft by now).
      const named = new RegExp(`^(Experiment ${running[0]?.id} is already Running|Another experiment of context ${ctx.id} is starting at the same time)`);
      for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'experiment_running', message: expect.stringMatching(named) });
    }
  });

  it('serving assigns no experiment whose start is still being checked: while two starts race, requests go to the one that holds', async () => {
    const c = db.stores.console;
    const T = 'race-serve';
    const { ctx, a, b } = await twoDrafts(c, T);
    const deps: ControlDeps = { config: (t) => c.controlConfig(t), contextExists: async () => true, userEvents: async () => ({ events: [], cut: false }), erasedUser: async () => undefined };
    const now = () => Math.floor(Date.now() / 1000);
    let plan: ServingPlan | undefined;
    // A's start is written; B's start lands meanwhile (and holds); a request is planned before A looks again and undoes itself.
    const racing = onceStarting(c, a.id, async (tenant) => {
      await startBehind(c, tenant, b.id);
      plan = await planFor(deps, T, ctx.id, 'user-1', now());
    });
    await expect(updateExperiment(racing, { tenant: T }, a.id, { status: 'Running' })).rejects.toMatchObject({ code: 'experiment_running' });
    expect((await c.controlConfig(T)).experiments.map((e) => [e.id, e.status])).toEqual([
      [a.id, 'Draft'],
      [b.id, 'Running'],
    ]);
    // Until 2026-12-05 it went to A, a Draft by now.
    expect(plan?.assignment?.experiment.id).toBe(b.id);
    // A start whose check stopped (a crash: still marked 10 s after it began) is served as held; one just begun is not.
    const running = (id: number, started_at: number) => ({
      ...fiftyFifty(1),
      id,
      segment_id: null,
      status: 'Running',
      started_at,
      stopped_at: null,
      created: 1,
      updated_at: 1,
      _starting: true,
      _rev: 1,
    });
    for (const [tenant, startedAt, served] of [
      [`${T}-stopped`, now() - 11, 5],
      [`${T}-checking`, now(), undefined],
    ] as const) {
      await c.put(tenant, 'experiment', running(5, startedAt));
      expect((await c.controlConfig(tenant)).starting, tenant).toEqual([5]);
      expect((await planFor(deps, tenant, 1, 'user-2', now())).assignment?.experiment.id, tenant).toBe(served);
    }
  });

  it('edits of one rule made at once all land (each retried until its revision holds), none refused', async () => {
    const c = db.stores.console;
    const T = 'race-edit';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const r = await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 1, enabled: true });
    const names = Array.from({ length: 24 }, (_, k) => `name ${k}`);
    const answers = await Promise.all(names.map((name) => updateRule(c, { tenant: T }, r.id, { name })));
    expect(answers.map((a) => a.name)).toEqual(names);
    expect(names).toContain((await getRule(c, T, r.id)).name);
    // The trail lists them in the order they were written: each entry's before is the after of the one below it.
    const trail = (await c.auditPage(T, `rules/${r.id}`, { limit: 100 })).rows;
    expect(trail).toHaveLength(25);
    trail.slice(0, -1).forEach((e, k) => expect(e.before, `entry ${e.id}`).toEqual(trail[k + 1]?.after));
    expect(trail[0]?.after).toEqual(await getRule(c, T, r.id));
  });

  it('lists changes in the audit trail in the order they were written, whichever change took its entry id first', async () => {
    const c = db.stores.console;
    const T = 'race-audit';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const r = await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 1 });
    // The first change is written late, its entry's id taken: the second change is written meanwhile.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let taken = () => {};
    const firstTaken = new Promise<void>((resolve) => (taken = resolve));
    let holds = true;
    const slow: ConsoleStore = {
      ...c,
      async update(tenant, kind, id, set, expect, audited) {
        if (holds && set.name === 'first') {
          holds = false;
          taken();
          await held;
        }
        return c.update(tenant, kind, id, set, expect, audited);
      },
    };
    const first = updateRule(slow, { tenant: T }, r.id, { name: 'first' });
    await firstTaken;
    await updateRule(c, { tenant: T }, r.id, { name: 'second' });
    release();
    await first;
    expect((await getRule(c, T, r.id)).name).toBe('first');
    // Newest first: the first change (written again on the rule as the second left it, under an
    // id taken then), then the second.
    const trail = (await c.auditPage(T, `rules/${r.id}`, { limit: 10 })).rows;
    expect(trail.map((e) => [e.action, (e.before as { name?: string } | null)?.name ?? null, (e.after as { name?: string } | null)?.name])).toEqual([
      ['update', 'second', 'first'],
      ['update', 'r', 'second'],
      ['create', null, 'r'],
    ]);
  });
});

describe('segment size estimates', () => {
  const ev = (user: string, type: string): NewEvent => ({ type, user_id: user, item_id: '1', context_id: null, session_id: null, request_id: null, placement: null, extra: {} });
  const DAY = 86_400;
  const NOW = 1_800_000_000;

  it('count distinct users matching each definition within its window, and only segments due', async () => {
    const c = db.stores.console;
    const T = 'sizes';
    const events = db.stores.events;
    // Old purchases (40 days ago) count for nobody's 30-day window.
    await events.append(T, [ev('old', 'buy'), ev('old', 'buy')], NOW - 40 * DAY);
    await events.append(T, [ev('u1', 'buy'), ev('u1', 'buy'), ev('u2', 'buy'), ev('u3', 'buy'), ev('u1', 'view'), ev('u3', 'view'), ev('u4', 'view')], NOW - DAY);
    const mk = (definition: Segment['definition']) => createSegment(c, { tenant: T }, { name: 'x', definition });
    const twice = await mk({ event_type: 'buy', min_count: 2, within_days: 30 });
    const once = await mk({ event_type: 'buy', min_count: 1, within_days: 30 });
    const both = await mk({
      all: [
        { event_type: 'buy', min_count: 1, within_days: 30 },
        { event_type: 'view', min_count: 1, within_days: 30 },
      ],
    });
    const either = await mk({
      any: [
        { event_type: 'buy', min_count: 2, within_days: 30 },
        { event_type: 'view', min_count: 1, within_days: 30 },
      ],
    });
    const longer = await mk({ event_type: 'buy', min_count: 2, within_days: 60 });
    const budget = { events: 1_000_000 };
    const deps = { console: c, events: dynamoSegmentEvents(db.table) };
    expect(await refreshSegmentSizes(deps, T, NOW, budget)).toBe(5);
    const size = async (id: number) => (await c.get<StoredSegment>(T, 'segment', id))?.size_estimate;
    expect(await Promise.all([twice, once, both, either, longer].map((s) => size(s.id)))).toEqual([1, 3, 2, 3, 2]);
    expect((await c.get<StoredSegment>(T, 'segment', once.id))?.size_computed_at).toBe(NOW);
    // Each type is read once, at its longest window: buy over 60 days (6 events), view over 30 (3).
    expect(budget.events).toBe(1_000_000 - 6 - 3);
    // Nothing is due again before the refresh interval.
    expect(await refreshSegmentSizes(deps, T, NOW + 60, budget)).toBe(0);
    expect(await refreshSegmentSizes(deps, T, NOW + 3600, budget)).toBe(5);
  });

  it('cap the events read per type (a lower bound), and cost one Query for a tenant without segments', async () => {
    const c = db.stores.console;
    const T = 'sizes-cap';
    await db.stores.events.append(
      T,
      Array.from({ length: 40 }, (_, i) => ev(`u${i}`, 'buy')),
      NOW,
    );
    await createSegment(c, { tenant: T }, { name: 'x', definition: { event_type: 'buy', min_count: 1, within_days: 1 } });
    await refreshSegmentSizes({ console: c, events: dynamoSegmentEvents(db.table) }, T, NOW, { events: 1000 }, { typeCap: 8 });
    expect((await c.list<StoredSegment>(T, 'segment'))[0]?.size_estimate).toBe(8);

    const { c: store, queries } = counted();
    const reader = { timesByUser: vi.fn() };
    expect(await refreshSegmentSizes({ console: store, events: reader }, 'sizes-none', NOW, { events: 1000 })).toBe(0);
    expect([queries(), reader.timesByUser.mock.calls.length]).toEqual([1, 0]);
  });

  it('count for an `all` of three leaves only the users in every one, read each leaf from now less its within_days, and leave segments past a spent budget to the next pass', async () => {
    const c = db.stores.console;
    const T = 'sizes-all3';
    const users: Record<string, string[]> = { a: ['u1', 'u2', 'u3'], b: ['u1', 'u2'], c: ['u1', 'u3'] };
    const since = new Map<string, number>();
    const reader = {
      timesByUser: async (_t: string, type: string, from: number) => {
        since.set(type, from);
        return { times: new Map((users[type] ?? []).map((u) => [u, [NOW - DAY]])), read: 5 };
      },
    };
    const leaf = (event_type: string, within_days: number) => ({ event_type, min_count: 1, within_days });
    const three = await createSegment(c, { tenant: T }, { name: 'x', definition: { all: [leaf('a', 30), leaf('b', 7), leaf('c', 30)] } });
    const next = await createSegment(c, { tenant: T }, { name: 'y', definition: leaf('d', 1) });
    // A budget of one event: the first segment is computed (its reads overspend it), the second waits.
    expect(await refreshSegmentSizes({ console: c, events: reader }, T, NOW, { events: 1 })).toBe(1);
    // u1 alone is in a, b and c (u2 is in a and b, u3 in a and c: any two of three is not all).
    expect((await c.get<StoredSegment>(T, 'segment', three.id))?.size_estimate).toBe(1);
    expect((await c.get<StoredSegment>(T, 'segment', next.id))?.size_estimate).toBeNull();
    // As serving decides membership: events at or after now - within_days days.
    expect(Object.fromEntries(since)).toEqual({ a: NOW - 30 * DAY, b: NOW - 7 * DAY, c: NOW - 30 * DAY });
  });

  it('drop an estimate when the segment changed while it was computed', async () => {
    const c = db.stores.console;
    const T = 'sizes-race';
    const seg = await createSegment(c, { tenant: T }, { name: 'x', definition: { event_type: 'buy', min_count: 1, within_days: 1 } });
    const reader = {
      timesByUser: async () => {
        await c.update(T, 'segment', seg.id, { definition: { event_type: 'view', min_count: 1, within_days: 1 }, _rev: 2 });
        return { times: new Map([['u', [NOW]]]), read: 1 };
      },
    };
    expect(await refreshSegmentSizes({ console: c, events: reader }, T, NOW, { events: 10 })).toBe(0);
    expect((await c.get<StoredSegment>(T, 'segment', seg.id))?.size_estimate).toBeNull();
  });
});

describe("segment membership's read of a user's events", () => {
  it('reads at most SEGMENT_PAGES Query pages a read, and a read cut there is not all of the user', async () => {
    const T = 'segment-pages';
    const NOW = nowSeconds();
    // 80 views of about 30 KB each (events may be 32 KB): some 2.4 MB, 3 Query pages of 1 MB.
    const big = 'x'.repeat(30_000);
    const view = (k: number): NewEvent => ({ type: 'view', user_id: 'heavy', item_id: String(k), context_id: null, session_id: null, request_id: null, placement: null, extra: { note: big } });
    const views = Array.from({ length: 80 }, (_, k) => view(k));
    for (let k = 0; k < views.length; k += 20) await db.stores.events.append(T, views.slice(k, k + 20), NOW - 60);
    let queries = 0;
    const signed = { ...db.table.signed, query: (input: Parameters<typeof db.table.signed.query>[0]) => (queries++, db.table.signed.query(input)) };
    const events = dynamoEventStore({ ...db.table, signed });
    const segment = {
      id: 9,
      name: 'buyers',
      description: '',
      definition: { event_type: 'purchase', min_count: 3, within_days: 30 },
      size_estimate: null,
      size_computed_at: null,
      created: 1,
      updated_at: 1,
    };
    const base = controlDepsOf({ console: db.stores.console, events });
    const deps: ControlDeps = {
      ...base,
      config: async () => ({ rules: [rule(1, { segment_id: 9 })], segments: [segment], experiments: [], rerank: [], contexts: [1] }),
    };
    // The first 12 (4 x min_count) cannot decide it (no purchase among them, all in the window):
    // the latest SEGMENT_EVENTS are read, at most SEGMENT_PAGES pages of them. Until 2026-12-07
    // every page to the 500th event: 3 pages here, 16 (16 MB) for 500 events of 32 KB.
    const plan = await planFor(deps, T, 1, 'heavy', NOW);
    expect(plan.rules).toEqual([]);
    // The first read's page, and SEGMENT_PAGES (2) of the second.
    expect(queries).toBe(3);
    expect(SEGMENT_PAGES).toBe(2);
    const read = plan.userEvents?.events.length ?? 0;
    expect(read).toBeGreaterThan(12);
    expect(read).toBeLessThan(80);
    // Cut at its pages: not all of the user's events (callers read their own instead of taking these for all).
    expect(plan.userEvents?.all).toBe(false);
    expect(latestFromPlan(plan, SEGMENT_EVENTS)).toBeUndefined();
    // A user whose events fit: all of them, in one page.
    await db.stores.events.append(T, [{ ...view(1), user_id: 'light', extra: {} }], NOW - 60);
    queries = 0;
    const light = await planFor(deps, T, 1, 'light', NOW);
    expect(light.userEvents).toMatchObject({ all: true, events: [expect.objectContaining({ item_id: '1' })] });
    expect(queries).toBe(1);
  });
});

describe('Stopped experiments out of the partition serving reads', () => {
  type Stored = Experiment & ConsoleRecord & { _rev: number };

  it("controlConfig reads no Stopped experiment's row, however many: the listing, a read and the audit trail show them as before", async () => {
    const c = db.stores.console;
    const T = 'stopped-many';
    const { ctx, a, b } = await twoDrafts(c, T);
    const stopped: number[] = [];
    for (let k = 0; k < 12; k++) {
      const e = await createExperiment(c, { tenant: T }, fiftyFifty(ctx.id));
      await updateExperiment(c, { tenant: T }, e.id, { status: 'Running' });
      await updateExperiment(c, { tenant: T }, e.id, { status: 'Stopped' });
      stopped.push(e.id);
    }
    await updateExperiment(c, { tenant: T }, a.id, { status: 'Running' });

    // Serving's read: the context's marker, and the Draft and the Running experiment; no Stopped one.
    const { c: counting, rows } = rowsCounted();
    const cfg = await counting.controlConfig(T);
    expect(cfg.experiments.map((e) => [e.id, e.status])).toEqual([
      [a.id, 'Running'],
      [b.id, 'Draft'],
    ]);
    expect(rows()).toBe(3);

    // The control plane sees them all, as before: a read of one, the list, pages in id order both ways, a context's.
    const one = (await c.get<Stored>(T, 'experiment', stopped[3] as number)) as Stored;
    expect([one.status, typeof one.stopped_at, one._rev]).toEqual(['Stopped', 'number', 4]);
    const all = [a.id, b.id, ...stopped];
    expect((await c.list<Stored>(T, 'experiment')).map((e) => e.id)).toEqual(all);
    const ids = (p: { rows: Stored[] }) => p.rows.map((e) => e.id);
    const first = await c.page<Stored>(T, 'experiment', { limit: 5 });
    expect([ids(first), first.hasMore]).toEqual([all.slice(0, 5), true]);
    const next = await c.page<Stored>(T, 'experiment', { limit: 5, after: all[4] as number });
    expect([ids(next), next.hasMore]).toEqual([all.slice(5, 10), true]);
    const last = await c.page<Stored>(T, 'experiment', { limit: 5, after: all[9] as number });
    expect([ids(last), last.hasMore]).toEqual([all.slice(10), false]);
    const newest = await c.page<Stored>(T, 'experiment', { limit: 3, newestFirst: true, after: all[6] as number });
    expect([ids(newest), newest.hasMore]).toEqual([all.slice(3, 6).reverse(), true]);
    expect(ids(await c.page<Stored>(T, 'experiment', { limit: 20, where: { context_id: ctx.id } }))).toEqual(all);
    const trail = await c.auditPage(T, `experiments/${stopped[0]}`, { limit: 10 });
    expect(trail.rows.map((r) => [r.action, (r.after as { status?: string } | null)?.status])).toEqual([
      ['update', 'Stopped'],
      ['update', 'Running'],
      ['create', 'Draft'],
    ]);

    // A Stopped one is still renamed where it is, and still final.
    await updateExperiment(c, { tenant: T }, stopped[0] as number, { name: 'renamed after' });
    expect((await c.get<Stored>(T, 'experiment', stopped[0] as number))?.name).toBe('renamed after');
    await expect(updateExperiment(c, { tenant: T }, stopped[0] as number, { status: 'Running' })).rejects.toMatchObject({ message: `Experiment ${stopped[0]} is Stopped, which is final.` });
    expect((await counting.controlConfig(T)).experiments.map((e) => e.id)).toEqual([a.id, b.id]);
  });

  it('an experiment Stopped in the control partition (before 2026-12-07) is left out of the config, listed as before, and moved out by a list', async () => {
    const c = db.stores.console;
    const T = 'stopped-before';
    const { a, b } = await twoDrafts(c, T);
    // B stopped as a writer of before stored it: in place.
    const cur = (await c.get<Stored>(T, 'experiment', b.id)) as Stored;
    await put(db.table, { ...ExperimentRecord.key({ tenant: T, id: b.id }), ...cur, status: 'Stopped', started_at: 1, stopped_at: 2, _rev: cur._rev + 2 });

    expect((await c.controlConfig(T)).experiments.map((e) => e.id)).toEqual([a.id]);
    expect((await c.get<Stored>(T, 'experiment', b.id))?.status).toBe('Stopped');
    expect((await c.page<Stored>(T, 'experiment', { limit: 5 })).rows.map((e) => [e.id, e.status])).toEqual([
      [a.id, 'Draft'],
      [b.id, 'Stopped'],
    ]);
    // A list (an erasure's; a start's check of the others too) moves it out.
    expect((await c.list<Stored>(T, 'experiment')).map((e) => [e.id, e.status])).toEqual([
      [a.id, 'Draft'],
      [b.id, 'Stopped'],
    ]);
    const { c: counting, rows } = rowsCounted();
    expect((await counting.controlConfig(T)).experiments.map((e) => e.id)).toEqual([a.id]);
    expect(rows()).toBe(2);
    expect((await c.get<Stored>(T, 'experiment', b.id))?.stopped_at).toBe(2);
    expect((await c.page<Stored>(T, 'experiment', { limit: 5 })).rows.map((e) => e.id)).toEqual([a.id, b.id]);
  });
});

describe("a start's check of the others", () => {
  type Stored = Experiment & ConsoleRecord & { _rev: number };
  /** Rows read by a start that holds and a start refused (another Running: 409, read again as starts settle), in a tenant with `stopped` Stopped experiments. */
  async function rowsOfStarts(tenant: string, stopped: number): Promise<number> {
    const c = db.stores.console;
    const { ctx, a, b } = await twoDrafts(c, tenant);
    for (let k = 0; k < stopped; k++) {
      const e = await createExperiment(c, { tenant }, fiftyFifty(ctx.id));
      await updateExperiment(c, { tenant }, e.id, { status: 'Running' });
      await updateExperiment(c, { tenant }, e.id, { status: 'Stopped' });
    }
    const { c: counting, rows } = rowsCounted();
    await updateExperiment(counting, { tenant }, a.id, { status: 'Running' });
    await expect(updateExperiment(counting, { tenant }, b.id, { status: 'Running' })).rejects.toMatchObject({ code: 'experiment_running' });
    return rows();
  }

  it('reads the Draft and Running experiments, not the Stopped ones: its reads do not grow with the experiments a tenant ran', async () => {
    // Until 2026-12-07 each check listed every experiment, the Stopped ones' partition too (12 rows more a check here).
    expect(await rowsOfStarts('start-reads-stopped', 12)).toBe(await rowsOfStarts('start-reads-none', 0));
  });

  it('moves a Stopped experiment left in the control partition (before 2026-12-07) out of it, and starts as before', async () => {
    const c = db.stores.console;
    const T = 'start-moves-stopped';
    const { a, b } = await twoDrafts(c, T);
    const cur = (await c.get<Stored>(T, 'experiment', b.id)) as Stored;
    await put(db.table, { ...ExperimentRecord.key({ tenant: T, id: b.id }), ...cur, status: 'Stopped', started_at: 1, stopped_at: 2, _rev: cur._rev + 2 });
    await updateExperiment(c, { tenant: T }, a.id, { status: 'Running' });
    // Serving's read: the context's marker and A; B moved out.
    const { c: counting, rows } = rowsCounted();
    expect((await counting.controlConfig(T)).experiments.map((e) => [e.id, e.status])).toEqual([[a.id, 'Running']]);
    expect(rows()).toBe(2);
    expect((await c.get<Stored>(T, 'experiment', b.id))?.stopped_at).toBe(2);
  });
});

describe('moving Stopped experiments out of the control partition, as a list does', () => {
  type Stored = Experiment & ConsoleRecord & { _rev: number };

  it("moves several at once: a start's check (which serving waits on) does not wait on 100 moves one after another", async () => {
    const T = 'stopped-move-many';
    const { a, b } = await twoDrafts(db.stores.console, T);
    const cur = (await db.stores.console.get<Stored>(T, 'experiment', b.id)) as Stored;
    const ids = Array.from({ length: 12 }, (_, k) => b.id + 1000 + k);
    for (const id of ids) await put(db.table, { ...ExperimentRecord.key({ tenant: T, id }), ...cur, id, status: 'Stopped', started_at: 1, stopped_at: 2 });
    let inFlight = 0;
    let most = 0;
    const doc: typeof db.table.doc = Object.create(db.table.doc);
    doc.send = (async (cmd: { input: { TransactItems?: unknown[] } }) => {
      if (!cmd.input.TransactItems) return db.table.doc.send(cmd as never);
      inFlight += 1;
      most = Math.max(most, inFlight);
      try {
        await new Promise((r) => setTimeout(r, 10));
        return await db.table.doc.send(cmd as never);
      } finally {
        inFlight -= 1;
      }
    }) as typeof db.table.doc.send;
    expect((await dynamoConsoleStore({ ...db.table, doc }).list<Stored>(T, 'experiment')).map((e) => e.id)).toEqual([a.id, b.id, ...ids]);
    // Until 2026-12-07 (d497cc07) one at a time.
    expect(most).toBeGreaterThan(1);
    expect((await db.stores.console.controlConfig(T)).experiments.map((e) => e.id)).toEqual([a.id, b.id]);
    const page = await db.stores.console.page<Stored>(T, 'experiment', { limit: 20 });
    expect(page.rows.map((e) => [e.id, e.status])).toEqual([[a.id, 'Draft'], [b.id, 'Draft'], ...ids.map((id) => [id, 'Stopped'])]);
  });

  it("a move that fails leaves the row where it is and fails no list (a start's check, an erasure)", async () => {
    const T = 'stopped-move-fails';
    const { a, b } = await twoDrafts(db.stores.console, T);
    const cur = (await db.stores.console.get<Stored>(T, 'experiment', b.id)) as Stored;
    await put(db.table, { ...ExperimentRecord.key({ tenant: T, id: b.id }), ...cur, status: 'Stopped', started_at: 1, stopped_at: 2, _rev: cur._rev + 2 });
    // Every transaction refused (not as a condition or a cancellation: an error DynamoDB answered).
    let refused = 0;
    const doc: typeof db.table.doc = Object.create(db.table.doc);
    doc.send = (async (cmd: { input: { TransactItems?: unknown[] } }) => {
      if (!cmd.input.TransactItems) return db.table.doc.send(cmd as never);
      refused += 1;
      throw Object.assign(new Error('internal'), { name: 'InternalServerError' });
    }) as typeof db.table.doc.send;
    const failing = dynamoConsoleStore({ ...db.table, doc });
    // Until 2026-12-07 (d497cc07) the move's failure was the list's: a start's check of the others, or a user's erasure, failed for it.
    expect((await failing.list<Stored>(T, 'experiment')).map((e) => [e.id, e.status])).toEqual([
      [a.id, 'Draft'],
      [b.id, 'Stopped'],
    ]);
    expect(refused).toBe(1);
    expect((await db.stores.console.controlConfig(T)).experiments.map((e) => e.id)).toEqual([a.id]);
    // Left where it was, the next list moves it.
    expect((await db.stores.console.list<Stored>(T, 'experiment')).map((e) => e.id)).toEqual([a.id, b.id]);
    expect((await failing.list<Stored>(T, 'experiment')).map((e) => e.id)).toEqual([a.id, b.id]);
    expect(refused).toBe(1);
  });
});
