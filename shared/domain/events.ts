import { attributeEvents, type ExposureStore } from '../control/exposures.ts';
import { attributeSearchEvents, type SearchLogStore } from '../search/analytics.ts';
import { dayOf, dayStart, nowSeconds } from '../clock.ts';
import type { ConsoleEventsQuery, IngestEvent, IngestEventsBody } from '../schemas/events.ts';
import { sweepBound, type ConsoleStore, type ErasedUser } from './console-records.ts';
import { unservedEvent } from './erased-users.ts';
import { EventNotFound, keyErased } from './errors.ts';
import { heldAt } from './in-flight.ts';
import { fitting } from './answer-size.ts';
import { coreList, eventResource, listOf } from './present.ts';
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
    ...(e.occurred_at !== undefined && e.occurred_at !== null ? { occurred_at: e.occurred_at } : {}),
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

/**
 * One event; not one an erasure of its user covers, running or ended (`erasures`: the user's marker
 * read, and while it runs its sweep's row: `unserved`). The sweep a minute or two after the erasure
 * ends deletes such an event (an ingest in flight as it began wrote it after the erasure looked),
 * and one running deletes them as it goes; until then it is in the table, and until 2026-12-07 it
 * was answered (that of a running erasure while lists not filtered by user left it out).
 */
export async function getEvent(store: EventStore, tenant: string, id: number, erasures?: Pick<ConsoleStore, 'erasedUser' | 'erasureSweep'>) {
  const r = await store.get(tenant, id);
  if (!r || (erasures && (await unserved(erasures, tenant, await erasures.erasedUser(tenant, r.user_id)))?.covers(r))) throw new EventNotFound(id);
  return eventResource(r);
}

/**
 * Which of a user's events their erasure leaves unserved, running or ended (`unservedEvent`), and
 * the id up to which every one is (0: none is known to be); undefined for a user with no marker.
 * While it runs, its bound is read from the row it stored as it began (one GetItem more, only then).
 */
async function unserved(
  erasures: Pick<ConsoleStore, 'erasureSweep'>,
  tenant: string,
  m: ErasedUser | undefined,
): Promise<{ covers: (e: { id: number; created: number }) => boolean; through: number } | undefined> {
  if (m === undefined) return undefined;
  if (m.completed_at !== null) return { covers: unservedEvent(m, 0), through: m.events_through ?? 0 };
  const row = await erasures.erasureSweep(tenant, m.user_id);
  const bound = row ? sweepBound(row) : undefined;
  return { covers: unservedEvent(m, bound), through: bound ?? 0 };
}

/**
 * Lists events ascending by id. The list stops before an id still being written (`heldAt`,
 * shared/domain/in-flight.ts): a client that pages on with `starting_after` would otherwise pass
 * it for good. Filtered by user or type, before the first id still being written in the tenant's
 * whole log.
 *
 * With `order: 'desc'` (the console's), newest first, `starting_after` paging on to older ids. No
 * gap stops it: an event still landing above the cursor is newer than the first page, where a
 * reader looks for it. `q` is the Core list's query, or the console's (with `order`). A page whose
 * events would take more than `ANSWER_BYTES` (answer-size.ts) ends before the first that does
 * not fit, `has_more` and `next_cursor` at the last kept (one at least).
 *
 * With `erasures`, no event an erasure of its user covers is listed, running or ended: of a user's
 * list, what the user's erasure covers (`unserved`; until 2026-12-07 only an ended one's, the events
 * a running one erases were listed); of a list not filtered by user, what an erasure not yet swept
 * covers (`erasedAmong`; until 2026-12-07 such a list read no marker, and listed them).
 */
