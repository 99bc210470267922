/**
 * Core search (`POST /v1/search`) in one place: the request to `runSearch`, the answer, and
 * `serveSearch`, which the Core handler and the console's playground (which answers exactly as
 * Core does, as no traffic) both call.
 */
import { canonicalJson } from '../canonical-json.ts';
import { deadlineSignal, outsideDeadline } from '../deadline.ts';
import { nowSeconds } from '../clock.ts';
import { planAndRecord, type ExposureStore } from '../control/exposures.ts';
import { contextNumber, planFor, type ControlDeps } from '../control/serving.ts';
import { coreList } from '../domain/present.ts';
import { logger } from '../observability.ts';
import type { SearchBody } from '../schemas/search.ts';
import type { SearchLogStore } from './analytics.ts';
import { coreFilter, filtersWithout } from './filters.ts';
import { plannedAsOf } from './cursor.ts';
import { DEFAULT_TAGS } from './highlight.ts';
import { searchRecording } from './search-log.ts';
import { runSearch, type SearchRequest } from './service.ts';
import { type SynonymRule, type SynonymSet, synonymRules } from './synonyms.ts';
import type { SearchDeps } from './views.ts';

export interface SearchServing {
  search: SearchDeps;
  control: ControlDeps;
  synonymSets: (tenant: string) => Promise<SynonymSet[]>;
  /**
   * Core traffic: the context's experiment exposure and the search's analytics row, each recorded
   * once the caller is confirmed (`authorized`) and the search accepted. The console's playground
   * is no traffic: none.
   */
  traffic?: { exposures: ExposureStore; recorder: Pick<SearchLogStore, 'record' | 'noResults' | 'forget'>; authorized: Promise<unknown> } | undefined;
}

/**
 * A Core search, answered as Core answers it. The synonyms are read while the context's plan is
 * made; as traffic, the exposure and the analytics row are written while the search is ranked
 * (after it is accepted: valid, its cursor too), and the answer waits for them; a failure to
 * count for analytics does not fail the search.
 */
export async function serveSearch(deps: SearchServing, tenant: string, body: SearchBody, requestId: string, now = nowSeconds()) {
  const contextId = body.context_id !== undefined ? contextNumber(body.context_id) : undefined;
  const synonymsRead = tenantSynonyms(tenant, deps.synonymSets);
  // A personalised search: the user's erasure marker, read at once (by its key, shared by the
  // container's concurrent requests: recommendations' read), for its taste and its segments.
  const user = body.user_id !== undefined ? { id: body.user_id, erased: deps.control.erasedUser(tenant, body.user_id) } : undefined;
  const erased = user?.erased;
  erased?.catch(() => undefined);
  const t = deps.traffic;
  // A later page of a context's list is planned as its first page was.
  const page = contextId === undefined ? undefined : plannedAsOf(body.starting_after);
  const planned =
    contextId === undefined
      ? undefined
      : t
        ? planAndRecord(deps.control, t.exposures, tenant, contextId, body.user_id, now, { requestId, authorized: t.authorized }, erased, page)
        : {
            plan: planFor(deps.control, tenant, contextId, body.user_id, page?.at ?? now, undefined, { erased, eventsBelow: page?.eventsBelow }),
            recorded: Promise.resolve(),
            accept: () => {},
            failed: async () => {},
          };
  const plan = await planned?.plan;
  const synonyms = await synonymsRead;
  const analytics = t ? searchRecording(t.recorder, tenant, { requestId, query: body.query, servedAt: now }) : undefined;
  const counted = (p: Promise<void>) => p.catch((e: unknown) => logger.warn('search not recorded for analytics', { tenant, error: String(e) }));
  let logged: Promise<unknown> | undefined;
  let result: Awaited<ReturnType<typeof runSearch>>;
  try {
    result = await runSearch(deps.search, tenant, {
      ...coreSearchRequest(body),
      user,
      plan,
      synonyms,
      accepted: () => {
        planned?.accept();
        if (!t || !analytics) return;
        logged = t.authorized.then(() => counted(analytics.record()));
        logged.catch(() => undefined);
      },
    });
    await planned?.recorded;
    // Ranked after the deadline, which answered 503 already: not served either.
    deadlineSignal()?.throwIfAborted();
  } catch (e) {
    // Failed once recorded (ranking, the user's events, the exposure, the deadline): not served,
    // so not counted; its retry is a search of its own. Until 2026-12-04 it counted too. Taken
    // out outside the deadline: one past it refused this too (until 2026-12-05).
    if (t && logged) {
      const recorder = t.recorder;
      await logged
        .then(() => outsideDeadline(() => recorder.forget(tenant, requestId)))
        .catch((err: unknown) => logger.warn('failed search not taken out of analytics', { tenant, error: String(err) }));
    }
    // Nor counted in its experiment.
    await planned?.failed().catch((err: unknown) => logger.warn("failed search's exposure not taken back", { tenant, error: String(err) }));
    throw e;
  }
  await logged;
  // Without results: nothing matched, or a first page the context's rules and controls left empty
  // (its `total` counts the matches before them).
  const servedNothing = result.total === 0 || (body.starting_after === undefined && result.data.length === 0);
  if (t && analytics) await t.authorized.then(() => counted(analytics.ranked(servedNothing)));
  return coreSearchAnswer(result, requestId);
}

