import { analyze } from './analyze.ts';
import type { SearchDoc } from './engine.ts';
import { compounds, fold, isCjk, isPossessiveS, isSpaceless, LETTER_SYMBOLS, REPEAT_MARKS, SPACELESS_RUN, STOP_WORDS, segmentsOf, segmentWords, stem, tokens, words } from './text.ts';

/**
 * Highlighting: a hit's name, and a short snippet of its description, HTML-escaped with the
 * words that matched the query marked. A word matches when one of its index terms (folded,
 * stemmed) is among the query's expanded terms (`SearchIndex.expand`: its own words stemmed,
 * the last word's prefix completions, typo corrections, synonyms), so `runing` marks
 * "running" and `jack` marks "Jacket".
 */
export interface HighlightTags {
  pre: string;
  post: string;
}
export const DEFAULT_TAGS: HighlightTags = { pre: '<em>', post: '</em>' };

/** Words a description snippet holds at most. */
export const SNIPPET_WORDS = 20;
/**
 * Characters of the description a snippet shows at most (before its marks, escapes and `…`):
 * 20 words of usual length take about 150, so this bounds only words or runs of symbols far
 * longer than words (until 2026-12-07 a description of one 8,000-character token was shown
 * 5,000 characters long).
 */
export const SNIPPET_CHARS = 300;
/** Characters a snippet's cut leaves out at most to fall at a word's edge (`shown`); past that it cuts inside the word. */
const SNIPPET_SNAP = 30;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/**
 * Letters, digits and combining marks: the runs `words` takes its tokens from, before folding;
 * with the symbols that fold into letters (`LETTER_SYMBOLS`: "㍿" into 株式会社, "🈁" into ココ,
 * "Ⓐ" into a), and the invisible characters folding takes out of a word (a soft hyphen:
 * "Wash\u00ADable" is one word).
 */
const RUN = new RegExp(`[\\p{L}\\p{N}\\p{M}\\p{Cf}${LETTER_SYMBOLS}]+`, 'gu');

interface Token {
  start: number;
  end: number;
  hit: boolean;
}

/**
 * Characters that are one character each and fold to one (an ASCII letter or digit lower-cased,
 * the others to themselves): most Chinese, Japanese and Korean text, marked without segmenting or
 * folding it character by character (which made highlighting long descriptions ten times slower).
 */
const PLAIN = /^[0-9A-Za-z\u3041-\u3096\u309d\u309e\u30a1-\u30fa\u30fc-\u30fe\u4e00-\u9fff\uac00-\ud7a3]*$/;
const ASCII_WORD = /^[0-9a-z]$/;
const LETTER = /^[\p{L}\p{N}\p{M}]$/u;

/**
 * A piece of a run that folds on its own as it folds in the run (what NFC joins stays in one
 * piece): a decomposed Hangul syllable (its leading consonants, vowels and final consonants), or
 * any character, each with the combining marks and half-width voicing marks after it: about 8 x
 * faster than `Intl.Segmenter`'s graphemes on 20,000 half-width kana (115 against 15 ms).
 */
const PIECE = /(?:[\u1100-\u115f\ua960-\ua97f]+[\u1160-\u11a7\ud7b0-\ud7c6]+[\u11a8-\u11ff\ud7cb-\ud7fb]*|[\s\S])[\p{M}\uff9e\uff9f]*/gu;

/** What folding makes of a piece of a run: Chinese, Japanese or Korean letters, other letters and digits, or neither. */
enum Kind {
  Cjk,
  Word,
  None,
}

/**
 * A run with Chinese, Japanese or Korean letters, as `tokens` reads it: its pieces (`PIECE`) each
 * folded into what folding makes of it (half-width "ﾊﾞ" into one letter, "㍿" into four,
 * decomposed Hangul into one syllable), then the folded letters' pairs, and words of other
 * letters, matched. A piece is marked when a pair or word it gave a letter to matched, or the
 * letter alone (a one-character query).
 */
