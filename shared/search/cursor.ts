/** The cursors of relevance-ordered search results (a sorted search's are sort.ts's). */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.ts';
import { InvalidInput } from '../domain/errors.ts';
import type { Hit, SearchDoc } from './types.ts';

/** A cursor: the last hit's score and id, and the index build the list is ranked on. */
export interface Cursor {
  score: number;
  id: number;
  builtAt?: number | undefined;
  /** A cursor of a context's list: the position to go on from. */
  offset?: number;
  /**
   * A context's list: the id of the hit before `offset`. A later page goes on after that item
   * where it stands in the list it ranks (items taken out before it since, deleted ones, moved
   * every position: the page skipped as many), and from `offset` when it is no longer there, or
   * no longer the `version` the page before served (changed since, it moved by itself: going on
   * after it repeated the hits it passed).
   */
  lastId?: number | undefined;
  /** The digest of what ordered the list (query, mode, filters, user), when the cursor names one. */
  list?: string | undefined;
  /**
   * A personalised list's: the id of the user's newest event its taste was made of (0: none), so
   * later pages rank with the taste the first had, not with the events the user sent since.
   */
  asOf?: number | undefined;
  /**
   * The largest item id the first page could rank (item ids only grow): later pages leave out
   * items created since, which would otherwise move every position (a new best match rescales
   * every hybrid score, and feedback moves toward it), so pages repeated or skipped hits.
   */
  upTo?: number | undefined;
  /**
   * A context's list: when (Unix seconds) its first page was planned. Later pages decide the
   * context's rule windows, segment membership and freshness as of then, on the user's events up
   * to `asOf`, so a window that opens or closes, or a segment the user joins, between pages moves
   * nothing across the positions.
   */
  at?: number | undefined;
  /**
   * When (ms) the view the first page ranked on had read the catalog's changes to: later pages
   * score an item whose vector was saved after it as that page did, without one (a vector landing
   * between pages lifted every item that had none past the cursor: skipped), or by the build's
   * vector of it when that one was saved by then (an item embedded anew between pages: rank.ts
   * `withoutVectorsSince`).
   */
  vectorsAsOf?: number | undefined;
  /**
   * The last hit's version (`hitVersion`). A relevance cursor's: a later page goes on after that
   * hit where it scores now when it is the same (`PageRequest.after`), not where it scored on the
   * first page. A context's: see `lastId`.
   */
  version?: string | undefined;
  /**
   * A context's list whose controls weigh popularity: the newest event id of the count of the
   * tenant's latest events its first page weighed (`trendingPopularity`). Later pages weigh that
   * count (`trendingScoresAsOf`), not the one a container has made since (counted again every
   * 30 s: it moved the positions, and pages repeated or skipped hits).
   */
  popularUpTo?: number | undefined;
  /** A relevance cursor's: the hit before the last on its page (its id and version), taken again when the last is gone or changed (`PageRequest.after`). */
  prev?: { id: number; version: string } | undefined;
  /**
   * A relevance cursor of a page of one hit (it names no `prev`): the hit after it, the next page's
   * first, which that page starts at when the last is gone or changed (`PageRequest.after`).
   */
  next?: { id: number; version: string } | undefined;
}

/** `chars` characters of `text`'s SHA-256 (base64url): how a cursor names something too long to hold. */
export const cursorDigest = (text: string, chars: number): string => createHash('sha256').update(text).digest('base64url').slice(0, chars);

/**
 * Which version of an item a hit is, as far as its score goes: a digest of what ranking reads of
 * it (its name, description, metadata and activity) and of when it and its vector were changed.
 * Not its `updated_at` alone: that counts whole seconds, and an item written again in the second
 * of the version a page ranked (or given a vector, which moves no `updated_at`) scores otherwise
 * under the same one.
 */
export const hitVersion = (d: SearchDoc): string => cursorDigest(canonicalJson([d.updated_at, d.embedding_updated_at, d.embedded_ms ?? null, d.active, d.name, d.description ?? null, d.metadata]), 12);

const encode = (v: unknown[]) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** What a cursor holds after its position: [builtAt, list or null, asOf or null, upTo]. */
const tail = (builtAt: number, list: string | undefined, asOf: number | undefined, upTo: number) => [builtAt, list ?? null, asOf ?? null, upTo];

/** What fixes a list's later pages to its first: the build, what ordered it, the taste's events, the items and the vectors it ranked. */
export interface ListBasis {
  builtAt: number;
  list: string | undefined;
  asOf: number | undefined;
  upTo: number;
  vectorsAsOf: number;
}

