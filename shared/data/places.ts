import { nowSeconds } from '../clock.ts';
import { eachAtMost } from '../concurrency.ts';
import type { TableRef } from './client.ts';
import type { Condition } from './expressions.ts';
import { applied, getRow, isNew, put, type QueryInput, queryUpTo, refine, remove } from './ops.ts';

/*
 * An exact cap on how many records of a kind a tenant has, however many creates run at once
 * (dynalite, the local stand-in, has no transactions; DynamoDB's would also serialise a tenant's
 * creates on one counter row).
 *
 * Each record holds one of the tenant's places (a row per place, 0 up to the cap): a create claims
 * a free place by a conditional put, then writes its record; a delete removes the record, then
 * frees its place. A record is only ever written holding a place, so a tenant never has more
 * records than the cap, and a create is refused only when a read of the places found none free or
 * the records stored reached the cap. A create or delete that stops between its two writes leaves
 * a place held by no record, as does a record write that failed (it keeps its place: it may have
 * landed all the same). When the places are full with fewer records stored, those held longer than
 * GRACE_SECONDS by a record that does not exist are taken back (a create in flight holds its place
 * for under a second). Records written before places existed are given one by the next create,
 * which claims no place of its own while any record stored holds none.
 */

/** How long a place may be held by a record not written yet before a full tenant takes it back (the Platform functions' timeouts are at most 30 s). */
const GRACE_SECONDS = 60;
/** Places claimed or freed at once. */
const AT_ONCE = 16;

/** Where a kind's records and its places are. */
export interface PlacedKind {
  /** Every record of the tenant's kind (rows with a numeric `id`). */
  records(tenant: string): QueryInput;
  /** Which of those rows count as records (a record taken back does not), when not all do. */
  counts?: Condition;
  /** One record's key. */
  recordKey(tenant: string, id: number): Record<string, string>;
  /** Every place of the tenant's kind: rows of their own partition. */
  places(tenant: string): QueryInput;
  /** One place's key. */
  placeKey(tenant: string, slot: number): Record<string, string>;
}

interface Place {
  slot: number;
  id: number;
  claimedAt: number;
}

/** A kind's places: `create` within a cap, `release` after a delete. */
export interface Places {
  /**
   * Claims a place for record `id` and then writes it (`write`), unless the tenant has `cap`
   * records of the kind: false then, and nothing written.
   */
  create(tenant: string, id: number, cap: number, write: () => Promise<void>): Promise<boolean>;
  /** Frees the places record `id` held (after it was deleted); a failure leaves one held, taken back when the places are full. */
  release(tenant: string, id: number): Promise<void>;
}