export async function listEvents(
  store: EventStore,
  tenant: string,
  q: ConsoleEventsQuery,
  now = nowSeconds(),
  erasures?: Pick<ConsoleStore, 'erasedUser' | 'erasureSweep' | 'erasureSweeps' | 'erasureSweepsOf'>,
) {
  const newestFirst = q.order === 'desc';
  // A user's events that their erasure covers are not listed: while it runs, those it erases (up
  // to the bound it began with); once ended, an ingest in flight as it began can write one after it
  // looked (its sweep deletes it a minute or two after it ended), and the user's index, eventually
  // consistent, may still show one it deleted. Oldest first, the read starts past them (ids up to
  // its bound, or its `events_through`); newest first, the page ends at them.
  const marker = q.user_id !== undefined && erasures ? await erasures.erasedUser(tenant, q.user_id) : undefined;
  const ofUser = erasures ? await unserved(erasures, tenant, marker) : undefined;
  const covered = ofUser?.covers;
  const through = ofUser?.through ?? 0;
  const after = !newestFirst && through > (q.starting_after ?? 0) ? through : q.starting_after;
  const page = await store.list(tenant, {
    limit: q.limit,
    ...(after !== undefined ? { after } : {}),
    ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
    ...(q.type !== undefined ? { type: q.type } : {}),
    ...(newestFirst ? { newestFirst } : {}),
  });
  // Not filtered by user, the events of the page's users that an erasure not yet swept covers.
  const hidden = covered ?? (q.user_id === undefined && erasures ? await erasedAmong(erasures, tenant, page.rows) : undefined);
  const rows = hidden ? page.rows.filter((r) => !hidden(r)) : page.rows;
  const dropped = rows.length < page.rows.length;
  // Newest first, an event a user's erasure covers ends that user's list: those after it are older, its too.
  const cut = dropped && newestFirst && covered !== undefined;
  const hasMore = page.hasMore && !cut;
  // Rows are left out of a user's list oldest first only under a marker without `events_through`
  // (stored before 2026-11-29: it covers the user's events by their time, so the read cannot start
  // past them) or a running one with no bound known (all of them), and out of a list not filtered by user in either order: a page that left some out
  // and has more names the last row read as its cursor, as a bounded read does; one that left out
  // every row it read would otherwise answer `has_more` with no `next_cursor` (until 2026-12-07 it
  // did, and the client could not page on).
  const next = cut ? undefined : (page.next ?? (dropped && page.hasMore ? page.rows.at(-1)?.id : undefined));
  let shown = rows;
  let held = false;
  // No gap stops a newest-first list.
  if (!newestFirst) {
    const filtered = q.user_id !== undefined || q.type !== undefined;
    // Not filtered by user, the page as read, those left out included: a gap they left is no id still being written.
    const asRead = covered ? rows : page.rows;
    const stop = await heldAt(asRead, after, filtered, { latest: (n, below) => store.latest(tenant, n, below), deleted: (from, to, upTo) => store.erasedIn(tenant, from, to, upTo) }, now, next);
    held = stop.held;
    if (held) shown = asRead.slice(0, stop.keep).filter((r) => !hidden?.(r));
  }
  const read = shown.map(eventResource);
  const data = read.slice(0, fitting(read));
  // Cut to fit the answer's bytes (an event answered holds its payload twice: up to 128 KB as
  // Lambda writes it, so 100 took 12.8 MB, API Gateway's own 500 until 2026-12-06): the rest
  // follows from the last event kept, in either order, whatever ended the read.
  if (data.length < read.length) return listOf('/v1/events', data, true);
  if (held) return listOf('/v1/events', data, false);
  // A user's events of a type whose bounded read stopped before the page filled: the page ends
  // where the read did, `next_cursor` there.
  if (next !== undefined) return coreList('/v1/events', data, { hasMore: true, cursor: String(next) }, {});
  return listOf('/v1/events', data, hasMore);
}

/**
 * Sweep rows a list reads at most to tell the users whose erasure is not yet swept (`erasedAmong`);
 * past it (a tenant erasing more users than this at once), the rows of the page's users are read by
 * their keys (one BatchGetItem) instead.
 */
const SWEEPS_READ = 1000;

/**
 * Which of the events of a page not filtered by user an erasure of their user covers (`erasedEvent`),
 * running or ended, until its sweep has deleted them: the users with a sweep row (every erasure
 * stores one as it begins, and its sweep deletes it a minute or two after it ended) are read in one
 * Query of their small partition, and the markers of those on the page by key. While it runs, the
 * events up to the bound its row recorded as it began (the ones it erases); the user's later ones
 * are listed. An erasure cut off before 2026-12-07 stored no row: its user's events are listed until
 * the maintenance pass stores one for it (shared/domain/erasure.ts `adoptRowlessErasures`) or it is repeated.
 */
async function erasedAmong(
  erasures: Pick<ConsoleStore, 'erasedUser' | 'erasureSweeps' | 'erasureSweepsOf'>,
  tenant: string,
  rows: readonly EventRecord[],
): Promise<((e: EventRecord) => boolean) | undefined> {
  if (rows.length === 0) return undefined;
  const onPage = new Set(rows.map((r) => r.user_id));
  const sweeps = await erasures.erasureSweeps(tenant, SWEEPS_READ);
  // Past the rows read, those of the page's users, by their keys (until 2026-12-07 the marker of
  // every user on the page was read, up to 100 GetItems a page, and a running erasure's bound was
  // not known: every event of its user was left out, those it keeps included).
  const ofPage = sweeps.length < SWEEPS_READ ? sweeps.filter((s) => onPage.has(s.user_id)) : await erasures.erasureSweepsOf(tenant, [...onPage]);
  // Each row's bound: a running erasure erases the events up to the last id handed out as it began
  // (its row stored then), and keeps those the user sends later.
  const bounds = new Map(ofPage.map((s) => [s.user_id, sweepBound(s)]));
  const users = [...bounds.keys()];
  if (users.length === 0) return undefined;
  const covers = new Map<string, (e: EventRecord) => boolean>();
  await Promise.all(
    users.map(async (u) => {
      const m = await erasures.erasedUser(tenant, u);
      // Running, those up to its row's bound (until 2026-12-07 every event of the user: a reader
      // paging the whole log passed the events sent since, which the erasure keeps, for good); with
      // no bound known (a row stored before 2026-12-07's bound), all of them.
      if (m) covers.set(u, unservedEvent(m, bounds.get(u)));
    }),
  );
  return (e) => covers.get(e.user_id)?.(e) ?? false;
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