function cjkMarks(run: string, offset: number, terms: ReadonlySet<string>, out: Token[]): void {
  const pieces: { start: number; end: number }[] = [];
  const letters: string[] = [];
  const kinds: Kind[] = [];
  const pieceOf: number[] = [];
  if (PLAIN.test(run)) {
    for (let i = 0; i < run.length; i++) {
      const c = (run[i] as string).toLowerCase();
      pieces.push({ start: offset + i, end: offset + i + 1 });
      letters.push(c);
      kinds.push(c.charCodeAt(0) < 0x80 ? Kind.Word : Kind.Cjk);
      pieceOf.push(i);
    }
  } else {
    // Each piece folded once per run (a text repeats its characters).
    const folded = new Map<string, [string[], Kind[]]>();
    for (const g of run.matchAll(PIECE)) {
      const p = pieces.length;
      pieces.push({ start: offset + g.index, end: offset + g.index + g[0].length });
      let f = folded.get(g[0]);
      if (!f) {
        const cs = Array.from(fold(g[0]));
        f = [cs, cs.map((c) => (ASCII_WORD.test(c) ? Kind.Word : !LETTER.test(c) ? Kind.None : isCjk(c) ? Kind.Cjk : Kind.Word))];
        folded.set(g[0], f);
      }
      const [cs, ks] = f;
      for (let k = 0; k < cs.length; k++) {
        letters.push(cs[k] as string);
        kinds.push(ks[k] as Kind);
        pieceOf.push(p);
      }
    }
  }
  const hit = new Array<boolean>(pieces.length).fill(false);
  for (let i = 0; i < letters.length; ) {
    let j = i;
    while (j + 1 < letters.length && kinds[j + 1] === kinds[i]) j++;
    if (kinds[i] === Kind.Cjk) {
      // A letter alone (a one-character query), and the pairs.
      for (let k = i; k <= j; k++) if (terms.has(letters[k] as string)) hit[pieceOf[k] as number] = true;
      for (let k = i; k < j; k++) {
        if (!terms.has((letters[k] as string) + (letters[k + 1] as string))) continue;
        hit[pieceOf[k] as number] = true;
        hit[pieceOf[k + 1] as number] = true;
      }
    } else if (kinds[i] === Kind.Word && terms.has(stem(letters.slice(i, j + 1).join('')))) {
      for (let k = i; k <= j; k++) hit[pieceOf[k] as number] = true;
    }
    i = j + 1;
  }
  // A token per piece with a Chinese, Japanese or Korean letter; other pieces in a row, one token.
  const cjkPiece = new Array<boolean>(pieces.length).fill(false);
  letters.forEach((_, k) => {
    if (kinds[k] === Kind.Cjk) cjkPiece[pieceOf[k] as number] = true;
  });
  for (let p = 0; p < pieces.length; ) {
    let q = p;
    if (!cjkPiece[p]) while (q + 1 < pieces.length && !cjkPiece[q + 1]) q++;
    let any = false;
    for (let k = p; k <= q; k++) any ||= hit[k] as boolean;
    out.push({ start: (pieces[p] as { start: number }).start, end: (pieces[q] as { end: number }).end, hit: any });
    p = q + 1;
  }
}

/**
 * A run with Thai, Lao, Khmer or Burmese letters: a token for each of their dictionary words (as
 * `words` segments them), and the parts of the run between them, without the repetition and
 * abbreviation marks that end words there (`REPEAT_MARKS`), as other runs (`runMarks`).
 */
function spacelessMarks(text: string, start: number, end: number, terms: ReadonlySet<string>, out: Token[], seen: Map<string, boolean>, seenRuns: Map<string, boolean>): void {
  const run = text.slice(start, end);
  let at = 0;
  for (const m of run.matchAll(SPACELESS_RUN)) {
    if (m.index > at) betweenMarks(text, start + at, start + m.index, terms, out, seenRuns);
    for (const s of segmentsOf(m[0])) {
      const from = start + m.index + s.index;
      // Each word folded once per text (a text repeats its words).
      let hit = seen.get(s.segment);
      if (hit === undefined) {
        hit = segmentWords(s.segment).some((w) => terms.has(stem(w)));
        seen.set(s.segment, hit);
      }
      out.push({ start: from, end: from + s.segment.length, hit });
    }
    at = m.index + m[0].length;
  }
  if (at < run.length) betweenMarks(text, start + at, end, terms, out, seenRuns);
}

