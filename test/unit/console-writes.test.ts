import { describe, expect, it } from 'vitest';
import { nowSeconds } from '../../shared/clock.ts';
import type { AuditEntry, Audited, ConsoleKind, ConsoleRecord, ConsoleStore } from '../../shared/domain/console-records.ts';
import { endpointView, makeDefaultEndpoint, type Endpoint } from '../../shared/domain/endpoints.ts';
import { Conflict, NotFound } from '../../shared/domain/errors.ts';
import { apiErrorOf } from '../../shared/http/error-mapping.ts';
import { promoteModel, updateModel } from '../../shared/domain/model-versions.ts';
import { templatePatch } from '../../shared/schemas/console.ts';
import { templateView, updateTemplate, type Template } from '../../shared/domain/templates.ts';

/*
 * Platform writes of console records under concurrent requests: a fake ConsoleStore whose hooks let
 * "another request" act at a given point (right after a write lands, before it answers; or between
 * a request's read and its write), as test/unit/event-types.test.ts does for event types.
 */

interface Hooks {
  /** Runs once, right after the next write that applies, before that write answers. */
  afterWrite?: () => void;
  /** Runs once, when the next id is taken (between a request's reads and its write). */
  onNextId?: () => void;
  /** Runs once, right after the next list of this kind answers. */
  afterList?: { kind: ConsoleKind; run: () => void };
}

function fakeStore(seed: { kind: ConsoleKind; rec: ConsoleRecord }[]) {
  const rows = new Map<string, { kind: ConsoleKind; rec: ConsoleRecord }>();
  const key = (kind: ConsoleKind, id: number) => `${kind}#${id}`;
  const set = (kind: ConsoleKind, rec: ConsoleRecord) => rows.set(key(kind, rec.id), { kind, rec });
  for (const s of seed) set(s.kind, s.rec);
  const hooks: Hooks = {};
  const entries: AuditEntry[] = [];
  let ids = 100;
  const once = <K extends 'afterWrite' | 'onNextId'>(k: K) => {
    const f = hooks[k];
    delete hooks[k];
    f?.();
  };
  /** What the table's conditional UpdateItem does: the record as written, or undefined when it is gone or `expect` does not hold. */
  const write = (kind: ConsoleKind, id: number, fields: Record<string, unknown>, expect: Record<string, unknown> = {}) => {
    const cur = rows.get(key(kind, id))?.rec;
    if (!cur || !Object.entries(expect).every(([f, v]) => cur[f] === v)) return undefined;
    const next = { ...cur, ...fields };
    set(kind, next);
    return structuredClone(next);
  };
  const c = {
    get: async <T extends ConsoleRecord>(_t: string, kind: ConsoleKind, id: number) => structuredClone(rows.get(key(kind, id))?.rec) as T | undefined,
    list: async <T extends ConsoleRecord>(_t: string, kind: ConsoleKind) => {
      const out = [...rows.values()]
        .filter((r) => r.kind === kind)
        .map((r) => structuredClone(r.rec) as T)
        .sort((a, b) => a.id - b.id);
      if (hooks.afterList?.kind === kind) {
        const f = hooks.afterList.run;
        delete hooks.afterList;
        f();
      }
      return out;
    },
    nextId: async () => {
      once('onNextId');
      return ++ids;
    },
    // An audit entry's id is taken between a change's read and its write, as a new id is.
    auditId: async () => {
      once('onNextId');
      return ++ids;
    },
    update: async (_t: string, kind: ConsoleKind, id: number, fields: Record<string, unknown>, expect?: Record<string, unknown>, audited?: Audited) => {
      const w = write(kind, id, fields, expect);
      // Written with the change (one transaction), or not at all.
      if (w && audited && 'entry' in audited) entries.push(audited.entry);
      if (w) once('afterWrite');
      return w !== undefined;
    },
    updated: async <T extends ConsoleRecord>(_t: string, kind: ConsoleKind, id: number, fields: Record<string, unknown>, expect?: Record<string, unknown>) => {
      const w = write(kind, id, fields, expect);
      if (w) once('afterWrite');
      return w as T | undefined;
    },
  } as Partial<ConsoleStore> as ConsoleStore;
  return {
    c,
    hooks,
    entries,
    rec: <T extends ConsoleRecord>(kind: ConsoleKind, id: number) => rows.get(key(kind, id))?.rec as T | undefined,
    /** Another request's change, made directly on the stored record. */
    change: (kind: ConsoleKind, id: number, fields: Record<string, unknown>) => write(kind, id, fields),
    drop: (kind: ConsoleKind, id: number) => rows.delete(key(kind, id)),
    add: set,
  };
}

