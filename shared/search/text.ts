import { stemmer } from 'stemmer';

/**
 * Text analysis shared by indexing, querying and the local embedding: Unicode folding,
 * lower case, letter/digit runs (Chinese, Japanese and Korean ones as character pairs, Thai, Lao,
 * Khmer and Burmese ones as their dictionary words), English stop words, Porter stemming.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves also may must shall upon via within without'
  ).split(' '),
);

/** A letter or digit, then letters, digits and the marks folding keeps (`FOLDED_MARKS`). */
const TOKEN = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;
const ASCII = /^\p{ASCII}*$/u;

/**
 * Words with which a long, question-like query asks for results instead of saying what they are
 * about ("I am interested in papers that discuss ...", "articles describing ..."). Documents
 * rarely use them, so their IDF is high and they pull up whatever mentions "papers". Dropped only
 * from queries of at least RANKING.requestMinWords words (`withoutRequestWords`), where they are
 * phrasing; a shorter query ("printer paper a4") keeps every word.
 */
export const REQUEST_WORDS: ReadonlySet<string> = new Set(
  (
    'document documents paper papers article articles describe describes described describing discuss discusses discussed discussing ' +
    'information interested pertaining concerning regarding please want wish find references exist exists someone anyone'
  ).split(' '),
);