/**
 * A cursor after hit `h` of a list ranked on build `builtAt` (`list`: what ordered it, digested;
 * `asOf`: a personalised list's newest event of its taste; `upTo`: the largest item id it ranked;
 * `vectorsAsOf`: when its view had read the changes to): [score, id, ...tail, vectorsAsOf,
 * the hit's version (`hitVersion`), and a neighbour's id and version]. The neighbour is the hit
 * before `h` on its page (`prev`); on a page of one hit, the hit after it (`next`, the next page's
 * first), named by its id negated.
 */
export const encodeCursor = (h: Hit, b: ListBasis, prev?: SearchDoc, next?: SearchDoc): string =>
  encode([h.score, h.doc.id, ...tail(b.builtAt, b.list, b.asOf, b.upTo), b.vectorsAsOf, hitVersion(h.doc), ...(prev ? [prev.id, hitVersion(prev)] : next ? [-next.id, hitVersion(next)] : [])]);

/**
 * A cursor into a list a context ordered: the position after the last hit, the build it was ranked
 * on, what ordered it (digested), a personalised list's newest event of its taste (`asOf`), the
 * largest item id it ranked (`upTo`), when its first page was planned (`at`), when its view had
 * read the changes to (`vectorsAsOf`), the hit before the position (`last`: its id and version),
 * and when its controls weigh popularity, the count it weighed (`popularUpTo`, when it names one).
 */
export const encodeOffsetCursor = (offset: number, b: ListBasis, at: number, last: SearchDoc, popularUpTo?: number): string =>
  encode(['o', offset, ...tail(b.builtAt, b.list, b.asOf, b.upTo), at, b.vectorsAsOf, last.id, hitVersion(last), ...(popularUpTo === undefined ? [] : [popularUpTo])]);

/**
 * A 400 naming `field` when a cursor's list (`of`: the digest of what made it, every kind of search
 * cursor holds one) is not the request's (`list`); cursors made before they named their list, and
 * requests that name none, pass. The message names what the route takes: Core search
 * (`starting_after`) its query, mode, filters, user_id and context_id; the Platform item search
 * (`cursor`) only its query and filters (until 2026-12-06 it was told to send the Core fields too,
 * which it refuses as unknown). `madeWith` says what to do instead (its GET, which takes no filters).
 */
export function sameList(of: string | undefined, list: string | undefined, field: string, madeWith?: string): void {
  if (of !== undefined && list !== undefined && of !== list) {
    const what = field === 'starting_after' ? 'the query, mode, filters, user_id and context_id' : 'the query and filters';
    throw new InvalidInput('Invalid cursor.', { [field]: [`This cursor is from another search: ${madeWith ?? `send ${what} it was made with.`}`] });
  }
}

const wholeAtLeast = (v: unknown, min: number): v is number => Number.isSafeInteger(v) && (v as number) >= min;

/**
 * The fields after a cursor's position (`rest`, from its third element), in the form this API
 * issues ([builtAt, list or null, asOf or null, upTo]) or an earlier one ([builtAt], [builtAt,
 * list], [builtAt, list, asOf], or nothing: cursors issued before they named their build);
 * undefined when they are none of these.
 */
function tailOf(rest: readonly unknown[]): Pick<Cursor, 'builtAt' | 'list' | 'asOf' | 'upTo'> | undefined {
  const [builtAt, list, asOf, upTo] = rest;
  if (rest.length === 4) {
    if (!wholeAtLeast(builtAt, 0) || !(list === null || typeof list === 'string') || !(asOf === null || wholeAtLeast(asOf, 0)) || !wholeAtLeast(upTo, 0)) return undefined;
    return { builtAt, ...(list === null ? {} : { list }), ...(asOf === null ? {} : { asOf }), upTo };
  }
  if (rest.length > 3) return undefined;
  if (builtAt !== undefined && !wholeAtLeast(builtAt, 0)) return undefined;
  if (list !== undefined && typeof list !== 'string') return undefined;
  if (asOf !== undefined && !wholeAtLeast(asOf, 0)) return undefined;
  return { builtAt: builtAt as number | undefined, ...(list === undefined ? {} : { list }), ...(asOf === undefined ? {} : { asOf }) };
}

