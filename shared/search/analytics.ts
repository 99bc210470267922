/**
 * Search analytics: every Core search is recorded (its normalised query, whether it found
 * anything, its request_id), and events sent with a search's `request_id` are attributed to that
 * search's query. Counts are kept per UTC day and query in counters (shared/data/search-analytics.ts):
 * the maintenance pass folds the searches into them a minute at a time, once no search of that
 * minute can still be written, and a report adds the few minutes not folded yet from the searches'
 * own rows. `GET /api/analytics/searches` never reads the event log.
 */
import { dayOf, dayStart, nowSeconds } from '../clock.ts';
import { addCount, countOf } from '../counts.ts';
import { eachRequest } from '../domain/attribution.ts';
import type { EventRecord } from '../domain/types.ts';
import { InvalidInput } from '../domain/errors.ts';

/** Events ingested this long after a search are attributed to it (and no later). */
export const SEARCH_ATTRIBUTION_SECONDS = 86_400;
/** The longest range a report covers, in days. */
export const MAX_RANGE_DAYS = 92;

/** A search as recorded (by its request_id). */
export interface SearchRecord {
  requestId: string;
  /** Normalised query ('' for a browse). */
  query: string;
  /** UTC day of the search, YYYY-MM-DD. */
  day: string;
  servedAt: number;
}

/** A counters row summed: searches, those without results, and by event type the events attributed and the searches with at least one. */
export interface QueryCounts {
  searches: number;
  no_results: number;
  events: Record<string, number>;
  searches_with: Record<string, number>;
}

export interface SearchLogStore {
  /** Records a search: its row, by request_id and by the second it was served (group-committed with the container's concurrent searches). */
  record(tenant: string, s: SearchRecord): Promise<void>;
  /** Marks a recorded search as one without results. */
  noResults(tenant: string, s: SearchRecord): Promise<void>;
  /** Deletes a recorded search's row: a search that failed after it was recorded was not served (before its minute is folded). */
  forget(tenant: string, requestId: string): Promise<void>;
  search(tenant: string, requestId: string): Promise<SearchRecord | undefined>;
  /** Counts the event for the search's query unless it was counted before; whether it counted now. */
  attribute(tenant: string, s: SearchRecord, event: { id: number; type: string; created: number }): Promise<boolean>;
  /**
   * Folds the searches served before `upTo` (Unix seconds) into the counters, from where the last
   * fold ended, a minute at a time, starting no new minute once `budgetMs` have passed (it always
   * folds one); what it folded. Safe to run twice at once, and again after a failure: each search
   * counts once.
   */
  fold(tenant: string, upTo: number, budgetMs: number): Promise<{ searches: number; queries: number; foldedTo: number | undefined }>;
  /**
   * The counts of the days from..to, summed per query: the counters and the searches not folded
   * yet; `complete` false when more rows than `maxRows` were there.
   */
  counts(tenant: string, from: string, to: string, maxRows: number): Promise<{ byQuery: Map<string, QueryCounts>; complete: boolean }>;
}

/**
 * Searches are folded into the counters only this long after they were served: a search writes its
 * row while it is served (the search function's timeout on AWS is 29 s, lib/http-api.ts), so
 * nothing served before `now - FOLD_LAG_SECONDS` can still be written.
 */
export const FOLD_LAG_SECONDS = 60;

/**
 * How long one maintenance pass folds searches, over all tenants (it runs every minute, for at
 * most a minute, with other work): a backlog, after the pass stopped a while, is caught up over the
 * next passes whatever a minute holds, and each tenant folds at least a minute a pass.
 */
export const FOLD_PASS_BUDGET_MS = 20_000;

/** The maintenance pass's step: folds a tenant's searches into its counters as far as is safe, for up to `budgetMs`. */
export function foldSearchCounts(store: Pick<SearchLogStore, 'fold'>, tenant: string, now = nowSeconds(), budgetMs = FOLD_PASS_BUDGET_MS) {
  return store.fold(tenant, now - FOLD_LAG_SECONDS, Math.max(0, budgetMs));
}

/**
 * Attributes stored events that name a recorded search (by `request_id`) to its query, each
 * event once, when ingested within SEARCH_ATTRIBUTION_SECONDS of the search. One read per
 * distinct request_id of the batch; two writes per attributed event.
 */