/** `text[start..end)` split at the repetition and abbreviation marks, each part a run (`runMarks`). */
function betweenMarks(text: string, start: number, end: number, terms: ReadonlySet<string>, out: Token[], seen: Map<string, boolean>): void {
  let at = start;
  for (const m of text.slice(start, end).matchAll(REPEAT_MARKS)) {
    if (start + m.index > at) runMarks(text, at, start + m.index, terms, out, seen);
    at = start + m.index + m[0].length;
  }
  if (end > at) runMarks(text, at, end, terms, out, seen);
}

/**
 * A run (or part of one) without Thai, Lao, Khmer or Burmese letters: its Chinese, Japanese or
 * Korean letters, or one word (whether it matched read once per text: a text repeats its words).
 */
function runMarks(text: string, start: number, end: number, terms: ReadonlySet<string>, out: Token[], seen: Map<string, boolean>): void {
  const run = text.slice(start, end);
  if (isCjk(run)) {
    cjkMarks(run, start, terms, out);
    return;
  }
  let hit = seen.get(run);
  if (hit === undefined) {
    hit = tokens(run).some((w) => terms.has(stem(w)));
    seen.set(run, hit);
  }
  out.push({ start, end, hit });
}

function marks(text: string, terms: ReadonlySet<string>): Token[] {
  const out: Token[] = [];
  // Whether a word matched, by the word as written: of the other runs, and Thai, Lao, Khmer and Burmese words.
  const seen = new Map<string, boolean>();
  const seenSpaceless = new Map<string, boolean>();
  // Compounds the query matched as one word ("wifi" for "Wi-Fi"), marked as one.
  const joined = Array.from(compounds(text)).filter((c) => terms.has(stem(c.word)));
  let j = 0;
  let marked: Token | undefined;
  for (const m of text.matchAll(RUN)) {
    const end = m.index + m[0].length;
    while (j < joined.length && (joined[j] as { end: number }).end <= m.index) j++;
    const c = joined[j];
    if (c && c.start < end) {
      // The runs of the compound, one token (a run may reach past it: "Ⓐb-c" holds the run Ⓐb).
      if (marked && marked.start <= c.start && marked.end > c.start) marked.end = Math.max(marked.end, end);
      else out.push((marked = { start: Math.min(c.start, m.index), end: Math.max(c.end, end), hit: true }));
      continue;
    }
    // A possessive's "s", which the index does not hold (`words` takes it off).
    if ((m[0] === 's' || m[0] === 'S') && isPossessiveS(text, m.index)) out.push({ start: m.index, end, hit: false });
    else if (isSpaceless(m[0])) spacelessMarks(text, m.index, end, terms, out, seenSpaceless, seen);
    else runMarks(text, m.index, end, terms, out, seen);
  }
  return out;
}

/** `text[from..to)` escaped, its matched words wrapped in the tags. */
function marked(text: string, toks: readonly Token[], from: number, to: number, tags: HighlightTags): string {
  let out = '';
  let at = from;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i] as Token;
    if (t.end <= from || t.start >= to || !t.hit) continue;
    // Matched letters that touch (of a Chinese, Japanese or Korean run) are marked as one.
    let end = t.end;
    for (let next = toks[i + 1]; next?.hit && next.start === end && next.end <= to; next = toks[i + 1]) {
      end = next.end;
      i++;
    }
    out += escapeHtml(text.slice(at, t.start)) + tags.pre + escapeHtml(text.slice(t.start, end)) + tags.post;
    at = end;
  }
  return out + escapeHtml(text.slice(at, to));
}

/** The whole text, marked; with `opening`, also the words it begins with when they are those (`stopWordsAsked`). */
export function highlightText(text: string, terms: ReadonlySet<string>, tags: HighlightTags, opening?: readonly string[]): string {
  const toks = marks(text, terms);
  if (opening) markOpening(text, toks, opening);
  return marked(text, toks, 0, text.length, tags);
}