const model = (version: number, status: 'Trained' | 'Approved' = 'Trained'): ConsoleRecord => ({
  id: version,
  version,
  template_id: 1,
  job_name: `train-${version}`,
  created: 1,
  algorithm: 'popularity',
  metrics: {},
  label: null,
  description: null,
  status,
  artifact: `models/t/v${version}.bin`,
});

describe('PATCH /api/models/{version}', () => {
  it('answers the label this request wrote, though another PATCH of it landed right after', async () => {
    const s = fakeStore([{ kind: 'model', rec: model(3) }]);
    s.hooks.afterWrite = () => s.change('model', 3, { label: 'theirs' });
    expect(await updateModel(s.c, 't', 3, { label: 'mine' })).toMatchObject({ version: 3, label: 'mine', endpoints: [] });
    expect(s.rec('model', 3)?.label).toBe('theirs');
  });
});

const endpoint = (id: number, name: string, model_version: number | null = null): ConsoleRecord => ({ id, endpoint_name: name, is_default: false, model_version, created: 1, updated_at: 1 });

describe('POST /api/models/{version}/promote', () => {
  it("writes its audit entry with the change; a promotion of another version between its read and its write is read again, so the entry's before is the version it replaced", async () => {
    const s = fakeStore([
      { kind: 'model', rec: model(3, 'Approved') },
      { kind: 'endpoint', rec: endpoint(1, 'prod', 2) },
    ]);
    s.hooks.onNextId = () => s.change('endpoint', 1, { model_version: 4, updated_at: 2 });
    expect(await promoteModel(s.c, 't', 3, 'prod', 'svc_abcd')).toMatchObject({ version: 3, endpoints: ['prod'] });
    expect(s.rec('endpoint', 1)?.model_version).toBe(3);
    expect(s.entries).toEqual([
      {
        id: expect.any(Number),
        at: expect.any(Number),
        actor: 'svc_abcd',
        action: 'update',
        resource: 'model-endpoints/1',
        before: { endpoint_name: 'prod', model_version: 4 },
        after: { endpoint_name: 'prod', model_version: 3 },
      },
    ]);
    // Sent again: it serves that version already, so nothing is written and the trail gets no entry of no change.
    expect(await promoteModel(s.c, 't', 3, 'prod', 'svc_abcd')).toMatchObject({ version: 3, endpoints: ['prod'] });
    expect(s.entries).toHaveLength(1);
  });

  it('answers the version as served by the endpoint, though a promotion of another version to it landed right after', async () => {
    const s = fakeStore([
      { kind: 'model', rec: model(3, 'Approved') },
      { kind: 'model', rec: model(4, 'Approved') },
      { kind: 'endpoint', rec: endpoint(1, 'prod') },
    ]);
    s.hooks.afterWrite = () => s.change('endpoint', 1, { model_version: 4 });
    expect(await promoteModel(s.c, 't', 3, 'prod')).toMatchObject({ version: 3, endpoints: ['prod'] });
    expect(s.rec('endpoint', 1)?.model_version).toBe(4);
  });

  it('a promotion of the version the endpoint serves already answers it as served there, though a promotion of another version landed right after its read', async () => {
    const s = fakeStore([
      { kind: 'model', rec: model(3, 'Approved') },
      { kind: 'model', rec: model(4, 'Approved') },
      { kind: 'endpoint', rec: endpoint(1, 'prod', 3) },
    ]);
    s.hooks.afterList = { kind: 'endpoint', run: () => s.change('endpoint', 1, { model_version: 4, updated_at: 2 }) };
    expect(await promoteModel(s.c, 't', 3, 'prod', 'svc_abcd')).toMatchObject({ version: 3, endpoints: ['prod'] });
    expect(s.entries).toEqual([]);
    expect(s.rec('endpoint', 1)?.model_version).toBe(4);
  });

  it('an endpoint taken back before the write (the second create of its name) is looked for again: the one that kept the name is promoted, not a 200 for nothing', async () => {
    const s = fakeStore([
      { kind: 'model', rec: model(3, 'Approved') },
      { kind: 'endpoint', rec: endpoint(6, 'prod') },
    ]);
    // The create of endpoint 5, the same name with a lower id, is stored; endpoint 6 is withdrawn.
    s.hooks.afterList = {
      kind: 'endpoint',
      run: () => {
        s.add('endpoint', endpoint(5, 'prod'));
        s.drop('endpoint', 6);
      },
    };
    expect(await promoteModel(s.c, 't', 3, 'prod')).toMatchObject({ version: 3, endpoints: ['prod'] });
    expect(s.rec('endpoint', 5)?.model_version).toBe(3);
  });

  it('a promotion written to a record a create of its name at once is taking back is made again on the one kept', async () => {
    const s = fakeStore([
      { kind: 'model', rec: model(3, 'Approved') },
      { kind: 'endpoint', rec: endpoint(6, 'prod') },
    ]);
    // Right after the promotion lands on 6, the create of 5 (the same name, a lower id) is stored;
    // 6's create then finds it and takes its record back a moment later.
    s.hooks.afterWrite = () => {
      s.add('endpoint', endpoint(5, 'prod'));
      setTimeout(() => s.drop('endpoint', 6), 150);
    };
    expect(await promoteModel(s.c, 't', 3, 'prod')).toMatchObject({ version: 3, endpoints: ['prod'] });
    expect(s.rec('endpoint', 5)?.model_version).toBe(3);
  });

  it("waits for an endpoint's create to decide it keeps its name: a create of the name with a lower id whose write comes after the promotion's takes it back", async () => {
    // Endpoint 6's create has written it and is checking its name (`claiming`); the create of 5
    // (the same name) writes only later, 6's create then finds it and takes 6 back, and 5's
    // create, having waited for 6 to go, keeps the name.
    const s = fakeStore([
      { kind: 'model', rec: model(3, 'Approved') },
      { kind: 'endpoint', rec: { ...endpoint(6, 'prod'), created: nowSeconds(), claiming: true } },
    ]);
    setTimeout(() => s.add('endpoint', { ...endpoint(5, 'prod'), created: nowSeconds(), claiming: true }), 100);
    setTimeout(() => s.drop('endpoint', 6), 150);
    setTimeout(() => s.change('endpoint', 5, { claiming: false }), 400);
    expect(await promoteModel(s.c, 't', 3, 'prod')).toMatchObject({ version: 3, endpoints: ['prod'] });
    expect(s.rec('endpoint', 5)?.model_version).toBe(3);
    // One whose create stopped before it decided (still claiming 10 s after) keeps its name: no wait.
    s.add('endpoint', { ...endpoint(7, 'old'), created: nowSeconds() - 11, claiming: true });
    const t0 = Date.now();
    expect(await promoteModel(s.c, 't', 3, 'old')).toMatchObject({ version: 3 });
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('a promotion that finds the endpoint changed on each of its tries is 409 changed_meanwhile (the code other changes that keep racing answer), writing nothing', async () => {
    const s = fakeStore([
      { kind: 'model', rec: model(3, 'Approved') },
      { kind: 'endpoint', rec: endpoint(1, 'prod', 2) },
    ]);
    // Another change of the endpoint lands between each try's read and its write.
    let tries = 0;
    const c: ConsoleStore = {
      ...s.c,
      auditId: async (t: string) => {
        tries += 1;
        s.change('endpoint', 1, { updated_at: 100 + tries });
        return s.c.auditId(t);
      },
    };
    const e = await promoteModel(c, 't', 3, 'prod', 'svc_abcd').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Conflict);
    expect(e).toMatchObject({ code: 'changed_meanwhile', message: 'Endpoint prod kept changing meanwhile; retry.' });
    expect(apiErrorOf(e)).toMatchObject({ status: 409, type: 'conflict_error', code: 'changed_meanwhile' });
    expect(tries).toBe(8);
    expect(s.entries).toEqual([]);
    expect(s.rec('endpoint', 1)?.model_version).toBe(2);
  });

  it('an endpoint gone with none left of its name is 404', async () => {
    const s = fakeStore([
      { kind: 'model', rec: model(3, 'Approved') },
      { kind: 'endpoint', rec: endpoint(6, 'prod') },
    ]);
    s.hooks.afterList = { kind: 'endpoint', run: () => s.drop('endpoint', 6) };
    await expect(promoteModel(s.c, 't', 3, 'prod')).rejects.toBeInstanceOf(NotFound);
  });
});

const template = (id: number): ConsoleRecord => ({
  id,
  name: 'shop',
  event_types: [],
  thresholds: { per_signal_min: 0, total_min: 0 },
  status: 'Draft',
  created: 1,
  updated_at: 1,
  schedule: null,
  next_run_at: null,
  last_scheduled_run: null,
  auto_promote: null,
});

describe('PATCH /api/events/templates/{id}', () => {
  it('answers the name this request wrote, though another PATCH of it landed right after', async () => {
    const s = fakeStore([{ kind: 'template', rec: template(2) }]);
    s.hooks.afterWrite = () => s.change('template', 2, { name: 'theirs' });
    expect(await updateTemplate(s.c, 't', 2, { name: 'mine' })).toMatchObject({ id: 2, name: 'mine', status: 'Draft' });
    expect(s.rec('template', 2)?.name).toBe('theirs');
  });

  it('answers a publish made between its read and its write with the schedule it set (the template as its write left it)', async () => {
    const s = fakeStore([{ kind: 'template', rec: template(2) }]);
    const get = s.c.get;
    s.c.get = async <T extends ConsoleRecord>(t: string, kind: ConsoleKind, id: number) => {
      const r = await get<T>(t, kind, id);
      s.change('template', 2, { status: 'Published' });
      return r;
    };
    const out = await updateTemplate(s.c, 't', 2, templatePatch.parse({ schedule: { every: 'daily' } }));
    expect(out).toMatchObject({ status: 'Published', schedule: { every: 'daily' } });
    expect(out).toEqual(templateView(s.rec<Template>('template', 2) as Template));
  });
});

describe('PATCH /api/model-endpoints/{id}', () => {
  it('answers the version the endpoint serves when it is made the default, though a promotion to it landed between the read and the write', async () => {
    const s = fakeStore([
      { kind: 'endpoint', rec: { ...endpoint(1, 'main'), is_default: true } },
      { kind: 'endpoint', rec: endpoint(2, 'canary') },
    ]);
    s.hooks.onNextId = () => s.change('endpoint', 2, { model_version: 7 });
    const out = await makeDefaultEndpoint(s.c, 't', 2);
    expect(out).toMatchObject({ id: 2, endpoint_name: 'canary', is_default: true, model_version: 7 });
    expect(out).toEqual(endpointView(s.rec<Endpoint>('endpoint', 2) as Endpoint));
    expect(s.rec('endpoint', 1)?.is_default).toBe(false);
  });
});
