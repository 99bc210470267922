import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTable } from '../../shared/data/client.ts';
import { storesFor } from '../../shared/data/index.ts';
import { onboardTenant } from '../../shared/domain/credentials.ts';
import { startTestStack, TenantClient, type Api, type TestStack } from '../helpers/stack.ts';

/*
 * The control plane's Platform routes over real HTTP: rules, segments, experiments, rerank
 * controls and their audit trail. (What they change in what is served: control-serving.test.ts.)
 */
let t: TestStack;
let other: TenantClient;
const P = (m: string, p: string, b?: unknown) => t.demo.platform(m, p, b);
/** The demo key's 8-character prefix (svc_<prefix>_<token>). */
const prefixOf = (key: string) => key.split('_')[1] as string;
const ok = (r: Api, status = 200) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
};
/** A Platform 400 whose message names each field. */
const invalid = (r: Api, ...fields: string[]) => {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(Object.keys(r.body)).toEqual(['error']);
  for (const f of fields) expect(r.body.error, f).toContain(`${f}:`);
};
const context = async (name: string, client = t.demo): Promise<number> => ok(await client.platform('POST', '/api/contexts', { name }), 201).id;

/** A new tenant of the stack, onboarded in its table: its client. */
async function onboarded(tenant: string): Promise<TenantClient> {
  const endpoint = JSON.parse((await import('node:fs')).readFileSync(`${t.dataDir}/stack.json`, 'utf8')).dynamodb_endpoint as string;
  return new TenantClient(t.base, await onboardTenant(storesFor(makeTable('recsearch-local', endpoint, 'us-east-1')).credentials, tenant, { base_url: t.base, console_url: t.base, auth_url: t.base }));
}

