import { attributeEvents, type ExposureStore } from '../control/exposures.ts';
import { attributeSearchEvents, type SearchLogStore } from '../search/analytics.ts';
import { dayOf, dayStart, nowSeconds } from '../clock.ts';
import type { ConsoleEventsQuery, IngestEvent, IngestEventsBody } from '../schemas/events.ts';
import type { ConsoleStore } from './console-records.ts';
import { EventNotFound, keyErased } from './errors.ts';
import { eventResource, listOf } from './present.ts';
import { DAY_COUNTS_KEPT_DAYS, type EventRecord, type EventStore, type IdPlan, type JsonObject, type NewEvent } from './types.ts';

const KNOWN = new Set(['type', 'user_id', 'item_id', 'context_id', 'occurred_at', 'session_id', 'request_id', 'placement']);

function toNewEvent(e: IngestEvent): NewEvent {
  const extra: JsonObject = {};
  let payload: JsonObject | undefined;
  for (const [k, v] of Object.entries(e)) {
    if (KNOWN.has(k) || v === undefined) continue;
    if (k === e.type) payload = v as JsonObject;
    else extra[k] = v;
  }
  return {
    type: e.type,
    user_id: e.user_id,
    item_id: e.item_id,
    context_id: e.context_id ?? null,
    session_id: e.session_id ?? null,
    request_id: e.request_id ?? null,
    placement: e.placement ?? null,
    ...(e.occurred_at !== undefined ? { occurred_at: e.occurred_at } : {}),
    ...(payload !== undefined ? { payload } : {}),
    extra,
  };
}

/** What an ingest writes to and reads: the event log, experiment exposures, search analytics, and the users' erasure markers. */
export interface IngestDeps {
  events: EventStore;
  exposures: ExposureStore;
  searches?: SearchLogStore | undefined;
  /** Read when a retry resumes under the ids an earlier attempt reserved (`keyErased`). */
  erasures?: Pick<ConsoleStore, 'erasedUser'> | undefined;
}

/**
 * Stores every event of an already validated batch, then attributes those that name a request
 * served in an experiment, or a search (search analytics), again, harmlessly, when a retry
 * resumes it; answers the stored events in request order.
 *
 * A retry that resumes under ids an earlier attempt reserved before an erasure of one of its users
 * began (an erasure that ended covers them: its `events_through`) writes that user's events no
 * more: the erasure found the request's key only on events it wrote, and the earlier attempt had
 * written none of them, so written now they would stay for good (until 2026-12-04 they did:
 * listed, though serving and training skip ids an erasure covers). It writes the batch's other
 * events and answers 409 `idempotency_key_erased`, as a retry whose key the erasure forgot does
 * (the request was stored, the erased user's events excepted). One still running covers them
 * too, and its sweep, a minute after it ends, deletes them.
 */
export async function ingestEvents(deps: IngestDeps, tenant: string, body: IngestEventsBody, ids?: IdPlan) {
  const erased = ids?.reuse !== undefined && deps.erasures ? await erasedSince(deps.erasures, tenant, body, ids.reuse) : undefined;
  const stored = await deps.events.append(tenant, body.map(toNewEvent), nowSeconds(), ids, erased);
  await Promise.all([attributeEvents(deps.exposures, tenant, stored), deps.searches ? attributeSearchEvents(deps.searches, tenant, stored) : undefined]);
  if (erased?.size) throw keyErased();
  return listOf('/v1/events', stored.map(eventResource), false);
}

/** The users of a resumed batch (its ids reserved in one block from `firstId` on) whose ended erasure covers those ids. */
async function erasedSince(erasures: Pick<ConsoleStore, 'erasedUser'>, tenant: string, body: IngestEventsBody, firstId: number): Promise<ReadonlySet<string>> {
  const users = [...new Set(body.map((e) => e.user_id))];
  const markers = await Promise.all(users.map((u) => erasures.erasedUser(tenant, u)));
  return new Set(
    users.filter((_, k) => {
      const m = markers[k];
      return m?.completed_at != null && m.events_through !== undefined && m.events_through >= firstId;
    }),
  );
}

export async function getEvent(store: EventStore, tenant: string, id: number) {
  const r = await store.get(tenant, id);
  if (!r) throw new EventNotFound(id);
  return eventResource(r);
}

/**
 * How long an event id may stay missing while a higher one is stored because its write is still
 * under way: ids are handed out in blocks before the rows are written (in parallel, and by
 * concurrent requests), and an ingest request ends within 30 s.
 */
const IN_FLIGHT_SECONDS = 30;

/**
 * How many of the tenant's latest events a filtered page reads to find the ids still being
 * written below its recent events: past it (a tenant ingesting faster than this many events in
 * `IN_FLIGHT_SECONDS`), the page ends before them until they are that old.
 */
const IN_FLIGHT_SCAN = 2000;
/** The first read of that scan (then 4 times as many each time). */
const IN_FLIGHT_CHUNK = 32;

/**
 * The first id still being written (missing, with a later event stored under
 * `IN_FLIGHT_SECONDS` ago) among the tenant's events below `below`, or Infinity when none is.
 * Ids below an event stored longer ago than that were taken before it, so their writes have
 * ended: the tenant's log is read back from `below` only until such an event. Past the scan's
 * bound, `firstRecent` (the page's first recent event) stands for what was not read.
 */