export function placesOf(t: TableRef, kind: PlacedKind): Places {
  /** Every place held (consistent: a claim just made is seen). */
  const held = async (tenant: string): Promise<Place[]> => {
    const rows = await queryUpTo(t, { ...kind.places(tenant), ConsistentRead: true }, Infinity);
    return rows.map((r) => ({ slot: Number(r.slot), id: Number(r.set_id), claimedAt: Number(r.claimed_at) }));
  };

  /** The ids of every record stored. */
  const storedIds = async (tenant: string): Promise<Set<number>> => {
    const rows = await queryUpTo(t, { ...refine(kind.records(tenant), { ...(kind.counts ? { filter: kind.counts } : {}), project: ['id'] }), ConsistentRead: true }, Infinity);
    return new Set(rows.map((r) => Number(r.id)));
  };

  /** A place's row: its slot, the record holding it (`set_id`, the attribute synonym sets' places were first written with) and when. */
  const placeRow = (tenant: string, p: Place) => ({ ...kind.placeKey(tenant, p.slot), slot: p.slot, set_id: p.id, claimed_at: p.claimedAt });

  /**
   * Claims one of the places `open` for record `id`, trying them from a random one on (creates at
   * once then rarely try the same); the place, or undefined when each was taken meanwhile.
   */
  const claimOne = async (tenant: string, open: number[], id: number): Promise<Place | undefined> => {
    const from = Math.floor(Math.random() * open.length);
    for (let k = 0; k < open.length; k++) {
      const p: Place = { slot: open[(from + k) % open.length] as number, id, claimedAt: nowSeconds() };
      if (await applied(() => put(t, placeRow(tenant, p), isNew))) return p;
    }
    return undefined;
  };

  /** The places of 0 up to the cap that no record holds. */
  const openPlaces = (places: Place[], cap: number): number[] => {
    const taken = new Set(places.map((p) => p.slot));
    return Array.from({ length: cap }, (_, slot) => slot).filter((slot) => !taken.has(slot));
  };

  /** The condition of a change to a place: still held by that record, as read. */
  const heldAsRead =
    (p: Place): Condition =>
    (x) =>
      x.and(...x.fields({ set_id: p.id, claimed_at: p.claimedAt }));

  /** Claims a place again for its record, with a fresh time, if it is still held as read; whether it was. */
  const claimAgain = (tenant: string, p: Place) => applied(() => put(t, placeRow(tenant, { ...p, claimedAt: nowSeconds() }), heldAsRead(p)));

  /** Frees a place, if it is still held by that record as read. */
  const free = (tenant: string, p: Place) => applied(() => remove(t, kind.placeKey(tenant, p.slot), heldAsRead(p)));

  /**
   * A full tenant's places put right: those held by no record past the grace period, and a
   * record's second place (two creates gave one record from before places existed a place each),
   * are freed; whether any was.
   */
  const takeBack = async (tenant: string, places: Place[]): Promise<boolean> => {
    const ids = await storedIds(tenant);
    const seen = new Set<number>();
    const stale = places.filter((p) => {
      const dup = seen.has(p.id);
      seen.add(p.id);
      return dup || (!ids.has(p.id) && p.claimedAt < nowSeconds() - GRACE_SECONDS);
    });
    let any = false;
    await eachAtMost(stale, AT_ONCE, async (p) => {
      if (await free(tenant, p)) any = true;
    });
    return any;
  };

  /**
   * Gives the records stored without a place (written before places existed) one each, while
   * places are free. The places are read after the records: a record created since holds its
   * place by then (it claims it before its write), so only older records are given one. Each
   * claim is checked against the record: one deleted meanwhile frees the place again (a delete
   * reading the places after the claim frees it itself).
   */
  const placeOlder = async (tenant: string, cap: number): Promise<void> => {
    const ids = await storedIds(tenant);
    const places = await held(tenant);
    const placed = new Set(places.map((p) => p.id));
    const unplaced = [...ids].filter((id) => !placed.has(id));
    const open = openPlaces(places, cap);
    await eachAtMost(unplaced, AT_ONCE, async (id) => {
      const mine = open.splice(0, 1);
      const place = mine.length ? await claimOne(tenant, mine, id) : undefined;
      if (place && !(await getRow(t, kind.recordKey(tenant, id), { consistent: true }))) await free(tenant, place);
    });
  };

  return {
    async create(tenant, id, cap, write) {
      let migrations = 0;
      for (;;) {
        const [places, ids] = await Promise.all([held(tenant), storedIds(tenant)]);
        // A retry of a create cut off after its claim (under the ids an Idempotency-Key reserved):
        // its place is held already, and claimed again (a fresh time, if it is still as read: a
        // full tenant may be taking it back as stale meanwhile) before the write. Until 2026-12-04
        // it looked for another, and a full tenant refused it (400) for up to a minute.
        const mine = places.find((p) => p.id === id);
        if (mine) {
          if (!(await claimAgain(tenant, mine))) continue;
          await write();
          return true;
        }
        if (ids.size >= cap) return false;
        const open = openPlaces(places, cap);
        // No new claim while a record stored holds no place (written before places existed): a
        // place held by a create under way, or by none, must not stand in for it, or the tenant
        // ends one record past the cap. Until 2026-12-04 only more records than places held led to
        // giving them places. The records are given places first, then read again.
        const placed = new Set(places.map((p) => p.id));
        const unplaced = [...ids].some((r) => !placed.has(r));
        if (unplaced && open.length > 0 && migrations++ < 3) {
          await placeOlder(tenant, cap);
          continue;
        }
        // Every place held, fewer records stored (some places are held by creates under way, or by
        // none), or a record without a place still: take back what is stale, else refuse.
        if (open.length === 0 || unplaced) {
          if (await takeBack(tenant, places)) continue;
          return false;
        }
        // Every free place was taken meanwhile: read them again.
        if (!(await claimOne(tenant, open, id))) continue;
        // A write that fails keeps its place: it may have landed all the same. A record that did
        // not land leaves the place to be taken back.
        await write();
        return true;
      }
    },

    async release(tenant, id) {
      // Its place (or places: see takeBack).
      await eachAtMost(
        (await held(tenant)).filter((p) => p.id === id),
        AT_ONCE,
        (p) => free(tenant, p),
      );
    },
  };
}
