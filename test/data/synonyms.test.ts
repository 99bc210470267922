import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SynonymSet as Synonyms, SynonymSlot } from '../../shared/data/entities.ts';
import type { TableRef } from '../../shared/data/client.ts';
import { put } from '../../shared/data/ops.ts';
import { dynamoSynonymStore } from '../../shared/data/synonyms.ts';
import { createSynonymSet, deleteSynonymSet, MAX_SYNONYM_SETS } from '../../shared/search/synonyms.ts';
import { nowSeconds } from '../../shared/clock.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

type Store = ReturnType<typeof dynamoSynonymStore>;
const TOO_MANY = { message: 'Too many synonym sets.' };

/** n sets created as the API creates them, one after another. */
const create = async (store: Store, tenant: string, n: number, cap: number) => {
  const ids: number[] = [];
  for (let k = 0; k < n; k++) ids.push((await createSynonymSet(store, tenant, { synonyms: [`a${k}`, `b${k}`] }, cap)).id);
  return ids;
};

/** n sets written as they were before sets held places (the rows alone); their ids. */
const writeOlder = async (store: Store, tenant: string, n: number) => {
  const ids: number[] = [];
  for (let k = 0; k < n; k++) {
    const id = await store.nextId(tenant);
    await put(db.table, { ...Synonyms.key({ tenant, id }), id, type: 'two_way', input: null, synonyms: [`a${id}`, `b${id}`], created: 1, updated_at: 1 });
    ids.push(id);
  }
  return ids;
};

type Call = {
  kind: string;
  input: { Item?: Record<string, unknown>; Select?: string; ExpressionAttributeValues?: Record<string, unknown>; TransactItems?: { Put?: { Item?: Record<string, unknown> } }[] };
};
/** The table with each call passing `before` first (which may hold it) and `after` once answered (which may fail it). */
function hooked(t: TableRef, before: (c: Call) => unknown, after: (c: Call) => unknown = () => undefined): TableRef {
  const wrap = async <R>(c: Call, call: () => Promise<R>): Promise<R> => {
    await before(c);
    const out = await call();
    await after(c);
    return out;
  };
  const doc = new Proxy(t.doc, {
    get: (o, p) => (p === 'send' ? (cmd: { input: Call['input'] }) => wrap({ kind: cmd.constructor.name, input: cmd.input }, () => o.send(cmd as never)) : Reflect.get(o, p)),
  });
  const signed = new Proxy(t.signed, {
    get: (o, p) => {
      const f = Reflect.get(o, p);
      return typeof f === 'function' ? (input: Call['input'], ...rest: unknown[]) => wrap({ kind: String(p), input }, () => f.call(o, input, ...rest)) : f;
    },
  });
  return { ...t, doc, signed };
}
/** A set's write: alone, or in a transaction with its audit trail entry (as the API writes it). */
const isSetWrite = (c: Call) =>
  (c.kind === 'PutCommand' && String(c.input.Item?.pk).endsWith('#SYNONYMS')) ||
  (c.kind === 'TransactWriteCommand' && (c.input.TransactItems ?? []).some((i) => String(i.Put?.Item?.pk).endsWith('#SYNONYMS')));
const isPlaceClaim = (c: Call) => c.kind === 'PutCommand' && String(c.input.Item?.pk).endsWith('#SYNSLOTS');
const isPlacesRead = (c: Call) => c.kind === 'query' && JSON.stringify(c.input.ExpressionAttributeValues ?? {}).includes('#SYNSLOTS');
/** The read of a tenant's sets (what a create counts). */
const isSetsRead = (c: Call) => c.kind === 'query' && JSON.stringify(c.input.ExpressionAttributeValues ?? {}).includes('#SYNONYMS');
const opened = () => {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
};

/** `n` creates at once: how many were created (each refused one refused as over the cap, every created one stored). */
const race = async (store: Store, tenant: string, n: number, cap: number) => {
  const outcomes = await Promise.allSettled(Array.from({ length: n }, (_, k) => createSynonymSet(store, tenant, { synonyms: [`x${k}`, `y${k}`] }, cap)));
  let created = 0;
  for (const o of outcomes) {
    if (o.status === 'rejected') expect(o.reason).toMatchObject(TOO_MANY);
    else {
      created++;
      expect(await store.get(tenant, o.value.id)).toEqual(o.value);
    }
  }
  return created;
};

