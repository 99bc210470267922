import { stemmer } from 'stemmer';

/**
 * Text analysis shared by indexing, querying and the local embedding: Unicode folding,
 * lower case, letter/digit runs, English stop words, Porter stemming.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  ('a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves also may must shall upon via within without'
  ).split(' '),
);

const TOKEN = /[\p{L}\p{N}]+/gu;

export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** Raw lower-cased tokens, stop words included (prefix matching needs the raw last word). */
export function words(text: string): string[] {
  return fold(text).match(TOKEN) ?? [];
}

const stemCache = new Map<string, string>();
export function stem(word: string): string {
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
  for (const w of words(text)) if (!STOP_WORDS.has(w)) out.push(stem(w));
  return out;
}

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
