import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRule, createSegment, deleteRule, deleteSegment, MAX_RULES, MAX_SEGMENTS } from '../../shared/control/records.ts';
import { ConsolePlace, Endpoint, EventType, Rule, Segment } from '../../shared/data/entities.ts';
import { put, putAll, queryUpTo } from '../../shared/data/ops.ts';
import { placesOf } from '../../shared/data/places.ts';
import { ENDPOINTS, EVENT_TYPES, type ConsoleKind, type ConsoleStore } from '../../shared/domain/console-records.ts';
import { createContext } from '../../shared/domain/contexts.ts';
import { createEndpoint } from '../../shared/domain/endpoints.ts';
import { createEventType } from '../../shared/domain/event-types.ts';
import { nowSeconds } from '../../shared/clock.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

const TOO_MANY_RULES = { message: 'Too many rules.', fieldErrors: { rules: [`a tenant has at most 5 rules`] } };
const definition = { event_type: 'buy', min_count: 1, within_days: 7 };

/** The places held for a kind: what each holds. */
const placesHeld = async (tenant: string, kind: ConsoleKind) =>
  (await queryUpTo(db.table, { ...ConsolePlace.indexes.primary.query({ tenant, kind }), ConsistentRead: true }, Infinity)).map((r) => Number(r.set_id));

/** `n` rule creates at once within `cap`: how many were created (each refused one refused as over the cap). */
async function raceRules(c: ConsoleStore, tenant: string, contextId: number, n: number, cap: number): Promise<number> {
  const outcomes = await Promise.allSettled(Array.from({ length: n }, (_, k) => createRule(c, { tenant }, { name: `x${k}`, context_id: contextId, conditions: [], boost: 2 }, undefined, cap)));
  let created = 0;
  for (const o of outcomes) {
    if (o.status === 'rejected') expect(o.reason).toMatchObject({ message: 'Too many rules.' });
    else created++;
  }
  return created;
}