async function firstInFlight(store: EventStore, tenant: string, below: number, firstRecent: number, now: number): Promise<number> {
  let expected = below - 1;
  let first = Infinity;
  // Read back a little at a time (a tenant's last 30 s are often a few events), at most the bound.
  for (let read = 0, chunk = IN_FLIGHT_CHUNK; read < IN_FLIGHT_SCAN; read += chunk, chunk = Math.min(chunk * 4, IN_FLIGHT_SCAN - read)) {
    const tail = await store.latest(tenant, chunk, expected + 1);
    for (const e of tail) {
      if (e.id < expected) first = e.id + 1;
      expected = e.id - 1;
      if (now - e.created >= IN_FLIGHT_SECONDS) return first;
    }
    // The first event (ids start at 1) was read.
    if (tail.length < chunk) return expected > 0 ? 1 : first;
  }
  // The bound: what was not read stands at the page's first recent event.
  return Math.min(first, firstRecent);
}

/**
 * Lists events ascending by id. The list stops before an id that is missing while a later one
 * was stored under `IN_FLIGHT_SECONDS` ago (its write may still land): a client that pages on
 * with `starting_after` would otherwise pass it for good. That page ends with `has_more: false`,
 * and the same cursor later reads on from the gap. (A gap that old is an ingest that failed after
 * taking its ids, and is passed.) Filtered by user or type, the page holds no gaps of its own
 * (the other events are not its): it stops before the first id still being written in the
 * tenant's whole log (`firstInFlight`), which it reads back only when its page holds events
 * stored under `IN_FLIGHT_SECONDS` ago.
 *
 * With `order: 'desc'` (the console's), newest first, `starting_after` paging on to older ids. No
 * gap stops it: an event still landing above the cursor is newer than the first page, where a
 * reader looks for it. `q` is the Core list's query, or the console's (with `order`).
 */
export async function listEvents(store: EventStore, tenant: string, q: ConsoleEventsQuery, now = nowSeconds()) {
  const newestFirst = q.order === 'desc';
  const page = await store.list(tenant, {
    limit: q.limit,
    ...(q.starting_after !== undefined ? { after: q.starting_after } : {}),
    ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
    ...(q.type !== undefined ? { type: q.type } : {}),
    ...(newestFirst ? { newestFirst } : {}),
  });
  let { rows, hasMore } = page;
  let gap = -1;
  if (newestFirst) {
    // No gap stops a newest-first list.
  } else if (q.user_id === undefined && q.type === undefined) {
    // A tenant's event ids start at 1.
    let prev = q.starting_after ?? 0;
    gap = rows.findIndex((r) => {
      const missing = r.id !== prev + 1 && now - r.created < IN_FLIGHT_SECONDS;
      prev = r.id;
      return missing;
    });
  } else {
    const recent = rows.find((r) => now - r.created < IN_FLIGHT_SECONDS);
    if (recent) {
      const first = await firstInFlight(store, tenant, (rows[rows.length - 1] as EventRecord).id, recent.id, now);
      gap = rows.findIndex((r) => r.id >= first);
    }
  }
  if (gap >= 0) {
    rows = rows.slice(0, gap);
    hasMore = false;
  }
  return listOf('/v1/events', rows.map(eventResource), hasMore);
}

const DAY = 86_400;

/**
 * Events ingested per UTC day over the last `days` (every one, from the counts each ingest adds
 * to), the console's overview chart, and the newest event's time. `counted_from`: null when every
 * stored event is in the counts; else the first day whose count is whole (events stored before
 * the counts were kept, by an earlier version, are in none). Counts expire DAY_COUNTS_KEPT_DAYS
 * after their day: a first count on the oldest day still kept tells only that older counts
 * expired, not that older events were never counted (until 2026-12-05 a tenant's overview said,
 * from 400 days after its first event on, that its counts were whole only from then).
 */
export async function eventsPerDay(store: EventStore, tenant: string, days: number, now = nowSeconds()) {
  const from = now - (now % DAY) - (days - 1) * DAY;
  const [{ perDay, firstCounted, oldestEventAt }, latest] = await Promise.all([store.ingestedPerDay(tenant, dayOf(from), dayOf(now)), store.latest(tenant, 1)]);
  const events_per_day = Array.from({ length: days }, (_, i) => {
    const day = dayOf(from + i * DAY);
    return { day, count: perDay.get(day) ?? 0 };
  });
  // Events older than the first count: that day's count began part way through, the next day's is whole (tomorrow's, when nothing is counted yet).
  const keptFrom = dayOf(now - (DAY_COUNTS_KEPT_DAYS - 1) * DAY);
  const uncounted = oldestEventAt !== null && (firstCounted === null || (dayOf(oldestEventAt) < firstCounted && firstCounted > keptFrom));
  const counted_from = uncounted ? dayOf((firstCounted === null ? now : dayStart(firstCounted)) + DAY) : null;
  return { events_per_day, counted_from, latest_event_at: latest[0]?.created ?? null };
}
