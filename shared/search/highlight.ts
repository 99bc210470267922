import type { SearchDoc } from './engine.ts';
import { fold, isCjk, stem, tokens } from './text.ts';

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

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** Letters, digits and combining marks: the runs `words` takes its tokens from, before folding. */
const RUN = /[\p{L}\p{N}\p{M}]+/gu;

interface Token {
  start: number;
  end: number;
  hit: boolean;
}

/** A letter with the marks after it. */
const LETTER = /[\p{L}\p{N}]\p{M}*/gu;

interface Letter {
  start: number;
  end: number;
  text: string;
  cjk: boolean;
}

function marks(text: string, terms: ReadonlySet<string>): Token[] {
  const out: Token[] = [];
  const matches = (t: string) => tokens(t).some((w) => terms.has(stem(w)));
  for (const m of text.matchAll(RUN)) {
    if (!isCjk(m[0])) {
      out.push({ start: m.index, end: m.index + m[0].length, hit: matches(m[0]) });
      continue;
    }
    // Chinese, Japanese and Korean runs are searched by character pairs (text.ts `tokens`): each
    // letter is marked when a pair it is in matched (or, alone, the letter itself); other letters
    // of the run go in runs of their own.
    const letters: Letter[] = [...m[0].matchAll(LETTER)].map((l) => ({ start: m.index + l.index, end: m.index + l.index + l[0].length, text: l[0], cjk: isCjk(l[0]) }));
    const at = (k: number) => letters[k] as Letter;
    const known = (t: string) => terms.has(stem(fold(t)));
    for (let i = 0; i < letters.length; ) {
      let j = i;
      while (j + 1 < letters.length && at(j + 1).cjk === at(i).cjk) j++;
      if (!at(i).cjk) out.push({ start: at(i).start, end: at(j).end, hit: matches(text.slice(at(i).start, at(j).end)) });
      else {
        const pair = (k: number) => known(at(k).text + at(k + 1).text);
        for (let k = i; k <= j; k++) out.push({ start: at(k).start, end: at(k).end, hit: i === j ? known(at(k).text) : (k > i && pair(k - 1)) || (k < j && pair(k)) });
      }
      i = j + 1;
    }
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

/** The whole text, marked. */
export function highlightText(text: string, terms: ReadonlySet<string>, tags: HighlightTags): string {
  return marked(text, marks(text, terms), 0, text.length, tags);
}

/**
 * The window of `SNIPPET_WORDS` words with the most matched words (the earliest of equals),
 * marked, with `…` where the text was cut.
 */
export function snippet(text: string, terms: ReadonlySet<string>, tags: HighlightTags, size = SNIPPET_WORDS): string {
  const toks = marks(text, terms);
  if (toks.length <= size) return marked(text, toks, 0, text.length, tags);
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
  const first = toks[best] as Token;
  const last = toks[best + size - 1] as Token;
  const from = best === 0 ? 0 : first.start;
  const to = best + size >= toks.length ? text.length : last.end;
  return (from > 0 ? '…' : '') + marked(text, toks, from, to, tags) + (to < text.length ? '…' : '');
}

/** A hit's `highlight`: its name marked, and a snippet of its description (null without one). */
export function highlightDoc(doc: SearchDoc, terms: ReadonlySet<string>, tags: HighlightTags): { name: string; description: string | null } {
  return {
    name: highlightText(doc.name, terms, tags),
    description: doc.description === undefined ? null : snippet(doc.description, terms, tags),
  };
}
