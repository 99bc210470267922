import { InvalidInput } from '../domain/errors.ts';
import { cursorDigest } from '../search/cursor.ts';

/** What a cursor is of, digested as search cursors digest their list. */
const digestOf = (of: readonly unknown[]): string => cursorDigest(JSON.stringify(of), 12);
const DIGEST = /^[A-Za-z0-9_-]{12}$/;

/**
 * A list's cursor as the API hands it out: the last row's sort key and a digest of what the list
 * is of (`of`: the tenant and the list, or the run), opaque (base64url), so key formats never
 * leave the data layer. `decode` answers the sort key to read after; it refuses (400) anything
 * whose sort key does not have the list's `shape` (a cursor this API never gave), and, saying
 * `other`, a cursor of another list, which would be read as a place in this one and skip its rows
 * before that place.
 */
export function scopedCursor(shape: RegExp, other: string): { encode(sk: string, of: readonly unknown[]): string; decode(cursor: string, of: readonly unknown[]): string } {
  return {
    encode: (sk, of) => Buffer.from(`${sk}@${digestOf(of)}`).toString('base64url'),
    decode(cursor, of) {
      const text = Buffer.from(cursor, 'base64url').toString();
      const at = text.lastIndexOf('@');
      const sk = text.slice(0, at);
      const digest = text.slice(at + 1);
      if (at < 0 || !shape.test(sk) || !DIGEST.test(digest)) throw new InvalidInput('Invalid cursor.', { cursor: ['Not a cursor returned by this API.'] });
      if (digest !== digestOf(of)) throw new InvalidInput('Invalid cursor.', { cursor: [other] });
      return sk;
    },
  };
}
