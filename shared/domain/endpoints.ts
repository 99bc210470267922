import type { z } from 'zod/mini';
import { nowMs, nowSeconds } from '../clock.ts';
import { sleep } from '../retry.ts';
import type * as S from '../schemas/console.ts';
import { ENDPOINTS, NAME_DECIDED_WAIT_MS, NAME_DECIDING_SECONDS, nameSettled, newId, notFound, putNamed, storedBefore, type ConsoleRecord, type ConsoleStore } from './console-records.ts';
import { Conflict } from './errors.ts';
import { platformList } from './present.ts';
import type { IdPlan } from './types.ts';

/** Serving endpoints: named slots that serve one model version each; one of them is the tenant's default. */

export interface Endpoint extends ConsoleRecord {
  endpoint_name: string;
  is_default: boolean;
  model_version: number | null;
  created: number;
  updated_at: number;
  /**
   * Internal: a number of the endpoint id counter taken when it was last made the default by
   * `makeDefaultEndpoint` (absent: it became the default when created, as its id; 0: it became
   * the default as the tenant's first endpoint, without asking to; -1: such a first that gave way
   * to an earlier first created at once, see `firstKept`). Of the endpoints marked default, the one
   * with the highest wins (`pickEndpoint`).
   */
  default_seq?: number;
  /**
   * Internal: true from its create's write until the create has decided that it keeps its name
   * (`putNamed`): a create of the name at once may still take this record back (`findEndpoint`).
   */
  claiming?: boolean;
  /**
   * Internal: the number of promotions written to it (absent: none since 2026-12-07), each held by
   * the one read (`promotionOf`).
   */
  _rev?: number;
}

/** When an endpoint last became the default, in the endpoint id counter's order (0: by being the first, below any asked for). */
const defaultRank = (e: Endpoint) => e.default_seq ?? e.id;

/** An endpoint as the API shows it. */
export const endpointView = ({ default_seq: _s, claiming: _c, _rev: _r, ...e }: Endpoint) => e;

/** Clears `is_default` on each endpoint of `all` that became the default before `rank`, unless it changed since it was read. */
async function clearOlderDefaults(c: ConsoleStore, tenant: string, all: readonly Endpoint[], rank: number, now: number): Promise<void> {
  for (const e of all) {
    if (e.is_default && defaultRank(e) < rank) await c.update(tenant, 'endpoint', e.id, { is_default: false, updated_at: now }, { is_default: true, default_seq: e.default_seq });
  }
}

export async function createEndpoint(c: ConsoleStore, tenant: string, b: z.output<typeof S.endpointBody>, ids?: IdPlan) {
  const done = await storedBefore<Endpoint>(c, tenant, 'endpoint', ids);
  // Answered as stored once its create decided that it keeps its name. One still `claiming` is
  // the record of an attempt cut off before it decided (a 503 at its deadline refuses every table
  // call after it): its retry goes on from there, the name checked first (`nameSettled`; until
  // 2026-12-08 it answered 201 unchecked, a second endpoint of a name another create kept).
  if (done && done.claiming !== true) return endpointView(done);
  const exists = () => new Conflict('endpoint_exists', `Endpoint ${b.endpoint_name} exists.`);
  const sameName = (e: Endpoint) => e.endpoint_name === b.endpoint_name;
  const all = await c.list<Endpoint>(tenant, 'endpoint');
  const now = nowSeconds();
  // Taken back only while not made the default since (a move waits for its create to decide, `decided`,
  // but answers once written). A promotion written to it meanwhile is made again on the one kept (`promoteModel`).
  const asWritten = (defaultSeq: number | undefined) => ({ default_seq: defaultSeq });
  let rec: Endpoint;
  let first: boolean;
  if (done) {
    rec = done;
    first = done.default_seq === 0;
    await nameSettled(c, tenant, 'endpoint', rec, sameName, exists, asWritten(first ? 0 : undefined));
  } else {
    if (all.some(sameName)) throw exists();
    // One default per tenant: the first endpoint is the default; a new default takes over. Being
    // the first ranks below any default asked for (0): of creates at once on a tenant with none,
    // one sent with `is_default: true` keeps it, whenever the others were written.
    first = !b.is_default && all.length === 0;
    rec = {
      id: await newId(() => c.nextId(tenant, 'endpoint'), ids),
      endpoint_name: b.endpoint_name,
      is_default: b.is_default || first,
      model_version: null,
      created: now,
      updated_at: now,
      ...(first ? { default_seq: 0 } : {}),
      claiming: true,
    };
    // Before it takes the default over: a create that loses its name changes nothing.
    await putNamed(c, tenant, 'endpoint', rec, sameName, exists, ENDPOINTS, asWritten(rec.default_seq));
  }
  await c.update(tenant, 'endpoint', rec.id, { claiming: false }, {});
  if (b.is_default) await clearOlderDefaults(c, tenant, all, rec.id, now);
  // The first endpoint answers whether it is the default once written (another may have been made so meanwhile).
  if (first) return endpointView({ ...rec, is_default: await firstKept(c, tenant, rec, now) });
  return endpointView(rec);
}

