import { nowSeconds } from '../clock.ts';
import { eachAtMost } from '../concurrency.ts';
import type { SynonymSet, SynonymStore } from '../search/synonyms.ts';
import type { TableRef } from './client.ts';
import { allocateIds } from './counters.ts';
import { sortId, SynonymSet as Synonyms, SynonymSlot } from './entities.ts';
import { Conflict } from '../domain/errors.ts';
import { withRetry, type RetryPolicy } from '../retry.ts';
import { applied, countUpTo, getRow, isNew, isStored, put, queryPage, queryUpTo, refine, remove, stripKeys, type Row } from './ops.ts';

/** Changes of one set that keep losing to others try again after a growing random pause (as the control records' do). */
const CHANGE_RACES: RetryPolicy = { attempts: 32, baseMs: 2, maxMs: 100, jitter: 'full' };

const ofTenant = (tenant: string, after?: number) => Synonyms.indexes.primary.query({ tenant }, after !== undefined ? { gt: sortId(after) } : undefined);
const key = (tenant: string, id: number) => Synonyms.key({ tenant, id });

/** A tenant's synonym sets: one partition, in id order; search reads it whole (one Query). */
const fromRow = (r: Row): SynonymSet => {
  const x = stripKeys(r);
  return {
    id: Number(x.id),
    type: x.type === 'one_way' ? 'one_way' : 'two_way',
    input: typeof x.input === 'string' ? x.input : null,
    synonyms: Array.isArray(x.synonyms) ? x.synonyms.map(String) : [],
    created: Number(x.created),
    updated_at: Number(x.updated_at),
  };
};

/** Every synonym set of a tenant: what search applies (one Query; the search function's bundle carries only this). */
export async function synonymSetsOf(t: TableRef, tenant: string): Promise<SynonymSet[]> {
  return (await queryUpTo(t, ofTenant(tenant), Infinity)).map(fromRow);
}

/*
 * The cap. Each set holds one of the tenant's places (SynonymSlot, 0 up to the cap): a create
 * claims a free place by a conditional put, then writes its set; a delete removes the set, then
 * frees its place. A set is only ever written holding a place, so a tenant never has more sets
 * than the cap, however many creates run at once, and a create is refused only when a read of the
 * places found none free or the sets stored reached the cap. A create or delete that stops between
 * its two writes leaves a place held by no set, as does a set write that failed (it keeps its
 * place: it may have landed all the same). When the places are full with fewer sets stored, those
 * held longer than SLOT_GRACE_SECONDS by a set that does not exist are taken back (a create in
 * flight holds its place for under a second). Sets written before places existed are given one by
 * the first create that finds more sets than places held.
 */

/** How long a place may be held by a set not written yet before a full tenant takes it back (the search-admin function's timeout is 10 s). */
const SLOT_GRACE_SECONDS = 60;
/** Places claimed at once for sets from before places existed. */
const CLAIMS_AT_ONCE = 16;

interface Place {
  slot: number;
  setId: number;
  claimedAt: number;
}

const slotKey = (tenant: string, slot: number) => SynonymSlot.key({ tenant, slot });

/** Every place held (consistent: a claim just made is seen). */
async function places(t: TableRef, tenant: string): Promise<Place[]> {
  const rows = await queryUpTo(t, { ...SynonymSlot.indexes.primary.query({ tenant }), ConsistentRead: true }, Infinity);
  return rows.map((r) => ({ slot: Number(r.slot), setId: Number(r.set_id), claimedAt: Number(r.claimed_at) }));
}

/** The ids of every set stored. */
async function setIds(t: TableRef, tenant: string): Promise<Set<number>> {
  const rows = await queryUpTo(t, { ...refine(ofTenant(tenant), { project: ['id'] }), ConsistentRead: true }, Infinity);
  return new Set(rows.map((r) => Number(r.id)));
}

/**
 * Claims one of the places `open` for set `setId`, trying them from a random one on (creates at
 * once then rarely try the same); the place, or undefined when each was taken meanwhile.
 */
async function claimOne(t: TableRef, tenant: string, open: number[], setId: number): Promise<Place | undefined> {
  const from = Math.floor(Math.random() * open.length);
  for (let k = 0; k < open.length; k++) {
    const p: Place = { slot: open[(from + k) % open.length] as number, setId, claimedAt: nowSeconds() };
    if (await applied(() => put(t, { ...slotKey(tenant, p.slot), slot: p.slot, set_id: setId, claimed_at: p.claimedAt }, isNew))) return p;
  }
  return undefined;
}

/** The places of 0 up to the cap that no set holds. */
const openPlaces = (held: Place[], cap: number): number[] => {
  const taken = new Set(held.map((p) => p.slot));
  return Array.from({ length: cap }, (_, slot) => slot).filter((slot) => !taken.has(slot));
};