/**
 * The words of a query of stop words only ("The Who", "It", "Up"), as `words` reads them, else
 * undefined. No index term matches them (stop words are not indexed), but ranking finds the
 * items whose names begin with them (rank.ts, `stopWordNames`): their names' opening words are
 * what matched, and are marked (until 2026-12-07 such a hit showed nothing marked).
 */
export function stopWordsAsked(query: string): readonly string[] | undefined {
  const asked = words(query);
  return asked.length > 0 && asked.every((w) => STOP_WORDS.has(w)) ? asked : undefined;
}

/**
 * Marks the first tokens of `text` when its words begin with `opening`, word for word as `words`
 * reads them (the name ranking compared with the query); nothing when they do not.
 */
function markOpening(text: string, toks: Token[], opening: readonly string[]): void {
  let at = 0;
  const hit: Token[] = [];
  for (const t of toks) {
    if (at === opening.length) break;
    const ws = words(text.slice(t.start, t.end));
    if (ws.length === 0) continue;
    for (const w of ws) if (w !== opening[at++]) return;
    hit.push(t);
  }
  if (at !== opening.length) return;
  for (const t of hit) t.hit = true;
}

/**
 * The window of `SNIPPET_WORDS` words with the most matched words (the earliest of equals), its
 * matched words in the middle (as many words before the first as after the last, where the text
 * has them), marked, with `…` where the text was cut.
 */
export function snippet(text: string, terms: ReadonlySet<string>, tags: HighlightTags, size = SNIPPET_WORDS, scanned = SNIPPET_SCAN): string {
  const scan = scannedLength(text, scanned);
  const toks = marks(scan < text.length ? text.slice(0, scan) : text, terms);
  if (toks.length <= size) return shown(text, toks, 0, characterEnd(text, scan, 0), tags);
  let best = 0;
  let bestHits = -1;
  let hits = 0;
  for (let i = 0; i < toks.length; i++) {
    if ((toks[i] as Token).hit) hits++;
    if (i >= size && (toks[i - size] as Token).hit) hits--;
    if (i >= size - 1 && hits > bestHits) {
      bestHits = hits;
      best = i - size + 1;
    }
  }
  // A window that matches nothing more than the opening does: start at the top.
  if (bestHits === 0) best = 0;
  else {
    // The earliest window of the most matches ends at its last match: the words around the matches
    // are the context a reader wants, so it moves to have them on both sides (it holds the same
    // matches: a window holding more would have been the one found).
    let firstHit = best;
    while (!(toks[firstHit] as Token).hit) firstHit++;
    let lastHit = best + size - 1;
    while (!(toks[lastHit] as Token).hit) lastHit--;
    const slack = size - (lastHit - firstHit + 1);
    best = Math.max(0, Math.min(toks.length - size, firstHit - Math.floor(slack / 2)));
  }
  const first = toks[best] as Token;
  const last = toks[best + size - 1] as Token;
  // At characters as shown: a joiner, a variation selector or a flag's tags are tokens of their
  // own (`RUN`), so a window's first or last word can fall inside an emoji sequence (until
  // 2026-12-07 a snippet began or ended with half a family, a skin tone or a flag's tags). It
  // takes the whole character at both ends.
  const from = best === 0 ? 0 : characterStart(text, first.start, 0);
  const to = characterEnd(text, best + size >= toks.length ? scan : last.end, from);
  return shown(text, toks, from, to, tags);
}

/**
 * `text` from `from` to `to` marked, with `…` where it was cut; within SNIPPET_CHARS: a longer
 * span is cut to that many characters around its matched words (centred on them when they fit,
 * else from a little before the first), at the words' edges where a word fits, else inside it.
 */