/** The cursor in `c`; a 400 naming `field` when it is none this API issued. */
export function decodeCursor(c: string, field: string): Cursor {
  try {
    const v = JSON.parse(Buffer.from(c, 'base64url').toString()) as unknown;
    if (Array.isArray(v) && v[0] === 'o') {
      // Offset cursors issued before they named their list (three elements) page on any; before
      // they named when their list was planned (six), each page is planned when it is asked for;
      // before they named their view's time (seven), every vector ranks; before they named the hit
      // before their position (eight), they go on from the position alone; before they named that
      // hit's version (nine: 2026-12-06), after that hit whatever it became. Eleven: the popularity
      // count its first page weighed too (since 2026-12-07; ten: later pages weigh the count in hand).
      const at: unknown = v.length >= 7 ? v[6] : undefined;
      const vectorsAsOf: unknown = v.length >= 8 ? v[7] : undefined;
      const lastId: unknown = v.length >= 9 ? v[8] : undefined;
      const version: unknown = v.length >= 10 ? v[9] : undefined;
      const popularUpTo: unknown = v.length === 11 ? v[10] : undefined;
      const t = v.length >= 3 && v.length <= 11 ? tailOf(v.slice(2, 6)) : undefined;
      if (
        t &&
        wholeAtLeast(v[1], 1) &&
        t.builtAt !== undefined &&
        (at === undefined || wholeAtLeast(at, 0)) &&
        (vectorsAsOf === undefined || wholeAtLeast(vectorsAsOf, 0)) &&
        (lastId === undefined || wholeAtLeast(lastId, 1)) &&
        (version === undefined || (typeof version === 'string' && version.length > 0)) &&
        (popularUpTo === undefined || wholeAtLeast(popularUpTo, 0))
      )
        return {
          score: 0,
          id: 0,
          offset: v[1],
          ...t,
          ...(at === undefined ? {} : { at }),
          ...(vectorsAsOf === undefined ? {} : { vectorsAsOf }),
          ...(lastId === undefined ? {} : { lastId: lastId as number }),
          ...(version === undefined ? {} : { version: version as string }),
          ...(popularUpTo === undefined ? {} : { popularUpTo: popularUpTo as number }),
        };
    } else if (Array.isArray(v) && (v.length <= 8 || v.length === 10) && v.length >= 2 && typeof v[0] === 'number' && Number.isFinite(v[0]) && Number.isSafeInteger(v[1])) {
      // Cursors issued before they named their build (two elements) page on the current one; before
      // they named their list (three), on any; before they named the items they ranked, on every
      // one; before they named their view's time (six), with every vector; before they named their
      // hit's version (seven, or eight naming its updated_at: issued on 2026-12-06), after the
      // score the first page gave it. Ten: a neighbour too, the hit before the last (a page of one
      // hit named none until 2026-12-07; since, the hit after it, its id negated).
      const vectorsAsOf: unknown = v.length >= 7 ? v[6] : undefined;
      const named: unknown = v.length >= 8 ? v[7] : undefined;
      const version = typeof named === 'string' && named.length > 0 ? named : undefined;
      const [otherId, otherVersion]: unknown[] = v.length === 10 ? v.slice(8) : [];
      const other = Number.isSafeInteger(otherId) && otherId !== 0 && typeof otherVersion === 'string' && otherVersion.length > 0 ? { id: otherId as number, version: otherVersion } : undefined;
      const neighbour = other && (other.id > 0 ? { prev: other } : { next: { id: -other.id, version: other.version } });
      const t = tailOf(v.slice(2, 6));
      if (t && (vectorsAsOf === undefined || wholeAtLeast(vectorsAsOf, 0)) && (named === undefined || version !== undefined || wholeAtLeast(named, 0)) && (v.length !== 10 || (neighbour && version)))
        return { score: v[0], id: v[1] as number, ...t, ...(vectorsAsOf === undefined ? {} : { vectorsAsOf }), ...(version === undefined ? {} : { version }), ...neighbour };
    }
  } catch {
    /* fall through */
  }
  throw new InvalidInput('Invalid cursor.', { [field]: ['Not a cursor returned by this API.'] });
}

/**
 * How a later page of a context's search is planned: as its first page was (`Cursor.at`), on the
 * user's events up to the newest its first page read (`asOf`). Undefined for any other cursor,
 * one issued before cursors held when their list was planned, or one that is none this API
 * issued (`decodeCursor` refuses it when the search reads it).
 */
export function plannedAsOf(c: string | undefined): { at: number; eventsBelow: number | undefined } | undefined {
  if (c === undefined) return undefined;
  try {
    const { at, asOf } = decodeCursor(c, 'starting_after');
    return at === undefined ? undefined : { at, eventsBelow: asOf === undefined ? undefined : asOf + 1 };
  } catch {
    return undefined;
  }
}