/** The query without its request words when it has at least `minWords` words (and keeps one besides). */
export function withoutRequestWords(query: string, minWords: number): string {
  const all = words(query);
  if (all.length < minWords || all.every((w) => REQUEST_WORDS.has(w))) return query;
  // Read as `words` reads it: without possessives' 's (which would be left alone behind a request
  // word: "the paper's findings") and invisible characters (a soft hyphen in "docu\u00ADments").
  query = query.replace(POSSESSIVE, '').replace(ALL_FORMAT, '');
  // An ASCII word folds to its lower case (no marks to strip, nothing to decompose): a long
  // query's words, folded one by one, were most of the time this took.
  const folded = ASCII.test(query) ? (w: string) => w.toLowerCase() : fold;
  return query
    .replace(TOKEN, (w) => (REQUEST_WORDS.has(folded(w)) ? '' : w))
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Marks taken off by folding ("é" → "e", Arabic and Hebrew vowel points): all but the kana voicing
 * marks, which make another word ("ガス", gas, is not "カス"), and which the closing NFC puts back
 * on their letter, as it puts Hangul syllables back together after NFKD took them apart into
 * letters (a voicing mark that joins no letter is then taken off too); and but the vowel signs of
 * the Indic and Southeast Asian scripts, which are marks but spell the word ("कम", less, is not
 * "काम", work: both were "कम").
 */
const FOLDED_MARKS =
  /(?![\u3099\u309a\p{sc=Deva}\p{sc=Beng}\p{sc=Guru}\p{sc=Gujr}\p{sc=Orya}\p{sc=Taml}\p{sc=Telu}\p{sc=Knda}\p{sc=Mlym}\p{sc=Sinh}\p{sc=Thai}\p{sc=Laoo}\p{sc=Tibt}\p{sc=Mymr}\p{sc=Khmr}])\p{M}/gu;
const VOICING_MARKS = /[\u3099\u309a]/g;

export function fold(text: string): string {
  // ASCII text has no marks to take off and is its own NFKD form (normalising was about a third
  // of analysing a long ASCII document).
  if (ASCII.test(text)) return text.toLowerCase();
  return foldOther(text);
}

/**
 * Symbols end words, as they end the highlighter's runs: NFKD would spell some as letters and
 * join them to the word ("Nike™" was the term niketm, "40℃" 40 and c, "№5" no5). Not the symbols
 * that stand for letters, which fold into them (`LETTER_SYMBOLS`: circled and parenthesised
 * letters and digits, the Kangxi radicals of text copied from PDFs, kanbun marks, squared CJK
 * words). And invisible characters inside a word (`\p{Cf}`) take no part in it: the soft hyphen,
 * zero-width spaces and (non-)joiners, the BOM ("Wash\u00ADable" is washable). One pass for both.
 */
export const LETTER_SYMBOLS = '\\u2460-\\u24ff\\u2e80-\\u2fdf\\u3190-\\u319f\\u3200-\\u33ff\\u{1f100}-\\u{1f2ff}';
const SYMBOLS_AND_FORMAT = new RegExp(`\\p{Cf}|[\\u06c0\\u06c1]|(?![${LETTER_SYMBOLS}])\\p{S}`, 'gu');
const FORMAT = /\p{Cf}/u;
const ALL_FORMAT = /\p{Cf}/gu;
/** Before NFKD, which would write ۀ as ە and hamza: Persian heh with yeh above, and heh goal, are heh. */
const PRE_FOLDS: Readonly<Record<string, string>> = { '\u06c0': '\u0647', '\u06c1': '\u0647' };
/**
 * Letters folded into others after lower-casing, as Lucene's ASCII, Arabic, Persian and Hindi
 * folding does, where NFKD leaves them: letters with no accent to take off (ł æ œ þ ð đ ø ħ ŧ),
 * Turkish dotless ı, ß as ss (capitals write SS), Greek final sigma as σ, Arabic tatweel (a
 * stretch, no letter), Persian keheh and yeh, Arabic alef maksura and teh marbuta, the Devanagari
 * nukta ("फ़ोन" is often typed "फोन").
 */
const LETTER_FOLDS: Readonly<Record<string, string>> = {
  ł: 'l',
  æ: 'ae',
  œ: 'oe',
  þ: 'th',
  ð: 'd',
  đ: 'd',
  ø: 'o',
  ħ: 'h',
  ŧ: 't',
  ı: 'i',
  ß: 'ss',
  ς: 'σ',
  '\u0640': '',
  '\u06a9': '\u0643',
  '\u06cc': '\u064a',
  '\u0649': '\u064a',
  '\u0629': '\u0647',
  '\u093c': '',
  // The nukta letters NFC puts back together (the others are excluded from composition).
  '\u0929': '\u0928',
  '\u0931': '\u0930',
  '\u0934': '\u0933',
};
/** Those letters, and the decimal digits of other scripts ("١٥", "१५" are 15). */
const FOLDED_LETTERS = new RegExp(`[${Object.keys(LETTER_FOLDS).join('')}\\p{Nd}]`, 'gu');
/** A decimal digit's ASCII digit, by cache: Unicode encodes each script's digits 0 to 9 in a row, so it is the digit's distance from the row's start. */
const digitCache = new Map<string, string>();
function asciiDigit(d: string): string {
  let out = digitCache.get(d);
  if (out === undefined) {
    const cp = d.codePointAt(0) as number;
    let first = cp;
    while (/\p{Nd}/u.test(String.fromCodePoint(first - 1))) first--;
    out = String((cp - first) % 10);
    digitCache.set(d, out);
  }
  return out;
}

const foldOther = (text: string): string =>
  text
    .replace(SYMBOLS_AND_FORMAT, (c) => PRE_FOLDS[c] ?? (FORMAT.test(c) ? '' : ' '))
    .normalize('NFKD')
    .replace(FOLDED_MARKS, '')
    .toLowerCase()
    .normalize('NFC')
    .replace(VOICING_MARKS, '')
    .replace(FOLDED_LETTERS, (c) => LETTER_FOLDS[c] ?? (c <= '9' ? c : asciiDigit(c)));

/** Thai, Lao, Khmer and Burmese: written without spaces between words, and segmented into them by a dictionary (`spaced`). */
const SPACELESS = /[\p{sc=Thai}\p{sc=Laoo}\p{sc=Khmr}\p{sc=Mymr}]/u;
/** Their repetition and abbreviation marks (ๆ ฯ, Lao ໆ ຯ, Khmer ៗ): letters, but no part of a word ("ดีๆ" is ดี, "กรุงเทพฯ" กรุงเทพ). */
export const REPEAT_MARKS = /[\u0e2f\u0e46\u0eaf\u0ec6\u17d7]/g;
const SPACELESS_SCRIPT_RUNS = ['Thai', 'Laoo', 'Khmr', 'Mymr']
  .map((sc) => {
    const letter = `(?:(?=[\\p{L}\\p{M}])(?!${REPEAT_MARKS.source})\\p{sc=${sc}})`;
    // Invisible characters inside a run do not end it (folding drops them: a soft hyphen or a zero-width space).
    return `${letter}(?:${letter}|\\p{Cf})*`;
  })
  .join('|');
/**
 * A run of one of these scripts' letters and marks, as the dictionary is given it: digits,
 * punctuation, the repetition and abbreviation marks and another script end it ("ราคา๑๐๐บาท" is
 * ราคา, ๑๐๐, บาท).
 */
export const SPACELESS_RUN = new RegExp(SPACELESS_SCRIPT_RUNS, 'gu');
/** ICU's word breaks: dictionaries for the scripts in `SPACELESS`, whatever the locale. */
const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
/**
 * The letters of a run the dictionary is given at once at most: it takes time that grows faster
 * than the run (a 20,000-letter Burmese run: 180 ms whole, 40 in pieces of 1,000), and a run that
 * long is no natural text. ICU reads a few words ahead, so a piece's last RESEGMENT_WORDS words are
 * segmented again with what follows them (with 6, a review found a natural 1,000-letter paragraph
 * of each script segmented as whole at every one of 300 offsets; with 1, at about half of them).
 */
const SEGMENT_PIECE = 500;
const RESEGMENT_WORDS = 6;
/**
 * Letters that folding (NFKD) writes as two and the dictionary knows as one, with the one: Thai's
 * and Lao's "am" (nikhahit, then aa) and Lao's ໜ and ໝ (ຫ, then ນ or ມ). "ทำงาน" (to work) was
 * split as ทํา|งาน, "ໝາ" (dog) as ຫ|ມາ.
 */
const ONE_LETTER: Readonly<Record<string, string>> = { '\u0e4d\u0e32': '\u0e33', '\u0ecd\u0eb2': '\u0eb3', '\u0eab\u0e99': '\u0edc', '\u0eab\u0ea1': '\u0edd' };
/** Those, and the invisible characters a run may hold, which the dictionary is not given. */
const TWO_LETTERS_OR_FORMAT = new RegExp(`${Object.keys(ONE_LETTER).join('|')}|\\p{Cf}`, 'gu');

/** A run with those letters written as one each and without invisible characters, and where each of its characters is in the run (when that differs). */
function composed(run: string): { text: string; at?: number[] } {
  let text = '';
  let at: number[] | undefined;
  let j = 0;
  for (const m of run.matchAll(TWO_LETTERS_OR_FORMAT)) {
    at ??= [];
    for (; j < m.index; j++) {
      text += run[j];
      at.push(j);
    }
    const one = ONE_LETTER[m[0]];
    if (one !== undefined) {
      text += one;
      at.push(j);
    }
    j += m[0].length;
  }
  if (!at) return { text: run };
  for (; j < run.length; j++) {
    text += run[j];
    at.push(j);
  }
  at.push(run.length);
  return { text, at };
}

/** Whether a text has Thai, Lao, Khmer or Burmese letters. */
export const isSpaceless = (text: string): boolean => SPACELESS.test(text);

/**
 * The dictionary words of a `SPACELESS_RUN`, each as written in the run and where it starts. The
 * run is read with the letters of `ONE_LETTER` written as one, as folding does not leave them,
 * so that the same text segments alike however they are written, folded or not.
 */
export function segmentsOf(run: string): { segment: string; index: number }[] {
  const { text, at } = composed(run);
  const out: { segment: string; index: number }[] = [];
  for (let from = 0; from < text.length; ) {
    const end = Math.min(text.length, from + SEGMENT_PIECE);
    const segs = Array.from(segmenter.segment(text.slice(from, end)));
    // A piece cut short: its last words again with what follows (at least one word kept: progress).
    const keep = end < text.length ? Math.max(1, segs.length - RESEGMENT_WORDS) : segs.length;
    for (let k = 0; k < keep; k++) {
      const s = segs[k] as Intl.SegmentData;
      const a = from + s.index;
      const b = a + s.segment.length;
      out.push(at ? { segment: run.slice(at[a] as number, at[b] as number), index: at[a] as number } : { segment: s.segment, index: a });
    }
    from = keep < segs.length ? from + (segs[keep] as Intl.SegmentData).index : end;
  }
  return out;
}

/** The words of one segment of `segmentsOf` (what `words` reads in it: it is not segmented again). */
export const segmentWords = (segment: string): string[] => fold(segment).match(TOKEN) ?? [];

/** Texts segmented last (`spaced`): a document is analysed for its terms, its term pairs and its embedding in turn. */
const spacedCache = new Map<string, string>();

/**
 * The text with a space between the words of each run of Thai, Lao, Khmer or Burmese letters and
 * around it (ICU's dictionary word breaks, as Lucene's Thai analyzer finds them): "ภาษาไทย" →
 * "ภาษา ไทย", so that "ไทย" finds it; the repetition and abbreviation marks become spaces.
 * Segmented before folding, which would take Thai's "ำ" apart (NFKD) into letters the dictionary
 * does not hold.
 */
function spaced(text: string): string {
  let out = spacedCache.get(text);
  if (out === undefined) {
    // Spaces around the run too: "iPhoneราคา" is two words.
    out = text
      .replace(
        SPACELESS_RUN,
        (run) =>
          ` ${segmentsOf(run)
            .map((s) => s.segment)
            .join(' ')} `,
      )
      .replace(REPEAT_MARKS, ' ');
    if (spacedCache.size >= 16) spacedCache.clear();
    spacedCache.set(text, out);
  }
  return out;
}

/**
 * A query's last run of Thai, Lao, Khmer or Burmese letters, when the query ends in it: its words
 * (as `words` reads them); none otherwise. A half-typed word there may be split by the dictionary
 * into other words ("รองเท", half of รองเท้า, is รอง|เท): query expansion reads their joins as
 * prefixes too.
 */
export function lastRunWords(query: string): string[] {
  let last: RegExpExecArray | undefined;
  for (const m of query.matchAll(SPACELESS_RUN)) last = m;
  return last && last.index + last[0].length === query.length ? words(last[0]) : [];
}

/** Raw lower-cased words (letter and digit runs), stop words included (prefix matching needs the raw last word). */
export function words(text: string): string[] {
  const t = APOSTROPHE.test(text) ? text.replace(POSSESSIVE, '') : text;
  if (ASCII.test(t)) return t.toLowerCase().match(TOKEN) ?? [];
  return foldOther(SPACELESS.test(t) ? spaced(t) : t).match(TOKEN) ?? [];
}

/**
 * An English possessive's 's, as Lucene's English analyzer takes it off: "men's" is men (its "s"
 * was a word of its own, and, last in a query, half typed: every word starting with s matched).
 */
const POSSESSIVE_SOURCE = "(?<=[\\p{L}\\p{N}\\p{M}\\p{Cf}\\p{S}])['\\u2019\\uff07]s(?![\\p{L}\\p{N}\\p{M}])";
const POSSESSIVE = new RegExp(POSSESSIVE_SOURCE, 'giu');
const POSSESSIVE_AT = new RegExp(POSSESSIVE_SOURCE, 'iuy');
/** The apostrophes `POSSESSIVE` reads: a text without them is not searched for it. */
const APOSTROPHE = /['\u2019\uff07]/;
/** Whether `text[at]` is the "s" of a possessive `words` takes off (the highlighter's test: it reads runs, which apostrophes end). */
export const isPossessiveS = (text: string, at: number): boolean => {
  if (at < 1) return false;
  POSSESSIVE_AT.lastIndex = at - 1;
  return POSSESSIVE_AT.test(text);
};

/**
 * Words written joined by a hyphen, an apostrophe or an ampersand, with no space: "Wi-Fi",
 * "E-mail", "T-shirt", "L'Oréal", "H&M", "rock'n'roll", "iPhone-15". Their letters can be typed
 * as one word. Their parts are the highlighter's runs (letters, digits, marks, invisible
 * characters and the symbols that fold into letters).
 */
const COMPOUND_CHAR = `[\\p{L}\\p{N}\\p{M}\\p{Cf}${LETTER_SYMBOLS}]`;
/** What joins a compound's words: hyphens (ASCII, U+2010, the non-breaking U+2011), apostrophes (ASCII, U+2019, full width) and the ampersand. */
const JOINER = /[-'&\u2010\u2011\u2019\uff07]/;
// From the start of a run only: tried again inside a long run (one that ends in a lone hyphen,
// "aaa…a-"), each start went back through the rest of the run, quadratic in its length.
const COMPOUND = new RegExp(`(?<!${COMPOUND_CHAR})${COMPOUND_CHAR}+(?:${JOINER.source}${COMPOUND_CHAR}+)+`, 'gu');
/** A compound is joined of 8 words and 64 letters at most ("state-of-the-art" is 4 and 13): longer runs of joined words are no word a user types. */
const MAX_COMPOUND_WORDS = 8;
const MAX_COMPOUND_LENGTH = 64;
/** Numbers joined by a hyphen are a range or a date ("3-4 person", "2024-01-15"), not a word. */
const NUMBERS = /^[\p{N}\p{P}]+$/u;

/**
 * Each compound of a text (`COMPOUND`), where it starts and ends, as one word: its words
 * (`words`: folded, a possessive's 's off) catenated: wifi, email, tshirt, loreal, hm. Indexed
 * beside the words themselves (`analyze`), as Lucene's word delimiter filter catenates them
 * (`catenateWords`), so that the word typed whole finds the compound ("email" finds "E-mail",
 * where a query's split, `expand.ts`, takes no half of one letter). Not for Chinese, Japanese,
 * Korean, Thai, Lao, Khmer or Burmese letters, which are indexed by pairs and dictionary words.
 */
export function* compounds(text: string): Generator<{ start: number; end: number; word: string }> {
  if (!JOINER.test(text)) return;
  for (const m of text.matchAll(COMPOUND)) {
    const ws = words(m[0]);
    if (ws.length < 2 || ws.length > MAX_COMPOUND_WORDS || isCjk(m[0]) || isSpaceless(m[0]) || NUMBERS.test(m[0])) continue;
    const word = ws.join('');
    if (word.length <= MAX_COMPOUND_LENGTH) yield { start: m.index, end: m.index + m[0].length, word };
  }
}

/** Scripts written without spaces between words (Hangul between phrases only). */
const CJK = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{sc=Hangul}]/u;
const CJK_RUN = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{sc=Hangul}]+/gu;

/** Whether a character (or any of a text's) is Chinese, Japanese or Korean. */
export const isCjk = (text: string): boolean => CJK.test(text);

/**
 * What is indexed and searched: `words`, with each run of Chinese, Japanese or Korean letters as
 * its overlapping character pairs ("東京タワー" → 東京, 京タ, タワ, ワー; a lone character as
 * itself), as Lucene's CJK analyzer does: without spaces there are no words to find, and a pair
 * finds "ケース" (case) in "スマートフォンケース" where the whole run matched only itself.
 * `letters`, when given, also receives the letters of each such run of two letters or more, each
 * alone: indexed beside the pairs (`analyze`), so that a one-character query ("靴", shoes) finds
 * the letter wherever it is ("ランニング靴", whose pair is グ靴), as Lucene's CJK bigram filter
 * does with `outputUnigrams`; queries of more characters search the pairs only.
 */
export function tokens(text: string, letters?: string[]): string[] {
  const ws = words(text);
  if (ASCII.test(text) || !ws.some(isCjk)) return ws;
  const out: string[] = [];
  for (const w of ws) {
    if (!isCjk(w)) {
      out.push(w);
      continue;
    }
    let at = 0;
    for (const m of w.matchAll(CJK_RUN)) {
      if (m.index > at) out.push(w.slice(at, m.index));
      const cs = Array.from(m[0]);
      if (cs.length === 1) out.push(cs[0] as string);
      else letters?.push(...cs);
      for (let i = 0; i + 1 < cs.length; i++) out.push((cs[i] as string) + (cs[i + 1] as string));
      at = m.index + m[0].length;
    }
    if (at < w.length) out.push(w.slice(at));
  }
  return out;
}

/** Cache: stems by word. Bound: 200,001 words; emptied when full. */
const stemCache = new Map<string, string>();
export function stem(word: string): string {
  // Chinese, Japanese and Korean pairs are their own stems (and would only fill the cache); the
  // first letter tells most words apart without the test.
  if (word.charCodeAt(0) >= 0x1100 && isCjk(word)) return word;
  let s = stemCache.get(word);
  if (s === undefined) {
    s = /^\p{N}+$/u.test(word) ? word : stemmer(word);
    if (stemCache.size > 200_000) stemCache.clear();
    stemCache.set(word, s);
  }
  return s;
}

/** Index terms: stemmed words without stop words. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of tokens(text)) if (!STOP_WORDS.has(w)) out.push(stem(w));
  return out;
}

/** A synonym phrase's distinct index terms (`RankRequest.phrases`). */
export const phraseTerms = (phrase: string): string[] => [...new Set(terms(phrase))];

/**
 * Edit distance counting an insertion, deletion, substitution or swap of two adjacent letters as
 * one edit (optimal string alignment: "sheo" is one edit from "shoe"), with an early exit above `max`.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (before[j - 2] as number) + 1);
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    // A swap reaches back two rows, so a row can exceed `max` and the next still come back under
    // it only through one; two rows over means none can.
    if (rowMin > max && Math.min(...prev) > max) return max + 1;
    before = prev;
    prev = cur;
  }
  return prev[b.length] as number;
}

/** The first position in `sorted[lo..hi)` whose term is not below `x`. */
function lowerBound(sorted: readonly string[], x: string, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as string) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first position in `sorted[lo..hi)` whose term does not start with `prefix` (those that do come first). */
function pastPrefix(sorted: readonly string[], prefix: string, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as string).startsWith(prefix)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Calls `hit` with every term of `sorted` (in code-unit order, as the index keeps its vocabulary)
 * that starts with the same letter as `term`, is at most `max` letters longer or shorter, and is
 * within `max` edits of it by `editDistance`: the terms and distances a scan with `editDistance`
 * finds, in the same order, without a scan (each with its position in `sorted`). With `prefix`,
 * instead every term with the same first letter that starts with something within `max` edits of
 * `term` (a half-typed word with a typo), with the least such distance. The sorted terms are
 * walked as a trie: terms that share a prefix share its rows of the edit-distance table, and once
 * two consecutive rows are all over `max` every term with that prefix is skipped with a binary
 * search (or, with `prefix`, all of them are hits when one of their shared rows was). Only the
 * band of each row within `max` of the diagonal is computed (a cell off it is over `max` anyway),
 * so a row costs 2 × max + 1 cells whatever the length of `term`. Returns the rows computed (the
 * work done, for tests and benchmarks).
 */
export function forEachNear(sorted: readonly string[], term: string, max: number, hit: (t: string, d: number, at: number) => void, prefix = false): number {
  const m = term.length;
  if (m === 0) return 0;
  const over = max + 1;
  /** Row d holds cells j = d - max .. d + max at 1 .. 2 × max + 1, and `over` at both ends. */
  const width = 2 * max + 3;
  const deepest = m + max;
  const rows = new Int32Array((deepest + 1) * width).fill(over);
  const mins = new Int32Array(deepest + 1);
  /** Per row d, the least distance of `term` to a prefix of at most d letters (capped at `over`). */
  const best = new Int32Array(deepest + 1);
  best[0] = Math.min(m, over);
  for (let b = 1; b < width - 1; b++) {
    const j = b - max - 1;
    if (j >= 0 && j <= m) rows[b] = j;
  }
  const q = new Int32Array(m);
  for (let j = 0; j < m; j++) q[j] = term.charCodeAt(j);
  const first = term.slice(0, 1);
  const end = pastPrefix(sorted, first, lowerBound(sorted, first, 0, sorted.length), sorted.length);
  let i = lowerBound(sorted, first, 0, sorted.length);
  let work = 0;
  /** The term whose rows 0 .. valid are in the table. */
  let prev = '';
  let valid = 0;
  while (i < end) {
    const v = sorted[i] as string;
    let shared = 0;
    const limit = Math.min(valid, v.length);
    while (shared < limit && prev.charCodeAt(shared) === v.charCodeAt(shared)) shared++;
    let dead = 0;
    for (let d = shared + 1; d <= v.length; d++) {
      if (d > deepest) {
        dead = d;
        break;
      }
      work++;
      const ch = v.charCodeAt(d - 1);
      const before = d > 1 ? v.charCodeAt(d - 2) : -1;
      const o = d * width;
      let rowMin = over;
      for (let b = 1; b < width - 1; b++) {
        const j = b + d - max - 1;
        let val = over;
        if (j === 0) val = d;
        else if (j > 0 && j <= m) {
          const qj = q[j - 1] as number;
          val = Math.min((rows[o - width + b + 1] as number) + 1, (rows[o + b - 1] as number) + 1, (rows[o - width + b] as number) + (ch === qj ? 0 : 1));
          // A swap of two adjacent letters is one edit (as in `editDistance`).
          if (d > 1 && j > 1 && ch === q[j - 2] && before === qj) val = Math.min(val, (rows[o - 2 * width + b] as number) + 1);
          if (val > over) val = over;
        }
        rows[o + b] = val;
        if (val < rowMin) rowMin = val;
      }
      mins[d] = rowMin;
      const atEnd = m - d + max + 1;
      best[d] = Math.min(best[d - 1] as number, atEnd >= 1 && atEnd < width - 1 ? (rows[o + atEnd] as number) : over);
      // A swap reaches back two rows: two rows over `max` and no longer term can come back under it.
      if (rowMin > max && (mins[d - 1] as number) > max) {
        dead = d;
        break;
      }
    }
    prev = v;
    if (dead) {
      valid = dead - 1;
      // Most often the next term no longer has that prefix: look there before searching.
      const shares = v.slice(0, dead);
      const next = i + 1 < end && !(sorted[i + 1] as string).startsWith(shares) ? i + 1 : pastPrefix(sorted, shares, i + 1, end);
      // Every term with that prefix has its rows: with `prefix`, they all start within `max` of
      // `term` when one of those rows did.
      const least = best[Math.min(dead, deepest)] as number;
      if (prefix && least <= max) for (let k = i; k < next; k++) hit(sorted[k] as string, least, k);
      i = next;
      continue;
    }
    valid = v.length;
    const n = v.length;
    if (prefix) {
      if ((best[n] as number) <= max) hit(v, best[n] as number, i);
    } else if (Math.abs(n - m) <= max) {
      const dist = rows[n * width + m - n + max + 1] as number;
      if (dist <= max) hit(v, dist, i);
    }
    i++;
  }
  return work;
}

/** Terms in code-unit order: a tie-break that does not depend on the order terms were met in. */
export const byTerm = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The first position in sorted `xs` whose value is not below `x`. */
export function firstAtLeast(xs: readonly string[], x: string): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as string) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
