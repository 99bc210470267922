/**
 * Strings as values are compared across the service: in Unicode NFC, so "Café" with a composed é
 * and with e and a combining accent (U+0301) is one value. Search's facets and `eq` / `neq` / `in`
 * filters (since dc02ae06), recommendations' `category` and the control plane's rule conditions
 * (until 2026-12-07 those two compared strings as sent, so a decomposed spelling missed the items
 * search's filters matched) all compare through here.
 */

/** No character below U+0300, nor any run of them, changes under NFC: such a string (most of a catalog's) is taken as it is. */
const NFC_AS_IS = /^[\t\n\r\x20-\u02ff]*$/;

/**
 * The NFC of strings that are not as-is (`NFC_AS_IS`: a catalog in Japanese, in accented Latin),
 * kept: a document's value is compared by every query that filters on it, and normalising it each
 * time cost a string's allocation per document per query (review of dc02ae06: a Japanese catalog's
 * `eq` went from about 90 to 360 ns a document). At most `MEMO_CHARS` characters of keys and
 * values are kept; past it the memo starts again.
 */
const memo = new Map<string, string>();
const MEMO_CHARS = 8_000_000;
let memoChars = 0;

/** `s` in Unicode NFC. */
export function nfc(s: string): string {
  if (NFC_AS_IS.test(s)) return s;
  let n = memo.get(s);
  if (n === undefined) {
    n = s.normalize('NFC');
    if (memoChars + s.length + n.length > MEMO_CHARS) {
      memo.clear();
      memoChars = 0;
    }
    memo.set(s, n);
    memoChars += s.length + n.length;
  }
  return n;
}

/**
 * `x` is `want`, strings compared in NFC: `want` must be given in NFC (`nfc`, once per query or
 * rule), `x` (a document's value) is taken so. Equal as they are, or anything not two strings, is
 * decided without normalising.
 */
export const sameNfc = (x: unknown, want: unknown): boolean => x === want || (typeof x === 'string' && typeof want === 'string' && nfc(x) === want);

/** `v` is `want` or a list holding it (as search's `eq` reads a list), strings compared in NFC (`sameNfc`: `want` in NFC). */
export const holdsNfc = (v: unknown, want: unknown): boolean => sameNfc(v, want) || (Array.isArray(v) && v.some((x) => sameNfc(x, want)));

/**
 * `v` is one of `wanted` or a list holding one, strings compared in NFC: `wanted` given in NFC
 * (`asNfc`, once per query or rule); each of the document's values is normalised once, not once
 * per value wanted.
 */
export function holdsAnyNfc(v: unknown, wanted: ReadonlySet<unknown>): boolean {
  if (isWanted(v, wanted)) return true;
  if (!Array.isArray(v)) return false;
  for (const x of v) if (isWanted(x, wanted)) return true;
  return false;
}
const isWanted = (x: unknown, wanted: ReadonlySet<unknown>): boolean => wanted.has(x) || (typeof x === 'string' && wanted.has(nfc(x)));

/** A value to compare with `sameNfc` / `holdsNfc`: a string in NFC, anything else as it is. */
export const asNfc = <T>(v: T): T => (typeof v === 'string' ? (nfc(v) as T) : v);