/** The ranking request a Core search body asks for (the user with the erased users, the plan, synonyms and `accepted` hook are the caller's). */
function coreSearchRequest(body: SearchBody): Omit<SearchRequest, 'user' | 'plan' | 'synonyms' | 'accepted'> {
  return {
    query: body.query,
    mode: body.mode,
    filter: coreFilter(body.filters),
    limit: body.limit,
    cursor: body.starting_after,
    explain: body.explain,
    ...facetsAsked(body),
    highlight: body.highlight ? (body.highlight_tags ?? DEFAULT_TAGS) : undefined,
    sort: body.sort,
    // With a context, its id too (appended: the lists without one keep the digests their cursors hold).
    listOf: canonicalJson([body.query, body.mode, body.filters ?? null, body.user_id ?? null, ...(body.context_id === undefined ? [] : [String(body.context_id)])]),
  };
}

/**
 * The facets a Core search body asks for: `facets`, then the `disjunctive_facets` not among them;
 * each disjunctive one its filters name with the filters without it (the others count as facets do).
 */
function facetsAsked(body: SearchBody): Pick<SearchRequest, 'facets' | 'disjunctive'> {
  const disjunctive = body.disjunctive_facets ?? [];
  const keys = [...new Set([...(body.facets ?? []), ...disjunctive])];
  if (!keys.length) return {};
  return {
    facets: keys,
    disjunctive: [...new Set(disjunctive)].flatMap((key) => {
      const others = filtersWithout(body.filters, key);
      return others === undefined ? [] : [{ key, filter: coreFilter(others) }];
    }),
  };
}

/** The tenant's synonym sets (cached per container); a failed read serves the query without them. */
function tenantSynonyms(tenant: string, read: (tenant: string) => Promise<SynonymSet[]>): Promise<readonly SynonymRule[]> {
  return synonymRules(tenant, read).catch((e: unknown) => {
    logger.warn('synonyms not read; searching without them', { tenant, error: String(e) });
    return [];
  });
}

/** The Core answer: the list envelope with `total`, `request_id`, and `experiment` and `facets` when there are any. */
function coreSearchAnswer(result: Awaited<ReturnType<typeof runSearch>>, requestId: string) {
  return coreList(
    '/v1/search',
    result.data,
    { hasMore: result.has_more, cursor: result.next_cursor },
    {
      total: result.total,
      request_id: requestId,
      ...(result.experiment ? { experiment: result.experiment } : {}),
      ...('facets' in result && result.facets ? { facets: result.facets } : {}),
    },
  );
}