/** Frees a place, if it is still held by that set as read. */
const free = (t: TableRef, tenant: string, p: Place) => applied(() => remove(t, slotKey(tenant, p.slot), (x) => x.and(...x.fields({ set_id: p.setId, claimed_at: p.claimedAt }))));

/**
 * A full tenant's places put right: those held by no set past the grace period, and a set's second
 * place (two creates gave one set from before places existed a place each), are freed; whether any was.
 */
async function takeBack(t: TableRef, tenant: string, held: Place[]): Promise<boolean> {
  const ids = await setIds(t, tenant);
  const seen = new Set<number>();
  const stale = held.filter((p) => {
    const dup = seen.has(p.setId);
    seen.add(p.setId);
    return dup || (!ids.has(p.setId) && p.claimedAt < nowSeconds() - SLOT_GRACE_SECONDS);
  });
  let any = false;
  await eachAtMost(stale, CLAIMS_AT_ONCE, async (p) => {
    if (await free(t, tenant, p)) any = true;
  });
  return any;
}

/**
 * Gives the sets stored without a place (written before places existed) one each, while places
 * are free. The places are read after the sets: a set created since holds its place by then (it
 * claims it before its write), so only older sets are given one. Each claim is checked against the
 * set: one deleted meanwhile frees the place again (a delete reading the places after the claim
 * frees it itself).
 */
async function placeOlderSets(t: TableRef, tenant: string, cap: number): Promise<void> {
  const ids = await setIds(t, tenant);
  const held = await places(t, tenant);
  const placed = new Set(held.map((p) => p.setId));
  const unplaced = [...ids].filter((id) => !placed.has(id));
  const open = openPlaces(held, cap);
  await eachAtMost(unplaced, CLAIMS_AT_ONCE, async (id) => {
    const mine = open.splice(0, 1);
    const place = mine.length ? await claimOne(t, tenant, mine, id) : undefined;
    if (place && !(await getRow(t, key(tenant, id), { consistent: true }))) await free(t, tenant, place);
  });
}

export function dynamoSynonymStore(t: TableRef): SynonymStore {
  return {
    nextId: (tenant) => allocateIds(t, tenant, 'synonym', 1),

    async create(tenant, s, cap) {
      let migrated = false;
      for (;;) {
        const [held, stored] = await Promise.all([places(t, tenant), countUpTo(t, { ...ofTenant(tenant), ConsistentRead: true }, cap)]);
        if (stored >= cap) return false;
        if (!migrated && stored > held.length) {
          migrated = true;
          await placeOlderSets(t, tenant, cap);
          continue;
        }
        const open = openPlaces(held, cap);
        // Every place held, fewer sets stored: some are held by creates under way, or by none.
        if (open.length === 0) {
          if (await takeBack(t, tenant, held)) continue;
          return false;
        }
        const place = await claimOne(t, tenant, open, s.id);
        // Every free place was taken meanwhile: read them again.
        if (!place) continue;
        // A write that fails keeps its place: it may have landed all the same. A set that did
        // not land leaves the place to be taken back.
        await put(t, { ...key(tenant, s.id), ...s });
        return true;
      }
    },

    async get(tenant, id) {
      const r = await getRow(t, key(tenant, id), { consistent: true });
      return r ? fromRow(r) : undefined;
    },

    async page(tenant, q) {
      const page = await queryPage(t, { ...ofTenant(tenant, q.after), Limit: q.limit + 1, ConsistentRead: true });
      const rows = page.items.map(fromRow);
      return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
    },

    all: (tenant) => synonymSetsOf(t, tenant),

    // Each change is conditional on the set's revision as read (`rev`, absent before its first
    // change): a change made meanwhile is read again, never overwritten with the fields it did not set.
    change: (tenant, id, next) =>
      withRetry<SynonymSet | undefined>(CHANGE_RACES, async () => {
        const row = await getRow(t, key(tenant, id), { consistent: true });
        if (!row) return { value: undefined };
        const rev = typeof row.rev === 'number' ? row.rev : undefined;
        const s = next(fromRow(row));
        const stored = await applied(() => put(t, { ...key(tenant, id), ...s, rev: (rev ?? 0) + 1 }, (x) => x.and(isStored(x), ...x.fields({ rev }))));
        return stored ? { value: s } : { failure: new Conflict('changed_meanwhile', `Synonym set ${id} kept changing meanwhile; retry.`), retryable: true };
      }),

    async remove(tenant, id) {
      if (!(await applied(() => remove(t, key(tenant, id), isStored)))) return false;
      // Its place (or places: see takeBack) freed; a failure here leaves one held, taken back when the places are full.
      await eachAtMost(
        (await places(t, tenant)).filter((p) => p.setId === id),
        CLAIMS_AT_ONCE,
        (p) => free(t, tenant, p),
      );
      return true;
    },
  };
}
