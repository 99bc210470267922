/** One page of ranked results after a cursor, kept by the one top-k as candidates go by. */
import { TopK } from '../top-k.ts';
import { hitVersion } from './cursor.ts';
import type { Hit, SearchDoc } from './types.ts';

/** Which page: at most `limit` hits strictly after `after` in rank order. */
export interface PageRequest {
  limit: number;
  /**
   * `version`: the cursor's item's, as the page before ranked it (`hitVersion`). While that item is the same
   * (and a match), the page goes on after it where it scores now (`reanchor`): the collection
   * statistics may have moved every score since (items deleted between pages, read by this page's
   * view and not by that one's, raise each word's IDF and rescale hybrid's normalised scores), and
   * the first page's score then left the rest of the list above the cursor (a next page found
   * nothing). An item changed since goes by the cursor's score: its new score says nothing of
   * where the others stand.
   */
  after?: { score: number; id: number; version?: string } | undefined;
  /**
   * Sees every match by its ranking key (a build position, or the build's size plus a delta
   * slot) with its score: facets and sort by a field (shared/search/service.ts) read their
   * columns by it. With it, no match is skipped by the shortcuts that only count matches that
   * cannot enter the page.
   */
  visit?: ((key: number, score: number) => void) | undefined;
}

/** The one order of results: score descending, then id ascending. Cursors follow it. */
export const byRank = (a: Hit, b: Hit): number => b.score - a.score || a.doc.id - b.doc.id;

/** Collects the best `limit + 1` hits after the cursor (in `byRank` order) and counts every match. */
export class ResultPage {
  total = 0;
  private readonly top: TopK;
  private after: { score: number; id: number } | undefined;

  constructor(private readonly page: PageRequest) {
    this.top = new TopK(page.limit + 1);
    this.after = page.after;
  }

  /**
   * The cursor's item to score again before any match is added (`PageRequest.after`): its id, or
   * undefined when the cursor's score stands (no cursor, or one that does not name the item's
   * version).
   */
  get anchorId(): number | undefined {
    const a = this.page.after;
    return a?.version === undefined ? undefined : a.id;
  }

  /** Goes on after the cursor's item where it scores now, when it is as the page before ranked it (`doc`: it now). */
  reanchor(doc: SearchDoc, score: number): void {
    const a = this.page.after;
    if (a?.version !== undefined && doc.id === a.id && Number.isFinite(score) && hitVersion(doc) === a.version) this.after = { score, id: a.id };
  }

  /** A match: `key` names it to `hits` (its ranking key), ties go to the lower item id. */
  add(key: number, id: number, score: number): void {
    this.total += 1;
    this.page.visit?.(key, score);
    const a = this.after;
    // The cursor's own item is never after it, even when the statistics moved its score a little
    // since (an item created or changed between pages): it was the last of the page before.
    if (a && (id === a.id || !(score < a.score || (score === a.score && id > a.id)))) return;
    this.top.push(key, score, id);
  }

  /** A match that `full` says cannot enter the page: it only counts toward the total. */
  count(): void {
    this.total += 1;
  }

  /** True when no score up to `bound` can enter the page any more (it only counts toward the total). */
  full(bound: number): boolean {
    if (this.page.visit) return false;
    return this.top.full && bound < this.top.worstScore;
  }

  /** The page (plus one more hit when there is a next page), in rank order. */
  hits(docOf: (key: number) => SearchDoc): Hit[] {
    const out: Hit[] = [];
    this.top.forEachBest((key, score) => out.push({ doc: docOf(key), score }));
    return out;
  }
}