let home: number;
let pdp: number;
const rule = (extra: Record<string, unknown> = {}) => ({ name: 'no acme', context_id: home, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Acme' }], boost: 0, ...extra });
const segDef = { event_type: 'purchase', min_count: 1, within_days: 30 };
const variants = [
  { name: 'control', endpoint_name: 'main', traffic_percent: 50 },
  { name: 'treatment', endpoint_name: 'next', traffic_percent: 50 },
];

beforeAll(async () => {
  t = await startTestStack();
  other = await onboarded('other');
  home = await context('home');
  pdp = await context('product page');
  for (const name of ['main', 'next']) ok(await P('POST', '/api/model-endpoints', { endpoint_name: name, is_default: name === 'main' }), 201);
}, 60_000);
afterAll(() => t.stop());

describe('rules', () => {
  it('create (defaults filled), get, list, patch, delete', async () => {
    const r = ok(
      await P(
        'POST',
        '/api/rules',
        rule({
          conditions: [
            { field: 'metadata.spec.power.watt', op: 'gte', value: 40 },
            { field: 'category', op: 'in', value: ['lamps', 'tents'] },
          ],
          boost: 2.5,
        }),
      ),
      201,
    );
    expect(r).toEqual({
      id: expect.any(Number),
      name: 'no acme',
      context_id: home,
      boost: 2.5,
      segment_id: null,
      starts_at: null,
      ends_at: null,
      enabled: true,
      conditions: [
        { field: 'metadata.spec.power.watt', op: 'gte', value: 40 },
        { field: 'category', op: 'in', value: ['lamps', 'tents'] },
      ],
      created: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect(ok(await P('GET', `/api/rules/${r.id}`))).toEqual(r);
    expect(ok(await P('GET', `/api/rules?contextId=${home}`)).data.map((x: { id: number }) => x.id)).toContain(r.id);
    expect(ok(await P('GET', `/api/rules?contextId=${pdp}`)).data.map((x: { id: number }) => x.id)).not.toContain(r.id);
    // A context that is not the tenant's is 404 in a list filter too, as everywhere it is named.
    expect(await P('GET', '/api/rules?contextId=9999')).toMatchObject({ status: 404, body: { error: 'No context 9999.' } });
    expect(await P('GET', '/api/experiments?contextId=9999')).toMatchObject({ status: 404, body: { error: 'No context 9999.' } });
    const patched = ok(await P('PATCH', `/api/rules/${r.id}`, { enabled: false, boost: 0.5, starts_at: 100, ends_at: 200, context_id: pdp }));
    expect(patched).toMatchObject({ id: r.id, name: 'no acme', enabled: false, boost: 0.5, starts_at: 100, ends_at: 200, context_id: pdp, conditions: r.conditions });
    expect(ok(await P('GET', `/api/rules/${r.id}`))).toEqual(patched);
    expect(ok(await P('PATCH', `/api/rules/${r.id}`, { starts_at: null }))).toMatchObject({ starts_at: null, ends_at: 200 });
    expect(await P('DELETE', `/api/rules/${r.id}`)).toMatchObject({ status: 200, body: { id: r.id, deleted: true } });
    expect(await P('GET', `/api/rules/${r.id}`)).toMatchObject({ status: 404, body: { error: `No rule ${r.id}.` } });
    expect((await P('DELETE', `/api/rules/${r.id}`)).status).toBe(404);
    expect((await P('PATCH', `/api/rules/${r.id}`, { boost: 1 })).status).toBe(404);
    expect(ok(await P('GET', '/api/rules?limit=100')).data.map((x: { id: number }) => x.id)).not.toContain(r.id);
  });

  it('malformed rules are 400 naming the field', async () => {
    invalid(await P('POST', '/api/rules', rule({ conditions: [{ field: 'metadata.brand', op: 'like', value: 'x' }] })), 'conditions.0.op');
    invalid(
      await P(
        'POST',
        '/api/rules',
        rule({
          conditions: [
            { field: 'category', op: 'eq', value: 'a' },
            { field: 'category', op: 'in', value: 'a' },
          ],
        }),
      ),
      'conditions.1.value',
    );
    invalid(await P('POST', '/api/rules', rule({ conditions: [{ field: 'created', op: 'gte', value: '2024' }] })), 'conditions.0.value');
    // created is Unix seconds for every op (a string could never match), and an in list's length is said as such.
    for (const [op, value] of [
      ['eq', 'yesterday'],
      ['neq', true],
      ['in', [1, '2']],
      // Whole seconds: a fraction never equals one.
      ['eq', 1.5],
      ['in', [1, 2.5]],
    ] as const) {
      const r = await P('POST', '/api/rules', rule({ conditions: [{ field: 'created', op, value }] }));
      invalid(r, 'conditions.0.value');
      expect(r.body.error).toContain('Unix seconds');
    }
    // name is a string of every item, created a number of every item: other kinds, gte/lte on name and exists false never match (stored until 2026-12-05).
    for (const [field, op, value, says] of [
      ['name', 'gte', 3, 'name is a string'],
      ['name', 'eq', 3, 'a string for eq on name'],
      ['name', 'neq', false, 'a string for neq on name'],
      ['name', 'in', ['a', 2], 'the values of name must be strings'],
      ['name', 'exists', false, 'every item has a name'],
      ['created', 'exists', false, 'every item has a created'],
    ] as const) {
      const r = await P('POST', '/api/rules', rule({ conditions: [{ field, op, value }] }));
      invalid(r, 'conditions.0.value');
      expect(r.body.error).toContain(says);
    }
    for (const value of [true, 'x']) expect((await P('POST', '/api/rules', rule({ conditions: [{ field: 'name', op: value === true ? 'exists' : 'neq', value }] }))).status).toBe(201);
    const tooMany = await P('POST', '/api/rules', rule({ conditions: [{ field: 'category', op: 'in', value: Array.from({ length: 101 }, (_, k) => `v${k}`) }] }));
    expect(tooMany.body.error).toContain('conditions.0.value: an in list holds at most 100 values');
    expect((await P('POST', '/api/rules', rule({ conditions: [{ field: 'category', op: 'in', value: [] }] }))).body.error).toContain('conditions.0.value: an in list must not be empty');
    // A list for another op is said to be one, whatever its length.
    for (const value of [[], Array.from({ length: 101 }, (_, k) => `v${k}`)]) {
      const r = await P('POST', '/api/rules', rule({ conditions: [{ field: 'category', op: 'neq', value }] }));
      expect(r.body.error).toBe('Invalid request body. conditions.0.value: value must be a single string, number or boolean for neq.');
    }
    invalid(await P('POST', '/api/rules', rule({ conditions: [{ field: 'metadata.x', op: 'exists', value: 'yes' }] })), 'conditions.0.value');
    invalid(await P('POST', '/api/rules', rule({ conditions: [{ field: 'metadata.x', op: 'eq' }] })), 'conditions.0.value');
    invalid(await P('POST', '/api/rules', rule({ conditions: [{ field: 'price', op: 'eq', value: 1 }] })), 'conditions.0.field');
    invalid(await P('POST', '/api/rules', rule({ conditions: [{ field: `metadata${'.k'.repeat(9)}`, op: 'exists', value: true }] })), 'conditions.0.field');
    expect((await P('POST', '/api/rules', rule({ conditions: [{ field: `metadata${'.k'.repeat(8)}`, op: 'exists', value: true }] }))).status).toBe(201);
    invalid(await P('POST', '/api/rules', rule({ conditions: Array.from({ length: 21 }, () => ({ field: 'name', op: 'eq', value: 'x' })) })), 'conditions');
    invalid(await P('POST', '/api/rules', rule({ boost: -1 })), 'boost');
    invalid(await P('POST', '/api/rules', rule({ boost: 1001 })), 'boost');
    invalid(await P('POST', '/api/rules', rule({ context_id: '1' })), 'context_id');
    invalid(await P('POST', '/api/rules', rule({ starts_at: 200, ends_at: 100 })), 'ends_at');
    invalid(await P('POST', '/api/rules', rule({ colour: 'red' })), 'colour');
    invalid(await P('POST', '/api/rules', { conditions: [], boost: 1 }), 'name', 'context_id');
    const id = ok(await P('POST', '/api/rules', rule({ starts_at: 100 })), 201).id;
    invalid(await P('PATCH', `/api/rules/${id}`, {}), 'body');
    // Checked against what is stored: ends_at before the stored starts_at.
    invalid(await P('PATCH', `/api/rules/${id}`, { ends_at: 50 }), 'ends_at');
    invalid(
      await P('PATCH', `/api/rules/${id}`, {
        conditions: [
          { field: 'name', op: 'lte', value: 3 },
          { field: 'name', op: 'neq', value: [1] },
        ],
      }),
      'conditions.1.value',
    );
    invalid(await P('GET', '/api/rules/abc'), 'id');
    // An id past any a record can have is well formed and names nothing: 404, the digits as sent; as a context, the same.
    expect(await P('GET', '/api/rules/9007199254740992')).toMatchObject({ status: 404, body: { error: 'No record with id 9007199254740992.' } });
    expect(await P('GET', '/api/rerank-controls?contextId=99999999999999999999')).toMatchObject({ status: 404, body: { error: 'No context 99999999999999999999.' } });
    expect(await P('GET', '/api/rules?starting_after=99999999999999999999')).toMatchObject({ status: 200, body: { data: [], has_more: false } });
    // Each part within its limits, the whole more than a record holds (DynamoDB's 400 KB): 400, not 500.
    const big = Array.from({ length: 20 }, (_, k) => ({ field: 'metadata.brand', op: 'in', value: Array.from({ length: 100 }, (_, j) => `${k}-${j}-${'x'.repeat(230)}`) }));
    invalid(await P('POST', '/api/rules', rule({ conditions: big })), 'conditions');
    invalid(await P('PATCH', `/api/rules/${id}`, { conditions: big }), 'conditions');
    expect((await P('POST', '/api/rules', rule({ conditions: big.slice(0, 2) }))).status).toBe(201);
  });

  it('a context_id past the safe integers (2^53 + 2, 1e300) is one 400 saying it is out of range', async () => {
    // Until 2026-12-07 each was told twice: "must be an integer" and "is out of range".
    for (const body of [rule({ context_id: 2 ** 53 + 2 }), rule({ context_id: 1e300 })]) {
      expect(await P('POST', '/api/rules', body)).toMatchObject({ status: 400, body: { error: 'Invalid request body. context_id: context_id is out of range.' } });
    }
    expect(await P('POST', '/api/experiments', { name: 'e', context_id: 1e300, variants })).toMatchObject({
      status: 400,
      body: { error: 'Invalid request body. context_id: context_id is out of range.' },
    });
  });

  it('a rule in a context or segment the tenant lacks is 404', async () => {
    expect(await P('POST', '/api/rules', rule({ context_id: 9999 }))).toMatchObject({ status: 404, body: { error: 'No context 9999.' } });
    expect(await P('POST', '/api/rules', rule({ segment_id: 9999 }))).toMatchObject({ status: 404, body: { error: 'No segment 9999.' } });
    const id = ok(await P('POST', '/api/rules', rule()), 201).id;
    expect(await P('PATCH', `/api/rules/${id}`, { context_id: 9999 })).toMatchObject({ status: 404, body: { error: 'No context 9999.' } });
    expect(await P('PATCH', `/api/rules/${id}`, { segment_id: 9999 })).toMatchObject({ status: 404, body: { error: 'No segment 9999.' } });
    expect(ok(await P('GET', `/api/rules/${id}`))).toMatchObject({ context_id: home, segment_id: null });
  });
});

describe('descriptions', () => {
  it('a context or segment created without one answers "" (always a string); null or a number is 400 saying so, alike for both', async () => {
    const c = ok(await P('POST', '/api/contexts', { name: 'undescribed' }), 201);
    expect(c.description).toBe('');
    expect(ok(await P('GET', '/api/contexts?limit=100')).data.find((x: { id: number }) => x.id === c.id)).toEqual(c);
    const s = ok(await P('POST', '/api/segments', { name: 'undescribed', definition: segDef }), 201);
    expect(ok(await P('GET', `/api/segments/${s.id}`)).description).toBe('');
    const create = (path: string, description: unknown) => P('POST', path, { name: 'd', description, ...(path === '/api/segments' ? { definition: segDef } : {}) });
    for (const path of ['/api/contexts', '/api/segments']) {
      for (const bad of [null, 5]) expect((await create(path, bad)).body, `${path} ${bad}`).toEqual({ error: 'Invalid request body. description: description must be a string.' });
      expect((await create(path, 'x'.repeat(2001))).body).toEqual({ error: 'Invalid request body. description: description must be at most 2000 characters.' });
    }
  });
});

describe('segments', () => {
  it('create, get with its size estimate, list, patch, delete', async () => {
    const s = ok(await P('POST', '/api/segments', { name: 'buyers', definition: segDef }), 201);
    expect(s).toEqual({
      id: expect.any(Number),
      name: 'buyers',
      description: '',
      definition: segDef,
      size_estimate: null,
      size_computed_at: null,
      created: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect(ok(await P('GET', `/api/segments/${s.id}`))).toEqual(s);
    expect(ok(await P('GET', '/api/segments?limit=100')).data.map((x: { id: number }) => x.id)).toContain(s.id);
    const nested = { any: [segDef, { all: [{ event_type: 'view', min_count: 3, within_days: 7 }, { any: [{ event_type: 'cart', min_count: 1, within_days: 1 }] }] }] };
    const p = ok(await P('PATCH', `/api/segments/${s.id}`, { description: 'bought or browsed a lot', definition: nested }));
    expect(p).toMatchObject({ id: s.id, name: 'buyers', description: 'bought or browsed a lot', definition: nested });
    expect(ok(await P('GET', `/api/segments/${s.id}`))).toEqual(p);
    expect(await P('DELETE', `/api/segments/${s.id}`)).toMatchObject({ status: 200, body: { id: s.id, deleted: true } });
    expect(await P('GET', `/api/segments/${s.id}`)).toMatchObject({ status: 404, body: { error: `No segment ${s.id}.` } });
    expect((await P('DELETE', `/api/segments/${s.id}`)).status).toBe(404);
  });

  it('a segment changed while it is deleted is deleted all the same (the change not lost before it), and one in use is left usable', async () => {
    // The change sent first, the deletion right behind it: until 2026-12-02 a deletion that found
    // the change landed answered 409 'kept changing meanwhile' (14 of 15), and one whose mark the
    // change landed after left the segment marked: for a minute no rule could name it, nor could it be deleted.
    const raced = (at: string, n: number) => Promise.all([new Promise((r) => setTimeout(r, 0)).then(() => P('DELETE', at)), P('PATCH', at, { description: `changed ${n}` })]);
    for (let n = 0; n < 15; n++) {
      const s = ok(await P('POST', '/api/segments', { name: `raced ${n}`, definition: segDef }), 201);
      const [d, p] = await raced(`/api/segments/${s.id}`, n);
      expect(d.status, JSON.stringify(d.body)).toBe(200);
      expect([200, 404]).toContain(p.status);
      expect((await P('GET', `/api/segments/${s.id}`)).status).toBe(404);
    }
    for (let n = 0; n < 10; n++) {
      const s = ok(await P('POST', '/api/segments', { name: `used ${n}`, definition: segDef }), 201);
      const r = ok(await P('POST', '/api/rules', rule({ segment_id: s.id })), 201);
      const [d, p] = await raced(`/api/segments/${s.id}`, n);
      expect([d.status, d.body.error]).toEqual([409, `Segment ${s.id} is used by rule(s) ${r.id}; remove it from them first.`]);
      expect(p.status).toBe(200);
      const again = ok(await P('POST', '/api/rules', rule({ segment_id: s.id })), 201);
      for (const id of [r.id, again.id]) ok(await P('DELETE', `/api/rules/${id}`));
      ok(await P('DELETE', `/api/segments/${s.id}`));
    }
  });

  it('a tenant has at most 100: the create past them is 400, a deletion makes room', async () => {
    const O = (m: string, p: string, b?: unknown) => other.platform(m, p, b);
    const have = ok(await O('GET', '/api/segments?limit=100')).data.length as number;
    const ids: number[] = [];
    for (let k = have; k < 100; k += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, 100 - k) }, (_, n) => O('POST', '/api/segments', { name: `cap ${k + n}`, definition: segDef })));
      for (const r of batch) ids.push(ok(r, 201).id);
    }
    expect(await O('POST', '/api/segments', { name: 'one too many', definition: segDef })).toMatchObject({
      status: 400,
      body: { error: 'Too many segments. segments: a tenant has at most 100 segments.' },
    });
    ok(await O('DELETE', `/api/segments/${ids[0]}`));
    ids[0] = ok(await O('POST', '/api/segments', { name: 'in its place', definition: segDef }), 201).id;
    expect((await O('POST', '/api/segments', { name: 'one too many', definition: segDef })).status).toBe(400);
    // The other tenant as it was (its list is checked for emptiness below).
    for (const r of await Promise.all(ids.map((id) => O('DELETE', `/api/segments/${id}`)))) ok(r);
  }, 60_000);

  it("the maintenance pass estimates each segment's size, again after its definition changes", async () => {
    const events = [
      ...['a', 'a', 'b', 'c'].map((u) => ({ type: 'purchase', user_id: `size-${u}`, item_id: '1' })),
      ...['a', 'c', 'd'].map((u) => ({ type: 'view', user_id: `size-${u}`, item_id: '1' })),
    ];
    ok(await t.demo.core('POST', '/v1/events', events), 201);
    const twice = ok(await P('POST', '/api/segments', { name: 'repeat buyers', definition: { event_type: 'purchase', min_count: 2, within_days: 30 } }), 201);
    const both = ok(await P('POST', '/api/segments', { name: 'buy and view', definition: { all: [segDef, { event_type: 'view', min_count: 1, within_days: 30 }] } }), 201);
    await t.stack.maintain();
    const before = Math.floor(Date.now() / 1000) + 1;
    expect(ok(await P('GET', `/api/segments/${twice.id}`))).toMatchObject({ size_estimate: 1, size_computed_at: expect.any(Number) });
    const b = ok(await P('GET', `/api/segments/${both.id}`));
    expect(b.size_estimate).toBe(2);
    expect(b.size_computed_at).toBeLessThanOrEqual(before);
    const changed = ok(await P('PATCH', `/api/segments/${both.id}`, { definition: { any: [segDef, { event_type: 'view', min_count: 1, within_days: 30 }] } }));
    expect(changed).toMatchObject({ size_estimate: null, size_computed_at: null });
    await t.stack.maintain();
    expect(ok(await P('GET', `/api/segments/${both.id}`))).toMatchObject({ size_estimate: 4 });
  });

  it('malformed definitions are 400 naming the field', async () => {
    const seg = (definition: unknown) => P('POST', '/api/segments', { name: 's', definition });
    invalid(await seg({ event_type: 'Purchase', min_count: 1, within_days: 30 }), 'definition.event_type');
    invalid(await seg({ all: [segDef, { event_type: 'view', min_count: 0, within_days: 30 }] }), 'definition.all.1.min_count');
    invalid(await seg({ any: [{ ...segDef, within_days: 366 }] }), 'definition.any.0.within_days');
    invalid(await seg({ any: [] }), 'definition.any');
    invalid(await seg({ all: Array.from({ length: 11 }, () => segDef) }), 'definition.all');
    invalid(await seg({ ...segDef, extra: 1 }), 'definition.extra');
    invalid(await seg({ all: [segDef], any: [segDef] }), 'definition.any');
    invalid(await seg('purchase'), 'definition');
    // Four levels of all/any nest; a fifth does not.
    const nest = (depth: number): unknown => (depth === 0 ? segDef : { all: [nest(depth - 1)] });
    expect((await seg(nest(4))).status).toBe(201);
    invalid(await seg(nest(5)), 'definition.all.0.all.0.all.0.all.0');
    // 10,000 leaves, each part within its limits: more than a record holds, 400 rather than 500.
    const wide = (depth: number): unknown => (depth === 0 ? segDef : { any: Array.from({ length: 10 }, () => wide(depth - 1)) });
    invalid(await seg(wide(4)), 'definition');
    expect((await seg(wide(2))).status).toBe(201);
    invalid(await P('POST', '/api/segments', { definition: segDef }), 'name');
    invalid(await P('PATCH', '/api/segments/1', {}), 'body');
  });

  it('a segment used by a rule or a Draft or Running experiment cannot be deleted (409)', async () => {
    const s = ok(await P('POST', '/api/segments', { name: 'in use', definition: segDef }), 201);
    const r = ok(await P('POST', '/api/rules', rule({ segment_id: s.id })), 201);
    expect(r.segment_id).toBe(s.id);
    const ctx = await context('segment use');
    const e = ok(await P('POST', '/api/experiments', { name: 'x', context_id: ctx, segment_id: s.id, variants }), 201);
    expect(await P('DELETE', `/api/segments/${s.id}`)).toMatchObject({ status: 409, body: { error: expect.stringContaining(`rule(s) ${r.id} and experiment(s) ${e.id}`) } });
    ok(await P('PATCH', `/api/rules/${r.id}`, { segment_id: null }));
    ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Running' }));
    expect(await P('DELETE', `/api/segments/${s.id}`)).toMatchObject({ status: 409, body: { error: expect.stringContaining(`experiment(s) ${e.id}`) } });
    // A Stopped experiment keeps the segment id it ran with and does not hold the segment.
    ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Stopped' }));
    expect(await P('DELETE', `/api/segments/${s.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
    expect(await P('POST', '/api/rules', rule({ segment_id: s.id }))).toMatchObject({ status: 404, body: { error: `No segment ${s.id}.` } });
  });

  it('a Draft experiment lets its segment go, as the 409 asks (a Running one keeps it)', async () => {
    const s = ok(await P('POST', '/api/segments', { name: 'held by a draft', definition: segDef }), 201);
    const other = ok(await P('POST', '/api/segments', { name: 'another', definition: segDef }), 201);
    const e = ok(await P('POST', '/api/experiments', { name: 'draft', context_id: await context('draft segment'), segment_id: s.id, variants }), 201);
    expect((await P('DELETE', `/api/segments/${s.id}`)).status).toBe(409);
    expect(ok(await P('PATCH', `/api/experiments/${e.id}`, { segment_id: other.id })).segment_id).toBe(other.id);
    expect(await P('DELETE', `/api/segments/${s.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
    expect(await P('PATCH', `/api/experiments/${e.id}`, { segment_id: s.id })).toMatchObject({ status: 404, body: { error: `No segment ${s.id}.` } });
    expect(ok(await P('PATCH', `/api/experiments/${e.id}`, { segment_id: null })).segment_id).toBeNull();
    ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Running' }));
    expect((await P('PATCH', `/api/experiments/${e.id}`, { segment_id: other.id })).status).toBe(400);
    ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Stopped' }));
  });
});

describe('experiments', () => {
  it('are created Draft with defaults and answered with per-variant results', async () => {
    const ctx = await context('exp-create');
    const e = ok(await P('POST', '/api/experiments', { name: 'main vs next', context_id: ctx, variants: [...variants.slice(0, 1), { ...variants[1], rerank: { diversity: 0.3 } }] }), 201);
    expect(e).toEqual({
      id: expect.any(Number),
      name: 'main vs next',
      context_id: ctx,
      segment_id: null,
      status: 'Draft',
      attribution_window_seconds: 86_400,
      started_at: null,
      stopped_at: null,
      variants: [variants[0], { ...variants[1], rerank: { diversity: 0.3 } }],
      created: expect.any(Number),
      updated_at: expect.any(Number),
    });
    const got = ok(await P('GET', `/api/experiments/${e.id}`));
    expect(got).toMatchObject({
      ...e,
      results: {
        variants: [
          { name: 'control', requests: 0 },
          { name: 'treatment', requests: 0 },
        ],
      },
    });
    const listed = ok(await P('GET', `/api/experiments?contextId=${ctx}`));
    expect(listed).toMatchObject({ data: [{ id: e.id, results: { variants: [{ name: 'control' }, { name: 'treatment' }] } }], has_more: false, next_cursor: null });
    expect(ok(await P('GET', `/api/experiments?contextId=${home}`)).data.map((x: { id: number }) => x.id)).not.toContain(e.id);
    expect(await P('GET', '/api/experiments/9999')).toMatchObject({ status: 404, body: { error: 'No experiment 9999.' } });
    // A variant's rerank null is no controls of its own, as null unsets a control of PUT /api/rerank-controls (it was 400 "Must be an object.").
    const none = ok(await P('POST', '/api/experiments', { name: 'no rerank', context_id: ctx, variants: [variants[0], { ...variants[1], rerank: null }] }), 201);
    expect(none.variants).toEqual(variants);
    const patched = ok(await P('PATCH', `/api/experiments/${e.id}`, { variants: [{ ...variants[0], rerank: null }, variants[1]] }));
    expect(patched.variants).toEqual(variants);
    // So are {} and controls all null: one shape (it was rerank: {}), and a PATCH of one over another changes nothing.
    const empty = ok(
      await P('POST', '/api/experiments', {
        name: 'empty rerank',
        context_id: ctx,
        variants: [
          { ...variants[0], rerank: {} },
          { ...variants[1], rerank: { diversity: null } },
        ],
      }),
      201,
    );
    expect(empty.variants).toEqual(variants);
    expect(
      ok(
        await P('PATCH', `/api/experiments/${empty.id}`, {
          variants: [
            { ...variants[0], rerank: null },
            { ...variants[1], rerank: {} },
          ],
        }),
      ),
    ).toEqual(empty);
    expect(ok(await P('GET', `/api/audit?resource=experiments/${empty.id}`)).data.map((x: { action: string }) => x.action)).toEqual(['create']);
  });

  it('malformed experiments are 400 naming the field', async () => {
    const exp = (extra: Record<string, unknown>) => P('POST', '/api/experiments', { name: 'x', context_id: home, variants, ...extra });
    invalid(await exp({ variants: [{ ...variants[0], traffic_percent: 60 }, variants[1]] }), 'variants');
    invalid(await exp({ variants: [{ ...variants[0], traffic_percent: 40 }, variants[1]] }), 'variants');
    invalid(await exp({ variants: [variants[0]] }), 'variants');
    invalid(await exp({ variants: [variants[0], { ...variants[1], name: 'control' }] }), 'variants.1.name');
    invalid(
      await exp({
        variants: [
          { ...variants[0], traffic_percent: 33.333 },
          { ...variants[1], traffic_percent: 66.667 },
        ],
      }),
      'variants.0.traffic_percent',
      'variants.1.traffic_percent',
    );
    invalid(
      await exp({
        variants: [
          { ...variants[0], traffic_percent: 0 },
          { ...variants[1], traffic_percent: 100 },
        ],
      }),
      'variants.0.traffic_percent',
    );
    expect(await exp({ variants: [variants[0], { ...variants[1], endpoint_name: 'nope' }] })).toMatchObject({
      status: 400,
      body: { error: 'Invalid request body. variants.1.endpoint_name: no serving endpoint is named nope.' },
    });
    invalid(await exp({ variants: [variants[0], { ...variants[1], rerank: { diversity: 2 } }] }), 'variants.1.rerank.diversity');
    invalid(await exp({ variants: [variants[0], { ...variants[1], rerank: { context_id: 1 } }] }), 'variants.1.rerank.context_id');
    invalid(await exp({ attribution_window_seconds: 59 }), 'attribution_window_seconds');
    invalid(await exp({ attribution_window_seconds: 2_592_001 }), 'attribution_window_seconds');
    invalid(await exp({ status: 'Running' }), 'status');
    expect(
      (
        await exp({
          variants: [
            { ...variants[0], traffic_percent: 33.33 },
            { ...variants[1], traffic_percent: 33.33 },
            { name: 'third', endpoint_name: 'main', traffic_percent: 33.34 },
          ],
        })
      ).status,
    ).toBe(201);
    // A share a client computed (100 - 8.04) is stored and shown as the hundredths it stands for.
    const computed = await exp({
      variants: [
        { ...variants[0], traffic_percent: 8.04 },
        { ...variants[1], traffic_percent: 100 - 8.04 },
      ],
    });
    expect(100 - 8.04).not.toBe(91.96);
    expect(computed).toMatchObject({ status: 201, body: { variants: [{ traffic_percent: 8.04 }, { traffic_percent: 91.96 }] } });
    expect((await P('GET', `/api/experiments/${(computed.body as { id: string }).id}`)).body).toMatchObject({ variants: [{ traffic_percent: 8.04 }, { traffic_percent: 91.96 }] });
    expect(await exp({ context_id: 9999 })).toMatchObject({ status: 404, body: { error: 'No context 9999.' } });
    expect(await exp({ segment_id: 9999 })).toMatchObject({ status: 404, body: { error: 'No segment 9999.' } });
  });

  it('move Draft → Running → Stopped only; variants change only in Draft', async () => {
    const ctx = await context('exp-states');
    const e = ok(await P('POST', '/api/experiments', { name: 'x', context_id: ctx, variants }), 201);
    const bad = async (body: unknown, match: RegExp) => expect(await P('PATCH', `/api/experiments/${e.id}`, body)).toMatchObject({ status: 400, body: { error: expect.stringMatching(match) } });
    await bad({ status: 'Stopped' }, /is Draft: it can move to Running only/);
    invalid(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Draft' }), 'status');
    invalid(await P('PATCH', `/api/experiments/${e.id}`, { variants: [variants[0], { ...variants[1], endpoint_name: 'nope' }] }), 'variants.1.endpoint_name');
    const edited = ok(
      await P('PATCH', `/api/experiments/${e.id}`, {
        variants: [
          { ...variants[0], traffic_percent: 90 },
          { ...variants[1], traffic_percent: 10 },
        ],
        attribution_window_seconds: 3600,
        name: 'y',
      }),
    );
    expect(edited).toMatchObject({ name: 'y', attribution_window_seconds: 3600, status: 'Draft', variants: [{ traffic_percent: 90 }, { traffic_percent: 10 }] });
    const running = ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Running' }));
    expect(running).toMatchObject({ status: 'Running', started_at: expect.any(Number), stopped_at: null });
    // A start sent again (a retry) is no move: the experiment as it is, nothing written (it was 400 "is Running").
    expect(ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Running' }))).toEqual(running);
    await bad({ variants }, /only while it is a Draft/);
    expect(ok(await P('PATCH', `/api/experiments/${e.id}`, { name: 'renamed' }))).toMatchObject({ name: 'renamed', status: 'Running' });
    const stopped = ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Stopped' }));
    expect(stopped).toMatchObject({ status: 'Stopped', started_at: running.started_at, stopped_at: expect.any(Number) });
    await bad({ status: 'Running' }, /is Stopped, which is final/);
    // A stop sent again: the experiment as it is (its stopped_at kept), no audit entry.
    const trail = async () => ok(await P('GET', `/api/audit?resource=experiments/${e.id}`)).data.length;
    const entries = await trail();
    expect(ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Stopped' }))).toEqual(stopped);
    expect(await trail()).toBe(entries);
    expect(ok(await P('GET', `/api/experiments/${e.id}`))).toMatchObject({ status: 'Stopped', name: 'renamed' });
  });

  it('Stopped experiments are listed among the others in id order, page by page, and each read and audited as before (out of what serving reads)', async () => {
    const ctx = await context('stopped among others');
    const ids: number[] = [];
    for (let k = 0; k < 5; k++) ids.push(ok(await P('POST', '/api/experiments', { name: `e${k}`, context_id: ctx, variants }), 201).id);
    // 0, 2 and 3 Stopped (each Running first, one at a time), 4 Running, 1 a Draft.
    for (const k of [0, 2, 3, 4]) {
      ok(await P('PATCH', `/api/experiments/${ids[k]}`, { status: 'Running' }));
      if (k !== 4) ok(await P('PATCH', `/api/experiments/${ids[k]}`, { status: 'Stopped' }));
    }
    const status = ['Stopped', 'Draft', 'Stopped', 'Stopped', 'Running'];
    const pages: [number, string][][] = [];
    let after: string | null = null;
    do {
      const page = ok(await P('GET', `/api/experiments?contextId=${ctx}&limit=2${after ? `&starting_after=${after}` : ''}`));
      pages.push(page.data.map((e: { id: number; status: string }) => [e.id, e.status]));
      after = page.next_cursor;
      expect(page.has_more).toBe(after !== null);
    } while (after);
    expect(pages).toEqual([
      [
        [ids[0], status[0]],
        [ids[1], status[1]],
      ],
      [
        [ids[2], status[2]],
        [ids[3], status[3]],
      ],
      [[ids[4], status[4]]],
    ]);
    expect(ok(await P('GET', '/api/experiments?limit=100')).data.map((e: { id: number }) => e.id)).toEqual(expect.arrayContaining(ids));
    const got = ok(await P('GET', `/api/experiments/${ids[2]}`));
    expect(got).toMatchObject({
      id: ids[2],
      name: 'e2',
      status: 'Stopped',
      started_at: expect.any(Number),
      stopped_at: expect.any(Number),
      results: { variants: [{ name: 'control' }, { name: 'treatment' }] },
    });
    // Renamed where it is, with its entry on the trail after the stop's.
    expect(ok(await P('PATCH', `/api/experiments/${ids[2]}`, { name: 'renamed' }))).toMatchObject({ id: ids[2], name: 'renamed', status: 'Stopped', stopped_at: got.stopped_at });
    expect(
      ok(await P('GET', `/api/audit?resource=experiments/${ids[2]}`)).data.map((x: { action: string; after: { status: string; name: string } }) => [x.action, x.after.status, x.after.name]),
    ).toEqual([
      ['update', 'Stopped', 'renamed'],
      ['update', 'Stopped', 'e2'],
      ['update', 'Running', 'e2'],
      ['create', 'Draft', 'e2'],
    ]);
  });

  it('a Stopped experiment keeps the attribution window its requests were counted with: a change of it is 400, as one sent with the stop', async () => {
    const ctx = await context('exp-window');
    const e = ok(await P('POST', '/api/experiments', { name: 'w', context_id: ctx, variants, attribution_window_seconds: 3600 }), 201);
    ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Running' }));
    // Sent with the stop: the window would apply to no request.
    expect(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Stopped', attribution_window_seconds: 60 })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/is being stopped: its attribution window can be changed only while it is a Draft or Running/) },
    });
    expect(ok(await P('GET', `/api/experiments/${e.id}`))).toMatchObject({ status: 'Running', attribution_window_seconds: 3600 });
    const stopped = ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Stopped' }));
    expect(await P('PATCH', `/api/experiments/${e.id}`, { attribution_window_seconds: 60, name: 'w2' })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/is Stopped: its attribution window can be changed only while it is a Draft or Running/) },
    });
    const read = ok(await P('GET', `/api/experiments/${e.id}`));
    expect(read).toMatchObject({ name: 'w', attribution_window_seconds: 3600, results: { attribution_window_seconds: 3600 } });
    // Sent as it is (a form saved with a new name): no change of the window, the rename goes through.
    expect(ok(await P('PATCH', `/api/experiments/${e.id}`, { attribution_window_seconds: 3600, name: 'w2' }))).toMatchObject({ ...stopped, name: 'w2', updated_at: expect.any(Number) });
  });

  it('one Running experiment per context: starting a second is 409, in another context it runs', async () => {
    const ctx = await context('exp-one');
    const a = ok(await P('POST', '/api/experiments', { name: 'a', context_id: ctx, variants }), 201);
    const b = ok(await P('POST', '/api/experiments', { name: 'b', context_id: ctx, variants }), 201);
    const c = ok(await P('POST', '/api/experiments', { name: 'c', context_id: await context('exp-two'), variants }), 201);
    ok(await P('PATCH', `/api/experiments/${a.id}`, { status: 'Running' }));
    expect(await P('PATCH', `/api/experiments/${b.id}`, { status: 'Running', name: 'b2' })).toMatchObject({
      status: 409,
      body: { error: expect.stringContaining(`Experiment ${a.id} is already Running in context ${ctx}`) },
    });
    expect(ok(await P('GET', `/api/experiments/${b.id}`))).toMatchObject({ status: 'Draft', name: 'b', started_at: null });
    ok(await P('PATCH', `/api/experiments/${c.id}`, { status: 'Running' }));
    ok(await P('PATCH', `/api/experiments/${a.id}`, { status: 'Stopped' }));
    expect(ok(await P('PATCH', `/api/experiments/${b.id}`, { status: 'Running' }))).toMatchObject({ status: 'Running' });
  });
});

describe('rerank controls', () => {
  it('read as all null until set; PUT replaces the whole set', async () => {
    const ctx = await context('rerank');
    const unset = { context_id: ctx, diversity: null, popularity_weight: null, freshness_weight: null, max_per_category: null, exclude_seen: null, updated_at: null };
    expect(ok(await P('GET', `/api/rerank-controls?contextId=${ctx}`))).toEqual(unset);
    // No control to a context that has none (a form saved unchanged, GET's answer sent back) is no
    // change: nothing stored, updated_at still null, no entry in the trail (until 2026-12-08 a
    // record of nothing and a `create` entry).
    for (const body of [{}, unset, { diversity: null }]) expect(ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, body)), JSON.stringify(body)).toEqual(unset);
    expect(ok(await P('GET', `/api/rerank-controls?contextId=${ctx}`))).toEqual(unset);
    expect(ok(await P('GET', `/api/audit?resource=rerank-controls/${ctx}`)).data).toEqual([]);
    const set = ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { diversity: 0.3, max_per_category: 2, popularity_weight: 1.5 }));
    expect(set).toEqual({ ...unset, diversity: 0.3, max_per_category: 2, popularity_weight: 1.5, updated_at: expect.any(Number) });
    expect(ok(await P('GET', `/api/rerank-controls?contextId=${ctx}`))).toEqual(set);
    const replaced = ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { exclude_seen: true, freshness_weight: 0 }));
    expect(replaced).toEqual({ ...unset, exclude_seen: true, freshness_weight: 0, updated_at: expect.any(Number) });
    // A control sent as null is unset, as GET shows it: what a client read it may send back whole
    // (its context_id and updated_at too, which PUT does not change).
    const read = ok(await P('GET', `/api/rerank-controls?contextId=${ctx}`));
    expect(ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, read))).toEqual({ ...replaced, updated_at: expect.any(Number) });
    expect(ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { ...read, exclude_seen: null, updated_at: 1 }))).toEqual({ ...unset, freshness_weight: 0, updated_at: expect.any(Number) });
    expect(ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, {}))).toEqual({ ...unset, updated_at: expect.any(Number) });
    // Another context's controls are its own.
    expect(ok(await P('GET', `/api/rerank-controls?contextId=${home}`))).toEqual({ ...unset, context_id: home });
  });

  it('malformed controls and context ids are 400; an unknown context 404', async () => {
    const put = (body: unknown, q = `contextId=${home}`) => P('PUT', `/api/rerank-controls?${q}`, body);
    invalid(await put({ diversity: 1.5 }), 'diversity');
    invalid(await put({ popularity_weight: -1, freshness_weight: 11 }), 'popularity_weight', 'freshness_weight');
    invalid(await put({ max_per_category: 0 }), 'max_per_category');
    invalid(await put({ max_per_category: 1.5 }), 'max_per_category');
    invalid(await put({ exclude_seen: 'yes' }), 'exclude_seen');
    invalid(await put({ boost: 2 }), 'boost');
    invalid(await put({ context_id: Number(home) + 1000 }), 'context_id');
    invalid(await put({ updated_at: 'now' }), 'updated_at');
    invalid(await put({}, ''), 'contextId');
    invalid(await put({}, 'contextId=abc'), 'contextId');
    invalid(await P('GET', '/api/rerank-controls'), 'contextId');
    expect(await put({}, 'contextId=9999')).toMatchObject({ status: 404, body: { error: 'No context 9999.' } });
    expect(await P('GET', '/api/rerank-controls?contextId=9999')).toMatchObject({ status: 404, body: { error: 'No context 9999.' } });
  });
});