describe('synonym sets', () => {
  // The cap's logic does not depend on its size: 40 here, the real one (1,000) below.
  const cap = 40;

  it('hold exactly to the tenant cap when creates come at once', async () => {
    const store = dynamoSynonymStore(db.table);
    const T = 'syn-race';
    await create(store, T, cap - 5, cap);
    // Five places for 32 creates at once: five created, the rest refused, nothing left behind.
    expect(await race(store, T, 32, cap)).toBe(5);
    expect((await store.all(T)).length).toBe(cap);
  }, 60_000);

  it('give sets stored before places existed a place first', async () => {
    const store = dynamoSynonymStore(db.table);
    const T = 'syn-older';
    await writeOlder(store, T, cap - 5);
    expect(await race(store, T, 32, cap)).toBe(5);
    expect((await store.all(T)).length).toBe(cap);
  }, 60_000);

  it('free a place when a set is deleted', async () => {
    const store = dynamoSynonymStore(db.table);
    const T = 'syn-delete';
    const ids = await create(store, T, cap, cap);
    await expect(createSynonymSet(store, T, { synonyms: ['one', 'more'] }, cap)).rejects.toMatchObject(TOO_MANY);
    await deleteSynonymSet(store, T, ids[7] as number);
    await createSynonymSet(store, T, { synonyms: ['one', 'more'] }, cap);
    await expect(createSynonymSet(store, T, { synonyms: ['yet', 'another'] }, cap)).rejects.toMatchObject(TOO_MANY);
    expect((await store.all(T)).length).toBe(cap);
  }, 60_000);

  it('take back a place left held by no set (a create or delete stopped halfway), once it is old', async () => {
    const store = dynamoSynonymStore(db.table);
    const T = 'syn-leak';
    // Two places held by sets never written: one since two minutes ago, one since now (as a create
    // between its two writes holds it, which must not be taken); the other sets fill the rest.
    const hold = (slot: number, at: number) => put(db.table, { ...SynonymSlot.key({ tenant: T, slot }), slot, set_id: 900_000 + slot, claimed_at: at });
    await hold(0, nowSeconds() - 120);
    await hold(1, nowSeconds());
    await create(store, T, cap - 2, cap);
    // The old one is taken back; the recent one is not.
    await createSynonymSet(store, T, { synonyms: ['after', 'leak'] }, cap);
    await expect(createSynonymSet(store, T, { synonyms: ['one', 'more'] }, cap)).rejects.toMatchObject(TOO_MANY);
    expect((await store.all(T)).length).toBe(cap - 1);
  }, 60_000);

  it('leave no place held when a set from before places is deleted while a create gives it one', async () => {
    const store = dynamoSynonymStore(db.table);
    const T = 'syn-older-deleted';
    const [older] = await writeOlder(store, T, 1);
    const claim = opened();
    const deleted = opened();
    // A create gives the older set a place; the set is deleted (its places read) before the claim lands.
    const creating = dynamoSynonymStore(
      hooked(db.table, async (c) => {
        if (isPlaceClaim(c) && c.input.Item?.set_id === older) {
          claim.open();
          await deleted.p;
        }
      }),
    );
    const made = createSynonymSet(creating, T, { synonyms: ['c', 'd'] }, 3);
    await claim.p;
    await deleteSynonymSet(store, T, older as number);
    deleted.open();
    await made;
    // One set and every other place free: two more fit, at once.
    expect(await race(store, T, 5, 3)).toBe(2);
    expect((await store.all(T)).length).toBe(3);
  }, 60_000);

  it('keep the place of a set whose write failed after it landed', async () => {
    const store = dynamoSynonymStore(db.table);
    const T = 'syn-ambiguous';
    await create(store, T, 2, 3);
    // B counts the sets (2) before A's write lands, and reads the places once A has failed.
    const aDone = opened();
    const bAtPlaces = opened();
    const bCounted = opened();
    const b = dynamoSynonymStore(
      hooked(
        db.table,
        async (c) => {
          if (isPlacesRead(c)) {
            bAtPlaces.open();
            await aDone.p;
          }
        },
        (c) => {
          if (isSetsRead(c)) bCounted.open();
        },
      ),
    );
    const B = createSynonymSet(b, T, { synonyms: ['bb', 'cc'] }, 3).then(
      () => 'created',
      (e: Error) => e.message,
    );
    // B's count answered and its places read held: awaited (a 50 ms sleep let a loaded machine start A first).
    await Promise.all([bAtPlaces.p, bCounted.p]);
    // A's set write lands, then answers an error (a timeout after the write).
    const a = dynamoSynonymStore(
      hooked(
        db.table,
        () => undefined,
        (c) => {
          if (isSetWrite(c)) throw new Error('socket timeout');
        },
      ),
    );
    await expect(createSynonymSet(a, T, { synonyms: ['aa', 'dd'] }, 3)).rejects.toThrow('socket timeout');
    aDone.open();
    expect(await B).toBe('Too many synonym sets.');
    expect((await store.all(T)).length).toBe(3);
  }, 60_000);

  it(`are at most ${MAX_SYNONYM_SETS} a tenant`, async () => {
    const store = dynamoSynonymStore(db.table);
    const T = 'syn-cap';
    await writeOlder(store, T, MAX_SYNONYM_SETS - 1);
    await createSynonymSet(store, T, { synonyms: ['last', 'one'] });
    await expect(createSynonymSet(store, T, { synonyms: ['one', 'more'] })).rejects.toMatchObject(TOO_MANY);
    expect((await store.all(T)).length).toBe(MAX_SYNONYM_SETS);
  }, 120_000);
});
