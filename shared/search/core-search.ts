/**
 * Core search (`POST /v1/search`) as a request to `runSearch` and as an answer, in one place: the
 * Core handler and the console's playground (which answers exactly as Core does) both use them.
 */
import { canonicalJson } from '../canonical-json.ts';
import { coreList } from '../domain/present.ts';
import { logger } from '../observability.ts';
import type { SearchBody } from '../schemas/search.ts';
import { coreFilter } from './filters.ts';
import { DEFAULT_TAGS } from './highlight.ts';
import type { runSearch, SearchRequest } from './service.ts';
import { type SynonymRule, type SynonymSet, synonymRules } from './synonyms.ts';

/** The ranking request a Core search body asks for (the plan, synonyms and `accepted` hook are the caller's). */
export function coreSearchRequest(body: SearchBody): Omit<SearchRequest, 'plan' | 'synonyms' | 'accepted'> {
  return {
    query: body.query,
    mode: body.mode,
    filter: coreFilter(body.filters),
    limit: body.limit,
    cursor: body.starting_after,
    userId: body.user_id,
    explain: body.explain,
    facets: body.facets,
    highlight: body.highlight ? (body.highlight_tags ?? DEFAULT_TAGS) : undefined,
    sort: body.sort,
    listOf: canonicalJson([body.query, body.mode, body.filters ?? null, body.user_id ?? null]),
  };
}

/** The tenant's synonym sets (cached per container); a failed read serves the query without them. */
export function tenantSynonyms(tenant: string, read: (tenant: string) => Promise<SynonymSet[]>): Promise<readonly SynonymRule[]> {
  return synonymRules(tenant, read).catch((e: unknown) => {
    logger.warn('synonyms not read; searching without them', { tenant, error: String(e) });
    return [];
  });
}

/** The Core answer: the list envelope with `total`, `request_id`, and `experiment` and `facets` when there are any. */
export function coreSearchAnswer(result: Awaited<ReturnType<typeof runSearch>>, requestId: string) {
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