describe('paging', () => {
  it('lists page by limit and starting_after with has_more and next_cursor; rules and experiments filter by contextId', async () => {
    const ctx = await context('paging');
    const made: number[] = [];
    for (let k = 0; k < 5; k++) made.push(ok(await P('POST', '/api/rules', rule({ context_id: ctx, name: `p${k}` })), 201).id);
    await P('POST', '/api/rules', rule()); // another context's
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { data: { id: number; context_id: number }[]; has_more: boolean; next_cursor: string | null } = ok(
        await P('GET', `/api/rules?contextId=${ctx}&limit=2${cursor ? `&starting_after=${cursor}` : ''}`),
      );
      expect(page.data.length).toBeLessThanOrEqual(2);
      expect(page.data.every((r) => r.context_id === ctx)).toBe(true);
      seen.push(...page.data.map((r) => r.id));
      // Filtered by a context, the cursor is opaque (it names the context): not the last id.
      if (page.has_more) expect(page.next_cursor).not.toBe(String(page.data[page.data.length - 1]?.id));
      else expect(page.next_cursor).toBeNull();
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect([seen, pages]).toEqual([made, 3]);
    const segs = ok(await P('GET', '/api/segments?limit=1'));
    expect(segs).toMatchObject({ has_more: true, next_cursor: String(segs.data[0].id) });
    expect(ok(await P('GET', `/api/segments?limit=1&starting_after=${segs.next_cursor}`)).data[0].id).toBeGreaterThan(segs.data[0].id);
    expect(ok(await P('GET', '/api/experiments?limit=1'))).toMatchObject({ has_more: true, data: [{ id: expect.any(Number) }] });
    invalid(await P('GET', '/api/rules?limit=101'), 'limit');
    invalid(await P('GET', '/api/rules?limit=0'), 'limit');
    invalid(await P('GET', '/api/rules?starting_after=x'), 'starting_after');
    // Without contextId, starting_after is an id, refused as the segments list refuses it, and
    // digits past the largest id (any length) are an empty page: after 575daa2b made it a
    // cursor there, 'x' was 'Invalid cursor.' and 513 digits or more a 400.
    const asSegments = (await P('GET', '/api/segments?starting_after=x')).body;
    expect(asSegments).toEqual({ error: 'Invalid query parameters. starting_after: starting_after must be a positive integer.' });
    for (const path of ['/api/rules', '/api/experiments']) {
      for (const sent of ['x', '', '0', '007', '-1']) expect((await P('GET', `${path}?starting_after=${sent}`)).body, `${path} ${sent}`).toEqual(asSegments);
      expect(await P('GET', `${path}?starting_after=${'9'.repeat(600)}`), path).toMatchObject({ status: 200, body: { data: [], has_more: false, next_cursor: null } });
    }
    invalid(await P('GET', '/api/rules?contextId=x'), 'contextId');
    invalid(await P('GET', '/api/segments?contextId=1'), 'contextId');
  });

  it("refuses another context's cursor (or the unfiltered list's, or a bare id) on a list of rules or experiments filtered by contextId", async () => {
    const a = await context('cursor a');
    const b = await context('cursor b');
    const ruleIn = async (ctx: number, name: string): Promise<number> => ok(await P('POST', '/api/rules', rule({ context_id: ctx, name })), 201).id;
    // Interleaved: B's rules lie between A's ids, so A's cursor read as a place in B skipped B's first.
    const [a1, b1, a2, b2] = [await ruleIn(a, 'a1'), await ruleIn(b, 'b1'), await ruleIn(a, 'a2'), await ruleIn(b, 'b2')];
    const ofA = ok(await P('GET', `/api/rules?contextId=${a}&limit=1`));
    expect(ofA).toMatchObject({ data: [{ id: a1 }], has_more: true });
    const cursorA = encodeURIComponent(ofA.next_cursor);
    const foreign = "Invalid cursor. starting_after: This cursor is from another context's list (or the list without contextId), or another tenant's.";
    // Until 2026-12-07 A's cursor (a1's id) sent with contextId=B listed b1 and b2 as after it; now 400.
    expect(await P('GET', `/api/rules?contextId=${b}&starting_after=${cursorA}`)).toMatchObject({ status: 400, body: { error: foreign } });
    // The unfiltered list's cursor (a bare id) is not one of a filtered list.
    const unfiltered = ok(await P('GET', '/api/rules?limit=1'));
    expect(unfiltered.next_cursor).toMatch(/^[1-9][0-9]*$/);
    for (const made of [unfiltered.next_cursor, String(a1), 'not-a-cursor']) {
      expect((await P('GET', `/api/rules?contextId=${b}&starting_after=${made}`)).body, made).toEqual({ error: 'Invalid cursor. starting_after: Not a cursor returned by this API.' });
    }
    // A filtered list's cursor is not an id of the unfiltered list.
    expect((await P('GET', `/api/rules?starting_after=${cursorA}`)).body).toEqual({ error: 'Invalid query parameters. starting_after: starting_after must be a positive integer.' });
    // Nor a cursor of the experiments of A.
    expect(await P('GET', `/api/experiments?contextId=${a}&starting_after=${cursorA}`)).toMatchObject({ status: 400, body: { error: foreign } });
    // Its own list's cursor pages on; B's list is whole.
    expect(ok(await P('GET', `/api/rules?contextId=${a}&starting_after=${cursorA}`))).toMatchObject({ data: [{ id: a2 }], has_more: false, next_cursor: null });
    expect(ok(await P('GET', `/api/rules?contextId=${b}`)).data.map((r: { id: number }) => r.id)).toEqual([b1, b2]);
    // Experiments alike.
    const e1 = ok(await P('POST', '/api/experiments', { name: 'ea1', context_id: a, variants }), 201).id;
    ok(await P('POST', '/api/experiments', { name: 'eb1', context_id: b, variants }), 201);
    const e2 = ok(await P('POST', '/api/experiments', { name: 'ea2', context_id: a, variants }), 201).id;
    const expA = ok(await P('GET', `/api/experiments?contextId=${a}&limit=1`));
    expect(expA).toMatchObject({ data: [{ id: e1 }], has_more: true });
    const expCursor = encodeURIComponent(expA.next_cursor);
    expect(await P('GET', `/api/experiments?contextId=${b}&starting_after=${expCursor}`)).toMatchObject({ status: 400, body: { error: foreign } });
    expect((await P('GET', `/api/experiments?contextId=${b}&starting_after=${e1}`)).body).toEqual({ error: 'Invalid cursor. starting_after: Not a cursor returned by this API.' });
    expect(ok(await P('GET', `/api/experiments?contextId=${a}&starting_after=${expCursor}`)).data.map((e: { id: number }) => e.id)).toEqual([e2]);
  });
});