function shown(text: string, toks: readonly Token[], from: number, to: number, tags: HighlightTags): string {
  if (to - from > SNIPPET_CHARS) {
    const inside = toks.filter((t) => t.start >= from && t.end <= to);
    const hits = inside.filter((t) => t.hit);
    const firstHit = hits[0];
    const lastHit = hits[hits.length - 1];
    let start = from;
    if (firstHit && lastHit) {
      const span = lastHit.end - firstHit.start;
      start = span <= SNIPPET_CHARS ? firstHit.start - Math.floor((SNIPPET_CHARS - span) / 2) : firstHit.start - Math.floor(SNIPPET_CHARS / 4);
    }
    start = Math.max(from, Math.min(start, to - SNIPPET_CHARS));
    // At the start of the first word from `start` (the first match at the latest, which begins at
    // or after it), and at the end of the last word that ends within the characters, when that
    // leaves out at most SNIPPET_SNAP of them; else inside the word (or run of symbols) there, so
    // that a match between words too long to show whole keeps the text around it.
    const opening = inside.find((t) => t.start >= start);
    start = characterStart(text, opening && opening.start - start <= SNIPPET_SNAP ? opening.start : start, from);
    let end = start + SNIPPET_CHARS;
    let closing: Token | undefined;
    for (const t of inside) if (t.start >= start && t.end <= end) closing = t;
    if (closing && end - closing.end <= SNIPPET_SNAP) end = closing.end;
    if (end > to) end = to;
    // Not inside a character as shown (a letter and its combining accents, an emoji sequence):
    // until 2026-12-07 a cut there kept the letter without its accent, or a joiner alone.
    const whole = characterStart(text, end, start);
    if (whole > start) end = whole;
    else if (isLow(text.charCodeAt(end))) end -= 1;
    // A word cut at the end is marked as far as it is shown.
    const clipped = toks.map((t) => (t.start < end && t.end > end ? { ...t, end } : t));
    return (start > 0 ? '…' : '') + marked(text, clipped, start, end, tags) + (end < text.length ? '…' : '');
  }
  return (from > 0 ? '…' : '') + marked(text, toks, from, to, tags) + (to < text.length ? '…' : '');
}

/**
 * How much of a description a snippet is chosen from: its first `SNIPPET_SCAN` characters, cut
 * after the last character within them that ends a word (or, in a run of letters longer than
 * half of them, before a surrogate pair's second half). Finding the
 * matched words costs about a microsecond a character, and several in mixed scripts: a search of
 * 100 hits with 20,000-character descriptions spent 1.5-2.5 s on its snippets alone (a security
 * review's find), holding the server's thread.
 */
export const SNIPPET_SCAN = 5000;
/**
 * The characters a page's snippets are chosen from together: a page of more than 20 hits (the
 * default limit) chooses each from fewer than `SNIPPET_SCAN` (`snippetScan`: a page of 100 from
 * 1,000 each), so that a page's highlighting costs at most what 20 long descriptions cost (a page
 * of 100 Thai descriptions of 20,000 characters took 0.5 s, 0.1 s so).
 */
export const SNIPPET_PAGE_SCAN = 100_000;
/** How much of each description a page of at most `limit` hits chooses its snippet from. */
export const snippetScan = (limit: number): number => Math.min(SNIPPET_SCAN, Math.floor(SNIPPET_PAGE_SCAN / limit));
/** A character of a run the highlighter reads as (part of) a word (`RUN`): what a cut must not follow. */
const WORDISH = new RegExp(`^[\\p{L}\\p{N}\\p{M}\\p{Cf}${LETTER_SYMBOLS}]$`, 'u');
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
/**
 * Whether a character shown surely begins at `at` (0 < `at` < length), told without segmenting
 * (about a microsecond a character): an ASCII character other than a line feed (nothing joins it
 * to what precedes it, but a carriage return a line feed) after one below U+0600 (no prefixed
 * concatenation mark, the only characters joined to what follows them, is). A snippet's cut
 * mostly falls before a space or a punctuation mark.
 */
function breaksBefore(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c < 0x80 && c !== 0x0a && text.charCodeAt(at - 1) < 0x600;
}
/**
 * `at`, or where the character shown there begins when `at` falls inside one (a letter and its
 * combining marks, a surrogate pair, an emoji sequence), read from at most 64 code units before it
 * (not before `floor`).
 */
