import { dayOf, type SearchLogStore, type SearchRecord } from './analytics.ts';
import { words } from './text.ts';

/** The longest normalised query kept (longer ones are cut at a word boundary). */
const MAX_QUERY_CHARS = 200;

/** How a search's query is counted: folded, lower-cased words joined by one space ('' for a browse). */
export function normaliseQuery(query: string): string {
  let out = '';
  for (const w of words(query)) {
    if (out.length + w.length + 1 > MAX_QUERY_CHARS) break;
    out = out ? `${out} ${w}` : w;
  }
  return out;
}

/**
 * Records a Core search for analytics once it is accepted (valid, its cursor too), while it is
 * ranked; `ranked(total)` then counts it as one without results when it found nothing. Both
 * writes are group-committed with the container's concurrent searches.
 */
export function searchRecording(store: Pick<SearchLogStore, 'record' | 'noResults'>, tenant: string, s: { requestId: string; query: string; servedAt: number }) {
  const rec: SearchRecord = { requestId: s.requestId, query: normaliseQuery(s.query), day: dayOf(s.servedAt), servedAt: s.servedAt };
  return {
    record: () => store.record(tenant, rec),
    ranked: (total: number) => (total === 0 ? store.noResults(tenant, rec) : Promise.resolve()),
  };
}
