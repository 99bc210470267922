/** The cursors of relevance-ordered search results (a sorted search's are sort.ts's). */
import { createHash } from 'node:crypto';
import { InvalidInput } from '../domain/errors.ts';
import type { Hit } from './types.ts';

/** A cursor: the last hit's score and id, and the index build the list is ranked on. */
export interface Cursor {
  score: number;
  id: number;
  builtAt?: number | undefined;
  /** A cursor of a context's list: the position to go on from. */
  offset?: number;
  /** The digest of what ordered the list (query, mode, filters, user), when the cursor names one. */
  list?: string | undefined;
  /**
   * A personalised list's: the id of the user's newest event its taste was made of (0: none), so
   * later pages rank with the taste the first had, not with the events the user sent since.
   */
  asOf?: number | undefined;
}

/** `chars` characters of `text`'s SHA-256 (base64url): how a cursor names something too long to hold. */
export const cursorDigest = (text: string, chars: number): string => createHash('sha256').update(text).digest('base64url').slice(0, chars);

const encode = (v: unknown[]) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * A cursor after hit `h` of a list ranked on build `builtAt` (`list`: what ordered it, digested;
 * `asOf`: a personalised list's newest event of its taste).
 */
export const encodeCursor = (h: Hit, builtAt: number, list?: string, asOf?: number): string =>
  encode(list === undefined ? [h.score, h.doc.id, builtAt] : asOf === undefined ? [h.score, h.doc.id, builtAt, list] : [h.score, h.doc.id, builtAt, list, asOf]);

/**
 * A cursor into a list a context ordered: the position after the last hit, the build it was ranked
 * on, what ordered it (digested), and a personalised list's newest event of its taste (`asOf`).
 */
export const encodeOffsetCursor = (offset: number, builtAt: number, list?: string, asOf?: number): string =>
  encode(list === undefined ? ['o', offset, builtAt] : asOf === undefined ? ['o', offset, builtAt, list] : ['o', offset, builtAt, list, asOf]);

/**
 * A 400 naming `field` when a cursor's list (`of`: the digest of what made it, every kind of search
 * cursor holds one) is not the request's (`list`); cursors made before they named their list, and
 * requests that name none, pass.
 */
export function sameList(of: string | undefined, list: string | undefined, field: string): void {
  if (of !== undefined && list !== undefined && of !== list) {
    throw new InvalidInput('Invalid cursor.', { [field]: ['This cursor is from another search: send the query, mode, filters, user_id and context_id it was made with.'] });
  }
}

/** The cursor in `c`; a 400 naming `field` when it is none this API issued. */
export function decodeCursor(c: string, field: string): Cursor {
  try {
    const v = JSON.parse(Buffer.from(c, 'base64url').toString()) as unknown;
    // Offset cursors issued before they named their list (three elements) page on any.
    if (
      Array.isArray(v) &&
      (v.length === 3 || (v.length === 4 && typeof v[3] === 'string') || (v.length === 5 && typeof v[3] === 'string' && Number.isSafeInteger(v[4]) && (v[4] as number) >= 0)) &&
      v[0] === 'o' &&
      Number.isSafeInteger(v[1]) &&
      (v[1] as number) > 0 &&
      Number.isSafeInteger(v[2]) &&
      (v[2] as number) >= 0
    ) {
      return { score: 0, id: 0, offset: v[1] as number, builtAt: v[2] as number, ...(v.length >= 4 ? { list: v[3] as string } : {}), ...(v.length === 5 ? { asOf: v[4] as number } : {}) };
    }
    // Cursors issued before they named their build (two elements) page on the current one; before
    // they named their list (three), on any; a personalised list's (five) names its taste's events.
    if (Array.isArray(v) && v.length >= 2 && v.length <= 5 && typeof v[0] === 'number' && Number.isFinite(v[0]) && Number.isSafeInteger(v[1])) {
      const builtAt = v[2] as unknown;
      const list = v[3] as unknown;
      const asOf = v[4] as unknown;
      if (
        (builtAt === undefined || (Number.isSafeInteger(builtAt) && (builtAt as number) >= 0)) &&
        (list === undefined || (typeof list === 'string' && v.length >= 4)) &&
        (asOf === undefined || (Number.isSafeInteger(asOf) && (asOf as number) >= 0))
      ) {
        return { score: v[0], id: v[1] as number, builtAt: builtAt as number | undefined, ...(list === undefined ? {} : { list }), ...(asOf === undefined ? {} : { asOf: asOf as number }) };
      }
    }
  } catch {
    /* fall through */
  }
  throw new InvalidInput('Invalid cursor.', { [field]: ['Not a cursor returned by this API.'] });
}