export async function attributeSearchEvents(store: SearchLogStore, tenant: string, events: readonly EventRecord[]): Promise<number> {
  let counted = 0;
  await eachRequest(events, async (requestId, list) => {
    const s = await store.search(tenant, requestId);
    if (!s) return;
    for (const e of list) {
      if (e.created < s.servedAt - 5 || e.created > s.servedAt + SEARCH_ATTRIBUTION_SECONDS) continue;
      if (await store.attribute(tenant, s, { id: e.id, type: e.type, created: e.created })) counted++;
    }
  });
  return counted;
}

/** Rows of counters one report reads at most (a row per day and distinct query). */
export const MAX_COUNTER_ROWS = 200_000;

export interface AnalyticsQuery {
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
  click_type: string;
  conversion_type: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** The last Unix second of 9999-12-31, the last day written YYYY-MM-DD. */
const LAST_DAY_SECONDS = 253_402_300_799;

/** A `from` / `to` parameter (YYYY-MM-DD, or Unix seconds) as its UTC day. */
function dayParam(v: string, field: string): string {
  if (/^\d{1,12}$/.test(v)) {
    // Twelve digits reach the year 33658, whose ISO string is "+033658-..."; past 9999-12-31 no
    // second names a YYYY-MM-DD day (it named "+033658-09", and the range's checks read NaN).
    if (Number(v) > LAST_DAY_SECONDS) throw new InvalidInput('Invalid query parameters.', { [field]: ['Unix seconds of a day up to 9999-12-31 (at most 253402300799)'] });
    return dayOf(Number(v));
  }
  if (DAY.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) === v) return v;
  throw new InvalidInput('Invalid query parameters.', { [field]: ['must be a date YYYY-MM-DD (UTC) or Unix seconds'] });
}

const rate = (n: number, of: number) => (of > 0 ? Number((n / of).toFixed(6)) : 0);

/**
 * `GET /api/analytics/searches`: over the UTC days from..to (default: the 7 days up to today),
 * the totals, the top queries by searches and the queries without results by how often, each
 * with click-through (searches with a `click_type` event / searches) and conversion
 * (searches with a `conversion_type` event / searches) rates.
 */
export async function searchAnalytics(store: SearchLogStore, tenant: string, q: AnalyticsQuery, now = nowSeconds()) {
  const to = q.to !== undefined ? dayParam(q.to, 'to') : dayOf(now);
  const from = q.from !== undefined ? dayParam(q.from, 'from') : dayOf(dayStart(to) - 6 * 86_400);
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
  if (days < 1) throw new InvalidInput('Invalid query parameters.', { from: ['from must not be after to'] });
  if (days > MAX_RANGE_DAYS) throw new InvalidInput('Invalid query parameters.', { from: [`the range covers at most ${MAX_RANGE_DAYS} days`] });

  const { byQuery, complete } = await store.counts(tenant, from, to, MAX_COUNTER_ROWS);
  const counts = (c: QueryCounts) => ({
    searches: c.searches,
    no_results: c.no_results,
    clicks: countOf(c.events, q.click_type),
    conversions: countOf(c.events, q.conversion_type),
    click_through_rate: rate(countOf(c.searches_with, q.click_type), c.searches),
    conversion_rate: rate(countOf(c.searches_with, q.conversion_type), c.searches),
    events: c.events,
    searches_with: c.searches_with,
  });
  const total: QueryCounts = { searches: 0, no_results: 0, events: {}, searches_with: {} };
  for (const c of byQuery.values()) {
    total.searches += c.searches;
    total.no_results += c.no_results;
    for (const [k, n] of Object.entries(c.events)) addCount(total.events, k, n);
    for (const [k, n] of Object.entries(c.searches_with)) addCount(total.searches_with, k, n);
  }
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const entries = [...byQuery];
  const top = entries
    .filter(([, c]) => c.searches > 0)
    .sort(([qa, a], [qb, b]) => b.searches - a.searches || byText(qa, qb))
    .slice(0, q.limit);
  const none = entries
    .filter(([, c]) => c.no_results > 0)
    .sort(([qa, a], [qb, b]) => b.no_results - a.no_results || byText(qa, qb))
    .slice(0, q.limit);
  return {
    object: 'search_analytics',
    from,
    to,
    click_type: q.click_type,
    conversion_type: q.conversion_type,
    totals: { ...counts(total), queries: byQuery.size },
    top_queries: top.map(([query, c]) => ({ query, ...counts(c) })),
    no_result_queries: none.map(([query, c]) => ({ query, searches: c.searches, no_results: c.no_results })),
    complete,
  };
}
