/**
 * The byte budget of an answer that holds many resources: every route that can answer many large
 * items (the item list, search, recommendations) cuts its page to it here, and nowhere else.
 *
 * A Lambda function's answer is at most 6 MB (6,291,456 bytes) as Lambda serialises it: the body
 * is a JSON string inside Lambda's JSON, its quotes and backslashes escaped again. Past that
 * API Gateway answers its own 500 {"message":"Internal Server Error"}. An item may hold up to
 * about 180 KB as Lambda writes it (1,000 characters of name, 20,000 of description, 16 KiB of
 * metadata: a control character takes 7 bytes as JSON escapes it and Lambda escapes that again,
 * a quote in metadata 4 for its 2), so 100 of them could take 18 MB. ANSWER_BYTES leaves more than 1.2 MB
 * of the 6 MB for the rest of the answer (envelope, cursor, headers).
 */
export const ANSWER_BYTES = 5_000_000;

/** The bytes `value` takes as Lambda writes it: its JSON inside the body's JSON string (escaped again), the string's quotes left out. */
export function answerBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;
}

/**
 * A bound on `answerBytes` of a value whose JSON is `json`, from its length alone: JSON.stringify
 * escapes every control character and lone surrogate, so each UTF-16 unit of its output is an
 * ASCII character (at most 2 bytes once escaped again: `"` and `\`), half a surrogate pair (4 bytes
 * for the pair) or another character of the BMP (at most 3 bytes in UTF-8): 3 bytes a unit at most.
 */
export const answerBytesAtMost = (json: string): number => 3 * json.length;

/**
 * `answerBytes` of a value whose JSON is `json`, exactly, without escaping it again, when that JSON
 * holds few `"` and `\` (at most one a 64 UTF-16 units, as a page of long texts does); else
 * undefined (counting them with indexOf would cost more than a second JSON.stringify). JSON.stringify
 * leaves no control character nor lone surrogate in its output, so escaped again each `"` and `\`
 * of it takes one byte more and every other character is as it was: its UTF-8 bytes.
 */
export function answerBytesIfFew(json: string): number | undefined {
  const most = json.length / 64;
  let escaped = 0;
  for (const ch of ['"', '\\']) for (let at = json.indexOf(ch); at !== -1; at = json.indexOf(ch, at + 1)) if (++escaped > most) return undefined;
  return Buffer.byteLength(json) + escaped;
}

/**
 * How many of a page's resources, from its first, fit `budget` bytes as Lambda writes them (one
 * at least, when there is one): `items.length` when all do. Runs on every page: when the page's
 * JSON length bounds it under the budget (`answerBytesAtMost`, a page of 100 items of up to
 * 16 KB each) it answers at once, with one JSON.stringify of the page; a larger page of
 * long texts is counted exactly from that JSON (`answerBytesIfFew`); any other, item by item.
 */
export function fitting(items: readonly unknown[], budget = ANSWER_BYTES): number {
  const json = JSON.stringify(items);
  if (answerBytesAtMost(json) <= budget) return items.length;
  // Past the bound, a page of long texts counted exactly from that JSON: 100 items of
  // 20,000-character descriptions (2 MB, well within the answer) took 9.6 ms counted item by item
  // (two JSON.stringify each), more than their answer's own serialisation (6.4 ms); 4.2 ms so.
  const exact = answerBytesIfFew(json);
  if (exact !== undefined && exact <= budget) return items.length;
  // As Lambda writes the list: its brackets, each item's JSON escaped again, a comma between.
  let used = 2;
  for (let i = 0; i < items.length; i++) {
    used += answerBytes(items[i]) + (i > 0 ? 1 : 0);
    if (used > budget) return Math.max(i, 1);
  }
  return items.length;
}

/**
 * How many of a page's resources, from its first, fit what `rest` (the rest of the answer: its
 * `facets`, `total`, ...) leaves of ANSWER_BYTES, as `fitting` counts them (one at least).
 */
export const fittingBeside = (items: readonly unknown[], rest: object): number => fitting(items, ANSWER_BYTES - answerBytes(rest));
