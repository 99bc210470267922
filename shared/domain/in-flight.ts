/*
 * Lists by id (events, items) whose ids are taken before their rows are written: a page must not
 * pass an id still being written, or a client that pages on with `starting_after` passes it for
 * good. Shared by `listEvents` (shared/domain/events.ts) and `listItems` (shared/domain/items.ts).
 */

/**
 * How long an id may stay missing while a higher one is stored because its write is still under
 * way: ids are handed out in blocks before the rows are written (in parallel, and by concurrent
 * requests), and a write request ends within 30 s.
 */
export const IN_FLIGHT_SECONDS = 30;

/**
 * How many of the tenant's latest rows a filtered page reads to find the ids still being written
 * below its recent rows: past it (a tenant writing faster than this many in `IN_FLIGHT_SECONDS`),
 * the page ends before them until they are that old.
 */
const IN_FLIGHT_SCAN = 2000;
/** The first read of that scan (then 4 times as many each time). */
const IN_FLIGHT_CHUNK = 32;

/** A row of such a list: its id and when it was stored (seconds). */
interface Stored {
  id: number;
  created: number;
}

/** The tenant's `limit` rows of highest id below `below`, highest first. */
export type LatestBelow = (limit: number, below: number) => Promise<readonly Stored[]>;

/**
 * How many of the ids from `from` to `to` were written and since deleted (items' tombstones,
 * events' erasure marks), counting up to `upTo`: missing, but not being written.
 */
export type DeletedIn = (from: number, to: number, upTo: number) => Promise<number>;

/**
 * Missing ids a gap is checked for deletion at most (a count of marks, a page or two of reads): a
 * longer gap whose next row is that recent is taken as being written. Until 2026-12-05 100, read
 * one by one, and an erasure's ids were never told: a gap it left held the list.
 */
const DELETED_CHECK = 10_000;

/** Whether every id from `from` to `to` was deleted (none when there is no way to tell). */
async function allDeleted(deleted: DeletedIn | undefined, from: number, to: number): Promise<boolean> {
  const n = to - from + 1;
  if (!deleted || n > DELETED_CHECK) return false;
  return (await deleted(from, to, n)) >= n;
}

/**
 * The first id still being written (missing, with a later row stored under `IN_FLIGHT_SECONDS`
 * ago) among the tenant's rows below `below`, or Infinity when none is. Ids below a row stored
 * longer ago than that were taken before it, so their writes have ended: the tenant's rows are
 * read back from `below` only until such a row. Past the scan's bound, `firstRecent` (the page's
 * first recent row) stands for what was not read.
 */
async function firstInFlight(latest: LatestBelow, deleted: DeletedIn | undefined, below: number, firstRecent: number, now: number): Promise<number> {
  let expected = below - 1;
  let first = Infinity;
  // Read back a little at a time (a tenant's last 30 s are often a few rows), at most the bound.
  for (let read = 0, chunk = IN_FLIGHT_CHUNK; read < IN_FLIGHT_SCAN; read += chunk, chunk = Math.min(chunk * 4, IN_FLIGHT_SCAN - read)) {
    const tail = await latest(chunk, expected + 1);
    for (const e of tail) {
      if (e.id < expected && !(await allDeleted(deleted, e.id + 1, expected))) first = e.id + 1;
      expected = e.id - 1;
      if (now - e.created >= IN_FLIGHT_SECONDS) return first;
    }
    // The first row (ids start at 1) was read.
    if (tail.length < chunk) return expected > 0 ? 1 : first;
  }
  // The bound: what was not read stands at the page's first recent row.
  return Math.min(first, firstRecent);
}

/**
 * How many rows of an ascending page (after `after`) to answer: all, or those before an id still
 * being written (`held`: the page ends there with `has_more: false`, and the same cursor later
 * reads on from it). Unfiltered, the page's own gaps tell (a missing id whose next row was stored
 * under IN_FLIGHT_SECONDS ago; an older gap is a write that failed after taking its ids, or a row
 * deleted, and is passed; one whose ids were all deleted, `deleted` tells, is passed at once).
 * Filtered, the page holds no gaps of its own (the other rows are not its): it stops before the
 * first id still being written among all the tenant's rows (`firstInFlight`), read back only when
 * the page holds rows stored under IN_FLIGHT_SECONDS ago. A filtered page whose bounded read
 * stopped before it filled (`readThrough`: the id its cursor would name, past its last row) is
 * read back from there whatever its rows: the cursor must not pass an id still being written
 * either (until 2026-12-06 it did, for a page with no recent row of its own, an empty one
 * included, and that id was never listed).
 */
export async function heldAt(
  rows: readonly Stored[],
  after: number | undefined,
  filtered: boolean,
  reads: { latest: LatestBelow; deleted?: DeletedIn },
  now: number,
  readThrough?: number,
): Promise<{ keep: number; held: boolean }> {
  if (!filtered) {
    // A tenant's ids start at 1.
    let prev = after ?? 0;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i] as Stored;
      if (r.id !== prev + 1 && now - r.created < IN_FLIGHT_SECONDS && !(await allDeleted(reads.deleted, prev + 1, r.id - 1))) return { keep: i, held: true };
      prev = r.id;
    }
    return { keep: rows.length, held: false };
  }
  const recent = rows.find((r) => now - r.created < IN_FLIGHT_SECONDS);
  if (readThrough !== undefined) {
    // The row the read stopped at, stored 30 s ago or more: every id below it was taken before
    // it, and its write has ended (a gap right below an old row is a write that failed, or a
    // deletion, not one under way).
    const [stop] = await reads.latest(1, readThrough + 1);
    if (!stop || now - stop.created >= IN_FLIGHT_SECONDS) return { keep: rows.length, held: false };
    // Past the scan's bound, what was not read holds the page from its first recent row (after
    // its last row, without one: ids below an old row are not being written).
    const first = await firstInFlight(reads.latest, reads.deleted, readThrough, recent?.id ?? (rows.at(-1)?.id ?? after ?? 0) + 1, now);
    if (first > readThrough) return { keep: rows.length, held: false };
    const gap = rows.findIndex((r) => r.id >= first);
    return { keep: gap >= 0 ? gap : rows.length, held: true };
  }
  if (!recent) return { keep: rows.length, held: false };
  const first = await firstInFlight(reads.latest, reads.deleted, (rows[rows.length - 1] as Stored).id, recent.id, now);
  const gap = rows.findIndex((r) => r.id >= first);
  return gap >= 0 ? { keep: gap, held: true } : { keep: rows.length, held: false };
}