describe('rules and segments per tenant', () => {
  it('a tenant has at most the cap of rules, exactly, when creates come at once; a delete frees a place', async () => {
    const c = db.stores.console;
    const T = 'cap-rules';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const first = await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 5);
    await createRule(c, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 5);
    // Three places for 16 creates at once: three created, the rest refused (400), nothing left behind.
    expect(await raceRules(c, T, ctx.id, 16, 5)).toBe(3);
    const rules = (await c.controlConfig(T)).rules;
    expect(rules).toHaveLength(5);
    expect((await placesHeld(T, 'rule')).sort((a, b) => a - b)).toEqual(rules.map((r) => r.id).sort((a, b) => a - b));
    await expect(createRule(c, { tenant: T }, { name: 'more', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 5)).rejects.toMatchObject(TOO_MANY_RULES);

    await deleteRule(c, { tenant: T }, first.id);
    expect(await placesHeld(T, 'rule')).not.toContain(first.id);
    await createRule(c, { tenant: T }, { name: 'again', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 5);
    await expect(createRule(c, { tenant: T }, { name: 'more', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 5)).rejects.toMatchObject(TOO_MANY_RULES);
  }, 60_000);

  it('a rule taken back because its segment went meanwhile frees its place', async () => {
    const c = db.stores.console;
    const T = 'cap-taken-back';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    const seg = await createSegment(c, { tenant: T }, { name: 's', definition });
    const racing: ConsoleStore = {
      ...c,
      async create(tenant, kind, rec, cap) {
        if (kind === 'rule') await c.update(tenant, 'segment', seg.id, { _deleting: nowSeconds() });
        return c.create(tenant, kind, rec, cap);
      },
    };
    await expect(createRule(racing, { tenant: T }, { name: 'r', context_id: ctx.id, conditions: [], boost: 2, segment_id: seg.id }, undefined, 1)).rejects.toMatchObject({ code: 'segment_not_found' });
    expect(await placesHeld(T, 'rule')).toEqual([]);
    // Its one place is free: the next rule (no segment) is created.
    await createRule(c, { tenant: T }, { name: 'r2', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 1);
  });

  it('segments: the cap, a deletion frees a place, and segments stored before places existed count', async () => {
    const c = db.stores.console;
    const T = 'cap-segments';
    // Two written as before 2026-12-04 (rows without places).
    for (const id of [await c.nextId(T, 'segment'), await c.nextId(T, 'segment')])
      await put(db.table, { ...Segment.key({ tenant: T, id }), id, name: `old${id}`, description: '', definition, size_estimate: null, size_computed_at: null, created: 1, updated_at: 1, _rev: 1 });
    const made = await createSegment(c, { tenant: T }, { name: 'new', definition }, undefined, 3);
    await expect(createSegment(c, { tenant: T }, { name: 'past', definition }, undefined, 3)).rejects.toMatchObject({
      message: 'Too many segments.',
      fieldErrors: { segments: ['a tenant has at most 3 segments'] },
    });
    expect(await placesHeld(T, 'segment')).toHaveLength(3);
    await deleteSegment(c, { tenant: T }, made.id);
    expect(await placesHeld(T, 'segment')).toHaveLength(2);
    await createSegment(c, { tenant: T }, { name: 'in its place', definition }, undefined, 3);
    expect((await c.controlConfig(T)).segments).toHaveLength(3);
  });

  it('segments at the cap: a deletion racing creates never leaves the tenant past the cap, and once it is answered a create takes its place', async () => {
    const c = db.stores.console;
    const T = 'cap-segments-race';
    const cap = 4;
    const made = [];
    for (let k = 0; k < cap; k++) made.push(await createSegment(c, { tenant: T }, { name: `s${k}`, definition }, undefined, cap));
    const victim = made[1]?.id as number;
    const creates = Array.from({ length: 6 }, (_, k) => createSegment(c, { tenant: T }, { name: `racing${k}`, definition }, undefined, cap));
    const [deleted, ...outcomes] = await Promise.allSettled([deleteSegment(c, { tenant: T }, victim), ...creates]);
    expect(deleted.status).toBe('fulfilled');
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ message: 'Too many segments.' });
    const created = outcomes.filter((o) => o.status === 'fulfilled').length;
    expect(created).toBeLessThanOrEqual(1);
    const live = (await c.controlConfig(T)).segments.map((s) => s.id).sort((a, b) => a - b);
    expect(live).toHaveLength(cap - 1 + created);
    expect((await placesHeld(T, 'segment')).sort((a, b) => a - b)).toEqual(live);
    // The deletion answered: its place is free for the next create, unless a racing one took it.
    if (created === 0) await createSegment(c, { tenant: T }, { name: 'after', definition }, undefined, cap);
    await expect(createSegment(c, { tenant: T }, { name: 'past', definition }, undefined, cap)).rejects.toMatchObject({ message: 'Too many segments.' });
    expect((await c.controlConfig(T)).segments).toHaveLength(cap);
  });

  it('a place held by no rule (a create or delete cut off between its writes) is taken back once old', async () => {
    const c = db.stores.console;
    const T = 'cap-leak';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    await put(db.table, { ...ConsolePlace.key({ tenant: T, kind: 'rule', slot: 0 }), slot: 0, set_id: 900_000, claimed_at: nowSeconds() - 120 });
    await put(db.table, { ...ConsolePlace.key({ tenant: T, kind: 'rule', slot: 1 }), slot: 1, set_id: 900_001, claimed_at: nowSeconds() });
    await createRule(c, { tenant: T }, { name: 'a', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 3);
    // Full: the old one is taken back, the recent one (a create under way) is not.
    await createRule(c, { tenant: T }, { name: 'b', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 3);
    await expect(createRule(c, { tenant: T }, { name: 'c', context_id: ctx.id, conditions: [], boost: 2 }, undefined, 3)).rejects.toMatchObject({ message: 'Too many rules.' });
    expect((await c.controlConfig(T)).rules).toHaveLength(2);
  });

  it('the real caps: 1,000 rules and 100 segments', async () => {
    expect([MAX_RULES, MAX_SEGMENTS]).toEqual([1000, 100]);
    const c = db.stores.console;
    const T = 'cap-real';
    const ctx = await createContext(c, T, { name: 'home', description: '' });
    // Written as createRule leaves them, each holding its place (in batches, to keep this short).
    const rows = [];
    for (let k = 0; k < MAX_RULES; k++) {
      const id = await c.nextId(T, 'rule');
      rows.push({
        ...Rule.key({ tenant: T, id }),
        id,
        name: `r${id}`,
        context_id: ctx.id,
        conditions: [],
        boost: 2,
        segment_id: null,
        starts_at: null,
        ends_at: null,
        enabled: true,
        created: 1,
        updated_at: 1,
        _rev: 1,
      });
      rows.push({ ...ConsolePlace.key({ tenant: T, kind: 'rule', slot: k }), slot: k, set_id: id, claimed_at: 1 });
    }
    await putAll(db.table, rows);
    await expect(createRule(c, { tenant: T }, { name: 'one more', context_id: ctx.id, conditions: [], boost: 2 })).rejects.toMatchObject({
      fieldErrors: { rules: ['a tenant has at most 1000 rules'] },
    });
    for (let k = 0; k < MAX_SEGMENTS; k++) await createSegment(c, { tenant: T }, { name: `s${k}`, definition });
    await expect(createSegment(c, { tenant: T }, { name: 'one more', definition })).rejects.toMatchObject({ fieldErrors: { segments: ['a tenant has at most 100 segments'] } });
    const cfg = await c.controlConfig(T);
    expect([cfg.rules.length, cfg.segments.length]).toEqual([MAX_RULES, MAX_SEGMENTS]);
    expect(await queryUpTo(db.table, Rule.indexes.primary.query({ tenant: T }, { beginsWith: 'rule#' }), Infinity)).toHaveLength(MAX_RULES);
  }, 120_000);
});

/**
 * `n` records of a kind stored as a create leaves them, each holding its place (in one batch, to
 * keep this short): `row` makes the record of id `id`. Their ids.
 */
async function stored(c: ConsoleStore, tenant: string, kind: ConsoleKind, n: number, row: (id: number) => Record<string, unknown>): Promise<number[]> {
  const rows = [];
  const ids: number[] = [];
  for (let k = 0; k < n; k++) {
    const id = await c.nextId(tenant, kind);
    ids.push(id);
    rows.push(row(id), { ...ConsolePlace.key({ tenant, kind, slot: k }), slot: k, set_id: id, claimed_at: 1 });
  }
  await putAll(db.table, rows);
  return ids;
}

/**
 * A tenant with one event type fewer than the cap, and a create's first attempt that took its id
 * and claimed the last place at `claimedAt`, then stopped before writing: that id.
 */
async function lastPlaceClaimed(tenant: string, claimedAt: number): Promise<number> {
  const c = db.stores.console;
  await stored(c, tenant, 'event_type', EVENT_TYPES.n - 1, eventTypeRow(tenant));
  const reserved = await c.nextId(tenant, 'event_type');
  const slot = EVENT_TYPES.n - 1;
  await put(db.table, { ...ConsolePlace.key({ tenant, kind: 'event_type', slot }), slot, set_id: reserved, claimed_at: claimedAt });
  return reserved;
}

/** The event types' places as the console store keeps them (to run a step between a create's claim and its write). */
function eventTypePlaces() {
  const primary = EventType.indexes.primary;
  return placesOf(db.table, {
    records: (tenant) => primary.query({ tenant }, { beginsWith: primary.skPrefix() as string }),
    counts: (x) => x.absent('withdrawn'),
    recordKey: (tenant, id) => EventType.key({ tenant, id }),
    places: (tenant) => ConsolePlace.indexes.primary.query({ tenant, kind: 'event_type' }),
    placeKey: (tenant, s) => ConsolePlace.key({ tenant, kind: 'event_type', slot: s }),
  });
}

const eventTypeRow = (tenant: string) => (id: number) => ({ ...EventType.key({ tenant, id }), id, name: `t${id}`, weight: 1, created: 1 });

describe('endpoints and event types per tenant (neither can be deleted)', () => {
  it('the real caps: 100 endpoints and 100 event types; the create past one is 400 and stores nothing', async () => {
    expect([ENDPOINTS.n, EVENT_TYPES.n]).toEqual([100, 100]);
    const c = db.stores.console;
    const T = 'cap-kinds';
    await stored(c, T, 'endpoint', ENDPOINTS.n, (id) => ({ ...Endpoint.key({ tenant: T, id }), id, endpoint_name: `ep${id}`, is_default: false, model_version: null, created: 1, updated_at: 1 }));
    await expect(createEndpoint(c, T, { endpoint_name: 'one-more', is_default: false })).rejects.toMatchObject({
      message: 'Too many endpoints.',
      fieldErrors: { endpoints: ['a tenant has at most 100 endpoints'] },
    });
    await stored(c, T, 'event_type', EVENT_TYPES.n, eventTypeRow(T));
    await expect(createEventType(c, T, { name: 'one_more', weight: 1 })).rejects.toMatchObject({
      message: 'Too many event types.',
      fieldErrors: { event_types: ['a tenant has at most 100 event types'] },
    });
    const serving = await c.servingConfig(T);
    expect([serving.endpoint.length, serving.event_type.length]).toEqual([ENDPOINTS.n, EVENT_TYPES.n]);
  });

  it('exactly the cap when creates come at once: 3 places left, 16 event types created at once, 3 created', async () => {
    const c = db.stores.console;
    const T = 'cap-event-types';
    await stored(c, T, 'event_type', EVENT_TYPES.n - 3, eventTypeRow(T));
    const outcomes = await Promise.allSettled(Array.from({ length: 16 }, (_, k) => createEventType(c, T, { name: `racing_${k}`, weight: 1 })));
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ message: 'Too many event types.' });
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    const live = (await c.list(T, 'event_type')).map((e) => e.id).sort((a, b) => a - b);
    expect(live).toHaveLength(EVENT_TYPES.n);
    expect((await placesHeld(T, 'event_type')).sort((a, b) => a - b)).toEqual(live);
  }, 60_000);

  it('a record taken back (its create lost its name to another) frees its place and does not count', async () => {
    const c = db.stores.console;
    const T = 'cap-withdrawn';
    await stored(c, T, 'event_type', EVENT_TYPES.n - 1, eventTypeRow(T));
    // A create that wrote its record and then found an earlier create of its name (putNamed) takes it back.
    const lost = await c.nextId(T, 'event_type');
    expect(await c.create(T, 'event_type', { id: lost, name: 'view', weight: 1, created: 1 }, EVENT_TYPES.n)).toBe(true);
    await c.withdraw(T, 'event_type', lost);
    expect(await placesHeld(T, 'event_type')).not.toContain(lost);
    await createEventType(c, T, { name: 'click', weight: 1 });
    await expect(createEventType(c, T, { name: 'buy', weight: 1 })).rejects.toMatchObject({ message: 'Too many event types.' });
  });

  it("a create's retry (the ids its Idempotency-Key reserved) cut off after claiming the last place keeps that place: created, not refused as over the cap", async () => {
    const c = db.stores.console;
    const T = 'cap-retry';
    const reserved = await lastPlaceClaimed(T, nowSeconds());
    await expect(createEventType(c, T, { name: 'buy', weight: 1 }, { reuse: reserved, idempotencyKey: 'k' })).resolves.toMatchObject({ id: reserved, name: 'buy' });
    expect((await placesHeld(T, 'event_type')).filter((id) => id === reserved)).toHaveLength(1);
    await expect(createEventType(c, T, { name: 'click', weight: 1 })).rejects.toMatchObject({ message: 'Too many event types.' });
  });

  it('such a retry whose place a full tenant takes back as stale (the retry came over a minute later) while it writes: claimed again first, so the other create is refused, never a record past the cap', async () => {
    const c = db.stores.console;
    const T = 'cap-retry-stale';
    const reserved = await lastPlaceClaimed(T, nowSeconds() - 120);
    const places = eventTypePlaces();
    // Another create runs between the retry's read of the places and its record's write.
    const created = await places.create(T, reserved, EVENT_TYPES.n, async () => {
      await expect(createEventType(c, T, { name: 'other', weight: 1 })).rejects.toMatchObject({ message: 'Too many event types.' });
      await put(db.table, eventTypeRow(T)(reserved));
    });
    expect(created).toBe(true);
    expect(await c.list(T, 'event_type')).toHaveLength(EVENT_TYPES.n);
  });

  it('a record stored before places existed is given one before any create claims its own: a stale place cannot stand in for it while two creates run at once', async () => {
    const c = db.stores.console;
    const T = 'cap-unplaced';
    const cap = 2;
    // An event type written before places existed, and a place left by a create cut off between its writes.
    await put(db.table, eventTypeRow(T)(await c.nextId(T, 'event_type')));
    await put(db.table, { ...ConsolePlace.key({ tenant: T, kind: 'event_type', slot: 0 }), slot: 0, set_id: 900_000, claimed_at: nowSeconds() - 120 });
    const h = await c.nextId(T, 'event_type');
    let createdI: boolean | undefined;
    // Create I runs between create H's claim and its write.
    const createdH = await eventTypePlaces().create(T, h, cap, async () => {
      const i = await c.nextId(T, 'event_type');
      createdI = await c.create(T, 'event_type', { id: i, name: `t${i}`, weight: 1, created: 1 }, cap);
      await put(db.table, eventTypeRow(T)(h));
    });
    expect([createdH, createdI]).toEqual([true, false]);
    expect(await c.list(T, 'event_type')).toHaveLength(cap);
  });
});