/**
 * How long a first endpoint that finds an earlier first still marked default after its write waits
 * for it to take its mark off: an earlier first that checks after this one's write sees it, and
 * does so within a read and a write.
 */
const FIRST_SETTLE_MS = 200;

/** A first endpoint (rank 0, marked default as no other endpoint was there) still marked so. */
const markedFirst = (e: Endpoint) => e.is_default && e.default_seq === 0;

/**
 * Whether a first endpoint (created without asking to be the default, on a tenant with none) is
 * the default, once written. Of firsts created at once, the later (higher id) is; an earlier one
 * that finds it takes its own mark off and answers false. A later one that finds an earlier first
 * still marked waits FIRST_SETTLE_MS for it to do so; one still marked then checked before this
 * write and answered that it is the default, so this one ranks itself below it (-1, still marked:
 * there is never no default) and answers false. Until 2026-12-03 it answered true as well, and
 * took the default from a first that had answered 201 with `is_default: true` before it was even
 * written. At most one first answers true; rarely (the earlier one's check outlasts the wait) none does.
 */
async function firstKept(c: ConsoleStore, tenant: string, rec: Endpoint, now: number): Promise<boolean> {
  let all = await c.list<Endpoint>(tenant, 'endpoint');
  if (pickEndpoint(all, undefined)?.id !== rec.id) {
    // A later first, or a default asked for: this one's mark off, so that a later first that finds it waits no longer.
    await c.update(tenant, 'endpoint', rec.id, { is_default: false, updated_at: now }, { is_default: true, default_seq: 0 });
    return false;
  }
  const earlier = (list: readonly Endpoint[]) => list.some((e) => e.id < rec.id && markedFirst(e));
  if (!earlier(all)) return true;
  await sleep(FIRST_SETTLE_MS);
  all = await c.list<Endpoint>(tenant, 'endpoint');
  if (!earlier(all)) return pickEndpoint(all, undefined)?.id === rec.id;
  await c.update(tenant, 'endpoint', rec.id, { default_seq: -1, updated_at: now }, { is_default: true, default_seq: 0 });
  return false;
}

/**
 * Makes an existing endpoint the default (`PATCH /api/model-endpoints/{id}` `{ is_default: true }`):
 * it takes a number of the endpoint id counter, so it ranks after every default made before it,
 * then clears the older ones. Two moves at once end with the later number the default, as two
 * creates do. An endpoint whose create is still deciding whether it keeps its name is waited for
 * (`decided`): 404 once taken back.
 */
export async function makeDefaultEndpoint(c: ConsoleStore, tenant: string, id: number) {
  // Once its create has decided (it may take it back: until 2026-12-08 the move was answered 200,
  // and the endpoint then taken back, the older defaults cleared).
  const cur = await decided(c, tenant, id);
  if (!cur) throw notFound('endpoint', id);
  const all = await c.list<Endpoint>(tenant, 'endpoint');
  if (pickEndpoint(all, undefined)?.id === id) return endpointView(cur);
  const seq = await c.nextId(tenant, 'endpoint');
  const now = nowSeconds();
  // Answered as this write left it: the endpoint as read before, a promotion made meanwhile was answered undone.
  const written = await c.updated<Endpoint>(tenant, 'endpoint', id, { is_default: true, default_seq: seq, updated_at: now }, {});
  if (!written) throw notFound('endpoint', id);
  await clearOlderDefaults(c, tenant, await c.list<Endpoint>(tenant, 'endpoint'), seq, now);
  return endpointView(written);
}
/** One endpoint, `is_default` as the list shows it (of those marked default, only the one `pickEndpoint` picks). */
export async function getEndpoint(c: ConsoleStore, tenant: string, id: number) {
  const all = await c.list<Endpoint>(tenant, 'endpoint');
  const e = all.find((x) => x.id === id);
  if (!e) throw notFound('endpoint', id);
  return endpointView(e.is_default && pickEndpoint(all, undefined) !== e ? { ...e, is_default: false } : e);
}

