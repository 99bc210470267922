import { dayOf } from '../clock.ts';
import type { SearchLogStore, SearchRecord } from './analytics.ts';
import { words } from './text.ts';

/** The longest normalised query kept (longer ones are cut at a word boundary, a longer first word within it). */
const MAX_QUERY_CHARS = 200;

/**
 * How a search's query is counted: folded, lower-cased words joined by one space ('' for a
 * browse), at most MAX_QUERY_CHARS: the words that fit, and a first word longer than that cut
 * (at a character, never inside one), so that no query with words counts as a browse.
 */
export function normaliseQuery(query: string): string {
  let out = '';
  for (const w of words(query)) {
    const room = MAX_QUERY_CHARS - out.length - (out ? 1 : 0);
    if (w.length <= room) {
      out = out ? `${out} ${w}` : w;
      continue;
    }
    if (!out)
      for (const ch of w) {
        if (out.length + ch.length > MAX_QUERY_CHARS) break;
        out += ch;
      }
    break;
  }
  return out;
}

/**
 * Records a Core search for analytics once it is accepted (valid, its cursor too), while it is
 * ranked; `ranked(servedNothing)` then counts it as one without results when it showed nothing.
 * Both writes are group-committed with the container's concurrent searches.
 */
export function searchRecording(store: Pick<SearchLogStore, 'record' | 'noResults'>, tenant: string, s: { requestId: string; query: string; servedAt: number }) {
  const rec: SearchRecord = { requestId: s.requestId, query: normaliseQuery(s.query), day: dayOf(s.servedAt), servedAt: s.servedAt };
  return {
    record: () => store.record(tenant, rec),
    ranked: (servedNothing: boolean) => (servedNothing ? store.noResults(tenant, rec) : Promise.resolve()),
  };
}