function characterStart(text: string, at: number, floor: number): number {
  if (at <= floor || at >= text.length || breaksBefore(text, at)) return at;
  const from = Math.max(floor, at - 64);
  let start = from;
  for (const { index } of graphemes.segment(text.slice(from, Math.min(text.length, at + 64)))) {
    if (from + index > at) break;
    start = from + index;
  }
  return start;
}
/**
 * `at`, or where the character shown there ends when `at` falls inside one (as `characterStart`),
 * read from at most 64 code units before and after it; a character reaching past those, where
 * it begins (when that is after `floor`).
 */
function characterEnd(text: string, at: number, floor: number): number {
  if (at <= floor || at >= text.length || breaksBefore(text, at)) return at;
  const from = Math.max(floor, at - 64);
  const upto = Math.min(text.length, at + 64);
  for (const { index, segment } of graphemes.segment(text.slice(from, upto))) {
    const start = from + index;
    const end = start + segment.length;
    if (start === at) return at;
    if (end <= at) continue;
    if (end < upto || upto === text.length) return end;
    break;
  }
  const start = characterStart(text, at, floor);
  return start > floor ? start : at;
}
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
function scannedLength(text: string, most: number): number {
  if (text.length <= most) return text.length;
  // A word that ends at the limit is within it whole: the cut falls there, before what ends it
  // (until 2026-12-07 it fell before that word, which was left out of the snippet).
  const next = text.charCodeAt(most);
  if (!isLow(next) && !WORDISH.test(isHigh(next) ? text.slice(most, most + 2) : (text[most] as string))) return most;
  // After the last character that ends a word (a space, a comma, a line end, ...) in the second
  // half, read whole (a letter beyond the basic plane is two code units); a run of letters longer
  // than that is cut where it is, outside a surrogate pair.
  for (let at = most; at > most / 2; at--) {
    if (isLow(text.charCodeAt(at))) continue;
    const before = isLow(text.charCodeAt(at - 1)) ? text.slice(at - 2, at) : (text[at - 1] as string);
    if (!WORDISH.test(before)) return at;
  }
  return isLow(text.charCodeAt(most)) ? most - 1 : most;
}

/**
 * The terms to mark in a hit: the query's, and those of each synonym phrase (its `phraseTerms`) the hit holds
 * whole (`RankRequest.phrases`: ranking scores a phrase only there; "set" of "television set" is
 * not marked in "Cookware set") in what highlighting shows: the name and the description's first
 * `scanned` characters, not the metadata (`snippetScan`: analysing whole descriptions cost a page of 100 long Thai
 * ones 0.5 s, where its snippets cost 0.1 s).
 */
export function withPhrasesHeld(terms: ReadonlySet<string>, doc: SearchDoc, phrases: readonly (readonly string[])[], scanned = SNIPPET_SCAN): ReadonlySet<string> {
  if (phrases.length === 0) return terms;
  // Without the metadata, which highlighting does not show: a phrase whose words only it completes
  // ("Cookware set" of brand "Television") is not in the text, whose "set" was marked for `tv`.
  const shown = { ...doc, metadata: {}, ...(doc.description === undefined ? {} : { description: doc.description.slice(0, scannedLength(doc.description, scanned)) }) };
  const held = analyze(shown).tf;
  const whole = phrases.filter((ts) => ts.length > 0 && ts.every((t) => held.has(t)));
  return whole.length ? new Set([...terms, ...whole.flat()]) : terms;
}

/**
 * A hit's `highlight`: its name marked, and a snippet of its description (null without one),
 * chosen from its first `scanned` characters (`snippetScan`); with `opening` (`stopWordsAsked`),
 * the name's opening words too when they are those.
 */
export function highlightDoc(doc: SearchDoc, terms: ReadonlySet<string>, tags: HighlightTags, scanned = SNIPPET_SCAN, opening?: readonly string[]): { name: string; description: string | null } {
  return {
    name: highlightText(doc.name, terms, tags, opening),
    description: doc.description === undefined ? null : snippet(doc.description, terms, tags, SNIPPET_WORDS, scanned),
  };
}
