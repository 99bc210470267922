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
   * where the others stand. `prev`: the hit before it on that page, taken the same way when the
   * cursor's item is gone or changed (the last hit of a page deleted, then the next page asked
   * for: the likeliest deletion between pages, whose statistics moved every score past the
   * cursor's, and the next page came back empty). A page of one hit has none before it: its cursor
   * names `next`, the hit after it, and the next page then starts at that one where it scores now.
   * Only when none is as it was does the cursor's score stand.
   */
  after?: { score: number; id: number; version?: string; prev?: { id: number; version: string } | undefined; next?: { id: number; version: string } | undefined } | undefined;
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
   * The items to score again before any match is added, in the order to try them
   * (`PageRequest.after`): the cursor's item, then its neighbour (the hit before it, or after it);
   * none when the cursor's score stands (no cursor, or one that names no version).
   */
  get anchorIds(): number[] {
    const a = this.page.after;
    if (a?.version === undefined) return [];
    const neighbour = a.prev ?? a.next;
    return neighbour ? [a.id, neighbour.id] : [a.id];
  }

  /**
   * Goes on where `doc` (one of `anchorIds`, as it is now) scores now, when it is the version the
   * page before ranked: after it, or from it when it is the `next` hit; true when it does (the
   * later ones are then not tried).
   */
  reanchor(doc: SearchDoc, score: number): boolean {
    const a = this.page.after;
    if (!a || !Number.isFinite(score)) return false;
    const was = doc.id === a.id ? a.version : doc.id === a.prev?.id ? a.prev.version : doc.id === a.next?.id ? a.next.version : undefined;
    if (was === undefined || hitVersion(doc) !== was) return false;
    // From the next hit: after a position just before it (ids are whole; the ties after it follow it).
    this.after = { score, id: doc.id === a.next?.id ? doc.id - 0.5 : doc.id };
    return true;
  }

  /** A match: `key` names it to `hits` (its ranking key), ties go to the lower item id. */
  add(key: number, id: number, score: number): void {
    this.total += 1;
    this.page.visit?.(key, score);
    const a = this.after;
    // The cursor's own item is never after it, even when the statistics moved its score a little
    // since (an item created or changed between pages): it was the last of the page before (and
    // the hit re-anchored on, the one before it).
    if (a && (id === a.id || id === this.page.after?.id || !(score < a.score || (score === a.score && id > a.id)))) return;
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