/**
 * A page of the endpoints, exactly one of them the default (see `pickEndpoint`): read whole, as
 * the default is decided over all of them (a tenant has a few).
 */
export async function listEndpoints(c: ConsoleStore, tenant: string, q: S.RecordPageQuery) {
  const all = await c.list<Endpoint>(tenant, 'endpoint');
  const d = pickEndpoint(all, undefined);
  const after = all.filter((e) => q.starting_after === undefined || e.id > q.starting_after).sort((a, b) => a.id - b.id);
  const page = after.slice(0, q.limit);
  const last = page[page.length - 1];
  return platformList(
    page.map((e) => endpointView(e.is_default && e !== d ? { ...e, is_default: false } : e)),
    { hasMore: after.length > q.limit, cursor: last ? String(last.id) : null },
  );
}
/**
 * The endpoint by name, or the default one when no name is given: of those marked default, the
 * one made so last (`defaultRank`). Two defaults made at once both write `is_default` before
 * either clears the other's; the later one is the default, as if they had come one after the other.
 */
export function pickEndpoint(all: readonly Endpoint[], name: string | undefined): Endpoint | undefined {
  if (name !== undefined) return all.find((e) => e.endpoint_name === name);
  let d: Endpoint | undefined;
  // Of equal ranks (first endpoints created at once, see `firstKept`), the later.
  for (const e of all) if (e.is_default && (!d || defaultRank(e) > defaultRank(d) || (defaultRank(e) === defaultRank(d) && e.id > d.id))) d = e;
  return d;
}

/** Whether a create of this record is still deciding whether it keeps its name (`Endpoint.claiming`). */
const claiming = (e: Endpoint) => e.claiming === true && nowSeconds() - e.created <= NAME_DECIDING_SECONDS;

/**
 * The endpoint by name (or the default one, without a name). Two records of the name are two
 * creates of it at once still deciding which keeps it (`putNamed`), and one whose create has not
 * decided yet may still be taken back by a create of the name whose write comes later: the read
 * waits, a little at a time up to NAME_DECIDED_WAIT_MS, until one is left and its create has
 * decided. A promotion written to the one taken back was lost, though answered as made (until
 * 2026-12-05, and when the other create's write came after the promotion's, until later that day).
 */
export async function findEndpoint(c: ConsoleStore, tenant: string, name: string | undefined): Promise<Endpoint | undefined> {
  const until = nowMs() + NAME_DECIDED_WAIT_MS;
  for (;;) {
    const all = await c.list<Endpoint>(tenant, 'endpoint');
    const named = name === undefined ? [] : all.filter((e) => e.endpoint_name === name);
    if (name === undefined || nowMs() >= until || (named.length < 2 && !named.some(claiming))) return pickEndpoint(all, name);
    await sleep(50);
  }
}

/**
 * Endpoint `id` once its create has decided whether it keeps its name (no longer `claiming`), read
 * again 50 ms apart for up to NAME_DECIDED_WAIT_MS; undefined once taken back. Only its own create
 * takes a record back, so another endpoint of its name (two kept before 2026-12-03) neither holds
 * it up nor hides it (as `keptByName` would: until 2026-12-08 a move of the default to the later
 * of two such endpoints waited 2 s and answered 404).
 */
async function decided(c: ConsoleStore, tenant: string, id: number): Promise<Endpoint | undefined> {
  const until = nowMs() + NAME_DECIDED_WAIT_MS;
  for (;;) {
    const e = await c.get<Endpoint>(tenant, 'endpoint', id);
    if (!e || !claiming(e) || nowMs() >= until) return e;
    await sleep(50);
  }
}

/** Whether the endpoint a write changed is the one its name names once any create of the name at once has decided (`findEndpoint`). */
export async function keptByName(c: ConsoleStore, tenant: string, e: Pick<Endpoint, 'id' | 'endpoint_name'>): Promise<boolean> {
  return (await findEndpoint(c, tenant, e.endpoint_name))?.id === e.id;
}