describe('audit trail', () => {
  it('keeps every change of a rule with its actor, before and after, newest first and paged', async () => {
    const ops = ok(await P('POST', '/api/api-keys', { name: 'ops', scopes: ['admin'] }), 201);
    const r = ok(await P('POST', '/api/rules', rule()), 201);
    const u = ok(await t.demo.platform('PATCH', `/api/rules/${r.id}`, { boost: 3 }, ops.key));
    expect(await P('DELETE', `/api/rules/${r.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
    const trail = ok(await P('GET', `/api/audit?resource=rules/${r.id}`));
    const me = prefixOf(t.demo.creds.api_key);
    expect(trail).toEqual({
      data: [
        { id: expect.any(Number), at: expect.any(Number), actor: me, action: 'delete', resource: `rules/${r.id}`, before: u, after: null },
        { id: expect.any(Number), at: expect.any(Number), actor: ops.id, action: 'update', resource: `rules/${r.id}`, before: r, after: u },
        { id: expect.any(Number), at: expect.any(Number), actor: me, action: 'create', resource: `rules/${r.id}`, before: null, after: r },
      ],
      has_more: false,
      next_cursor: null,
    });
    expect(ops.id).not.toBe(me);
    const first = ok(await P('GET', `/api/audit?resource=rules/${r.id}&limit=2`));
    expect([first.data.map((e: { action: string }) => e.action), first.has_more, first.next_cursor]).toEqual([['delete', 'update'], true, expect.any(String)]);
    const rest = ok(await P('GET', `/api/audit?resource=rules/${r.id}&limit=2&starting_after=${first.next_cursor}`));
    expect([rest.data.map((e: { action: string }) => e.action), rest.has_more]).toEqual([['create'], false]);
  });

  it("refuses a cursor of another resource's trail or another tenant's, or one it never gave (it would read as an entry id and skip this trail's entries)", async () => {
    // Two rules, their changes interleaved: rule a's entries are older than b's latest.
    const a = ok(await P('POST', '/api/rules', rule({ name: 'trail a' })), 201);
    const b = ok(await P('POST', '/api/rules', rule({ name: 'trail b' })), 201);
    ok(await P('PATCH', `/api/rules/${a.id}`, { boost: 2 }));
    ok(await P('PATCH', `/api/rules/${b.id}`, { boost: 2 }));
    ok(await P('PATCH', `/api/rules/${b.id}`, { boost: 3 }));
    const ofA = ok(await P('GET', `/api/audit?resource=rules/${a.id}&limit=1`));
    expect(ofA.has_more).toBe(true);
    const cursor = encodeURIComponent(ofA.next_cursor);
    // Rule b's trail from a's cursor: refused (it read as b's entries below a's update: b's create only).
    const foreign = await P('GET', `/api/audit?resource=rules/${b.id}&starting_after=${cursor}`);
    expect(foreign.status, JSON.stringify(foreign.body)).toBe(400);
    expect(foreign.body).toEqual({ error: "Invalid cursor. starting_after: This cursor is from another resource's or another tenant's audit trail." });
    const ofOther = await other.platform('GET', `/api/audit?resource=rules/${a.id}&starting_after=${cursor}`);
    expect(ofOther.status, JSON.stringify(ofOther.body)).toBe(400);
    expect(ofOther.body.error).toMatch(/^Invalid cursor\. starting_after:/);
    for (const made of ['1', String(ofA.data[0].id), 'not-a-cursor']) {
      const r = await P('GET', `/api/audit?resource=rules/${a.id}&starting_after=${made}`);
      expect(r.body, made).toEqual({ error: 'Invalid cursor. starting_after: Not a cursor returned by this API.' });
    }
    // Its own trail's cursor pages on.
    expect(ok(await P('GET', `/api/audit?resource=rules/${a.id}&starting_after=${cursor}`)).data.map((e: { action: string }) => e.action)).toEqual(['create']);
  });

  it('keeps changes of segments, experiments and rerank controls', async () => {
    const s = ok(await P('POST', '/api/segments', { name: 'audited', definition: segDef }), 201);
    const s2 = ok(await P('PATCH', `/api/segments/${s.id}`, { name: 'audited 2' }));
    const segTrail = ok(await P('GET', `/api/audit?resource=segments/${s.id}`)).data;
    expect(segTrail.map((e: { action: string; before: unknown; after: unknown }) => [e.action, e.before, e.after])).toEqual([
      ['update', s, s2],
      ['create', null, s],
    ]);

    const ctx = await context('audited');
    const e = ok(await P('POST', '/api/experiments', { name: 'x', context_id: ctx, variants }), 201);
    const run = ok(await P('PATCH', `/api/experiments/${e.id}`, { status: 'Running' }));
    const expTrail = ok(await P('GET', `/api/audit?resource=experiments/${e.id}`)).data;
    expect(expTrail.map((x: { action: string; before: unknown; after: unknown }) => [x.action, x.before, x.after])).toEqual([
      ['update', e, run],
      ['create', null, e],
    ]);

    const c1 = ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { diversity: 0.5 }));
    const c2 = ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { max_per_category: 3 }));
    const rrTrail = ok(await P('GET', `/api/audit?resource=rerank-controls/${ctx}`)).data;
    expect(rrTrail.map((x: { action: string; before: unknown; after: unknown; actor: string }) => [x.action, x.before, x.after, x.actor])).toEqual([
      ['update', c1, c2, prefixOf(t.demo.creds.api_key)],
      ['create', null, c1, prefixOf(t.demo.creds.api_key)],
    ]);
    // Refused changes leave no entry.
    expect((await P('PATCH', `/api/experiments/${e.id}`, { status: 'Draft' })).status).toBe(400);
    expect(ok(await P('GET', `/api/audit?resource=experiments/${e.id}`)).data).toHaveLength(2);
  });

  it('a change of nothing (each field sent as it is, a PATCH or PUT sent twice) answers the record and writes no entry', async () => {
    const trail = async (resource: string) => ok(await P('GET', `/api/audit?resource=${resource}`)).data.map((x: { action: string }) => x.action);
    const r = ok(await P('POST', '/api/rules', rule()), 201);
    const u = ok(await P('PATCH', `/api/rules/${r.id}`, { boost: 3 }));
    expect(ok(await P('PATCH', `/api/rules/${r.id}`, { boost: 3, conditions: r.conditions, name: r.name, segment_id: null }))).toEqual(u);
    expect(await trail(`rules/${r.id}`)).toEqual(['update', 'create']);
    const s = ok(await P('POST', '/api/segments', { name: 'unchanged', definition: segDef }), 201);
    expect(ok(await P('PATCH', `/api/segments/${s.id}`, { name: 'unchanged', definition: segDef }))).toEqual(s);
    expect(await trail(`segments/${s.id}`)).toEqual(['create']);
    const ctx = await context('unchanged');
    const e = ok(await P('POST', '/api/experiments', { name: 'x', context_id: ctx, variants }), 201);
    expect(ok(await P('PATCH', `/api/experiments/${e.id}`, { name: 'x', variants }))).toEqual(e);
    expect(await trail(`experiments/${e.id}`)).toEqual(['create']);
    const c1 = ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { diversity: 0.5 }));
    expect(ok(await P('PUT', `/api/rerank-controls?contextId=${ctx}`, { diversity: 0.5, max_per_category: null }))).toEqual(c1);
    expect(await trail(`rerank-controls/${ctx}`)).toEqual(['create']);
    // A change of one field among the same others is a change.
    expect(ok(await P('PATCH', `/api/rules/${r.id}`, { boost: 4, name: r.name })).boost).toBe(4);
    expect(await trail(`rules/${r.id}`)).toEqual(['update', 'update', 'create']);
  });

  it('needs a well-formed resource', async () => {
    invalid(await P('GET', '/api/audit'), 'resource');
    invalid(await P('GET', '/api/audit?resource=rules'), 'resource');
    invalid(await P('GET', '/api/audit?resource=items/1'), 'resource');
    invalid(await P('GET', '/api/audit?resource=rules/0'), 'resource');
    expect(ok(await P('GET', '/api/audit?resource=segments/9999'))).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it('takes an id past the largest as well formed and absent: an empty trail (docs/api.md, Path IDs)', async () => {
    for (const id of ['9007199254740992', '99999999999999999', '99999999999999999999', '9'.repeat(2000)]) {
      for (const kind of ['rules', 'segments', 'experiments', 'rerank-controls']) {
        expect(ok(await P('GET', `/api/audit?resource=${kind}/${id}`))).toEqual({ data: [], has_more: false, next_cursor: null });
      }
    }
    invalid(await P('GET', '/api/audit?resource=rules/099999999999999999'), 'resource');
  });

  it('refuses a cursor sent with an id past the largest as it refuses one elsewhere: that empty trail never gave one (review of 50953d08)', async () => {
    // Until the review the empty page was answered whatever starting_after held: a bare id, another trail's cursor, anything.
    const r = ok(await P('POST', '/api/rules', rule({ name: 'trail past the largest' })), 201);
    ok(await P('PATCH', `/api/rules/${r.id}`, { boost: 2 }));
    const ofR = ok(await P('GET', `/api/audit?resource=rules/${r.id}&limit=1`));
    const cursor = encodeURIComponent(ofR.next_cursor);
    for (const id of ['9007199254740992', '9'.repeat(2000)]) {
      expect((await P('GET', `/api/audit?resource=rules/${id}&starting_after=${cursor}`)).body, id).toEqual({
        error: "Invalid cursor. starting_after: This cursor is from another resource's or another tenant's audit trail.",
      });
      for (const made of ['1', 'not-a-cursor']) {
        expect((await P('GET', `/api/audit?resource=rules/${id}&starting_after=${made}`)).body, made).toEqual({ error: 'Invalid cursor. starting_after: Not a cursor returned by this API.' });
      }
      expect(ok(await P('GET', `/api/audit?resource=rules/${id}`))).toEqual({ data: [], has_more: false, next_cursor: null });
    }
  });
});

describe('contexts, event types and serving endpoints, each read by id', () => {
  it('answer the record as created and listed; an unknown id is 404, a malformed one 400, and another tenant sees none of them', async () => {
    const ctx = ok(await P('POST', '/api/contexts', { name: 'by id', description: 'read alone' }), 201);
    expect(ok(await P('GET', `/api/contexts/${ctx.id}`))).toEqual(ctx);
    const type = ok(await P('POST', '/api/event-types', { name: 'wishlist_by_id', weight: 7 }), 201);
    expect(ok(await P('GET', `/api/event-types/${type.id}`))).toEqual(type);
    ok(await P('PATCH', `/api/event-types/${type.id}`, { weight: 9 }));
    expect(ok(await P('GET', `/api/event-types/${type.id}`))).toMatchObject({ id: type.id, weight: 9 });
    // Endpoints as the list shows them: exactly one default.
    const side = ok(await P('POST', '/api/model-endpoints', { endpoint_name: 'by-id', is_default: false }), 201);
    const listed = ok(await P('GET', '/api/model-endpoints?limit=100')).data as { id: number; is_default: boolean }[];
    for (const e of listed) expect(ok(await P('GET', `/api/model-endpoints/${e.id}`)), String(e.id)).toEqual(e);
    expect(listed.filter((e) => e.is_default)).toHaveLength(1);
    expect(ok(await P('GET', `/api/model-endpoints/${side.id}`))).toMatchObject({ endpoint_name: 'by-id', is_default: false });

    for (const [path, what] of [
      ['contexts', 'context'],
      ['event-types', 'event type'],
      ['model-endpoints', 'endpoint'],
    ] as const) {
      expect(await P('GET', `/api/${path}/999999`), path).toMatchObject({ status: 404, body: { error: `No ${what} 999999.` } });
      invalid(await P('GET', `/api/${path}/abc`), 'id');
    }
    for (const p of [`/api/contexts/${ctx.id}`, `/api/event-types/${type.id}`, `/api/model-endpoints/${side.id}`]) expect((await other.platform('GET', p)).status, p).toBe(404);
  });
});

describe('event types and serving endpoints per tenant', () => {
  it('a tenant has at most 100 of each (they cannot be deleted): the create past them is 400 and stores nothing', async () => {
    const capped = await onboarded('capped');
    const C = (m: string, p: string, b?: unknown) => capped.platform(m, p, b);
    for (const [path, body, error] of [
      ['/api/event-types', (k: number) => ({ name: `type_${k}`, weight: 1 }), 'Too many event types. event_types: a tenant has at most 100 event types.'],
      ['/api/model-endpoints', (k: number) => ({ endpoint_name: `ep-${k}`, is_default: k === 0 }), 'Too many endpoints. endpoints: a tenant has at most 100 endpoints.'],
    ] as const) {
      for (let k = 0; k < 100; k += 10) for (const r of await Promise.all(Array.from({ length: 10 }, (_, n) => C('POST', path, body(k + n))))) ok(r, 201);
      expect(await C('POST', path, body(100)), path).toMatchObject({ status: 400, body: { error } });
      const listed = [...ok(await C('GET', `${path}?limit=100`)).data];
      expect(listed, path).toHaveLength(100);
      expect(ok(await C('GET', `${path}?limit=100&starting_after=${listed[99].id}`)).data, path).toEqual([]);
    }
  }, 60_000);
});

describe('tenancy and scopes', () => {
  it("another tenant's contexts, rules, segments, experiments, controls and history are 404 or absent", async () => {
    const seg = ok(await P('POST', '/api/segments', { name: 'mine', definition: segDef }), 201);
    const r = ok(await P('POST', '/api/rules', rule({ context_id: pdp })), 201);
    const e = ok(await P('POST', '/api/experiments', { name: 'mine', context_id: pdp, variants }), 201);
    ok(await P('PUT', `/api/rerank-controls?contextId=${pdp}`, { diversity: 0.2 }));
    // The other tenant has one context (id 1) and nothing else; pdp (id 2) is the demo tenant's.
    const theirs = await context('theirs', other);
    expect(theirs).toBe(1);
    const O = (m: string, p: string, b?: unknown) => other.platform(m, p, b);
    expect(await O('POST', '/api/rules', { ...rule(), context_id: pdp })).toMatchObject({ status: 404, body: { error: `No context ${pdp}.` } });
    expect(await O('POST', '/api/rules', { ...rule(), context_id: theirs, segment_id: seg.id })).toMatchObject({ status: 404, body: { error: `No segment ${seg.id}.` } });
    expect((await O('POST', '/api/experiments', { name: 'x', context_id: pdp, variants })).status).toBe(404);
    for (const [m, p, b] of [
      ['GET', `/api/rules/${r.id}`],
      ['PATCH', `/api/rules/${r.id}`, { boost: 1 }],
      ['DELETE', `/api/rules/${r.id}`],
      ['GET', `/api/segments/${seg.id}`],
      ['PATCH', `/api/segments/${seg.id}`, { name: 'x' }],
      ['DELETE', `/api/segments/${seg.id}`],
      ['GET', `/api/experiments/${e.id}`],
      ['PATCH', `/api/experiments/${e.id}`, { status: 'Running' }],
      ['GET', `/api/rerank-controls?contextId=${pdp}`],
      ['PUT', `/api/rerank-controls?contextId=${pdp}`, {}],
    ] as [string, string, unknown?][]) {
      expect((await O(m, p, b)).status, `${m} ${p}`).toBe(404);
    }
    for (const p of ['/api/rules', '/api/segments', '/api/experiments']) expect(ok(await O('GET', p)).data, p).toEqual([]);
    expect(ok(await O('GET', `/api/audit?resource=rules/${r.id}`)).data).toEqual([]);
    // Untouched for their owner.
    expect(ok(await P('GET', `/api/rules/${r.id}`))).toEqual(r);
    expect(ok(await P('GET', `/api/experiments/${e.id}`))).toMatchObject({ status: 'Draft' });
    expect(ok(await P('GET', `/api/rerank-controls?contextId=${pdp}`))).toMatchObject({ diversity: 0.2 });
  });

  it('are admin-only: keys of other scopes get 403', async () => {
    const key = ok(await P('POST', '/api/api-keys', { name: 'ev', scopes: ['events', 'items', 'recommendations'] }), 201).key as string;
    for (const [m, p] of [
      ['GET', '/api/rules'],
      ['POST', '/api/segments'],
      ['GET', '/api/experiments'],
      ['PUT', `/api/rerank-controls?contextId=${home}`],
      ['GET', '/api/audit?resource=rules/1'],
    ]) {
      expect((await t.demo.platform(m as string, p as string, m === 'GET' ? undefined : {}, key)).status, `${m} ${p}`).toBe(403);
    }
  });
});
