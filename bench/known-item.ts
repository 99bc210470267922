/**
 * Known-item search: short queries for one item of a catalog, as people type them into a search
 * box (its name, its first words, with a typo, half typed, reordered, without punctuation), over
 * MovieLens titles (genres as the description) and Last.fm artist names (their top tags), ranked
 * by the service (in-process) and by the search benchmark's two peers on the same items. A second
 * kind of data beside the search collections' long questions: no ranking constant was chosen on it.
 * First written by a review session's probe (2026-11-29), which found the typo defect fixed then.
 */
import { join } from 'node:path';
import { type Collection, inProcessRanker, THIS_CHECKOUT } from './collections.ts';
import { artistItem, loadLastfm } from './lastfm.ts';
import { loadMovieLens } from './movielens.ts';
import { miniSearch, plainBm25f } from './peers.ts';
import { seededRandom } from '../shared/random.ts';

export interface KnownItemDoc {
  id: number;
  title: string;
  text: string;
}
export interface KnownItemQuery {
  kind: string;
  text: string;
  /** The item the query was made from. */
  source: number;
  /** It and any item of exactly the same name. */
  relevant: number[];
  /** How it was made (a typo's edit, a cut word). */
  note?: string;
}

const ARTICLES = "The|A|An|Les|La|Le|L'|Il|Die|Das|Der|El|Los|Las|Lo|I|Gli|Un|Une|Det|Den|De|O|Os|As|Ein|Eine|Het";
const INVERTED = new RegExp(`^(.*), (${ARTICLES})$`);
/** A MovieLens title as people know it: no year, no alternative titles in parentheses, the article back in front. */
export function naturalMovie(title: string): string {
  let t = title.replace(/\s*\(\d{4}(–\d{4})?\)\s*$/, '').trim();
  // Alternative / original titles in parentheses: "City of Lost Children, The (Cité des enfants perdus, La)".
  const stripped = t.replace(/\s*\([^()]*\)\s*/g, ' ').trim();
  if (stripped) t = stripped;
  const m = INVERTED.exec(t);
  if (m) t = m[2]?.endsWith("'") ? `${m[2]}${m[1]}` : `${m[2]} ${m[1]}`;
  return t.replace(/\s+/g, ' ').trim();
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
function sample<T>(r: () => number, xs: readonly T[], n: number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a.slice(0, n);
}

const STOP = new Set('a an the of and in on to for at by with from is it la le les el de du des der die das'.split(' '));
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const isAsciiWord = (w: string) => /^[A-Za-z]+$/.test(w);

/** One typo in a word of 5+ letters: substitution, transposition of neighbours, or deletion. */
function typo(r: () => number, text: string): { text: string; note: string } | null {
  const ws = text.split(' ');
  const cand = ws.map((w, i) => [w, i] as const).filter(([w]) => isAsciiWord(w) && w.length >= 5);
  if (!cand.length) return null;
  const [w, i] = pick(r, cand);
  const op = pick(r, ['sub', 'swap', 'del'] as const);
  let out = w;
  let at = 0;
  for (let tries = 0; tries < 10 && out.toLowerCase() === w.toLowerCase(); tries++) {
    if (op === 'sub') {
      at = Math.floor(r() * w.length);
      const c = pick(r, LETTERS.replace(w[at]?.toLowerCase() ?? '', '').split(''));
      out = w.slice(0, at) + c + w.slice(at + 1);
    } else if (op === 'swap') {
      at = Math.floor(r() * (w.length - 1));
      out = w.slice(0, at) + w[at + 1] + w[at] + w.slice(at + 2);
    } else {
      at = Math.floor(r() * w.length);
      out = w.slice(0, at) + w.slice(at + 1);
    }
  }
  if (out.toLowerCase() === w.toLowerCase()) return null;
  const q = [...ws];
  q[i] = out;
  return { text: q.join(' '), note: `${op}@${at}${at === 0 ? ' (first letter)' : ''} ${w}->${out}` };
}

/** Lower case, accents off, punctuation out: joined words ("spiderman", "schindlers") or spaced ("wall e"). */
function plain(r: () => number, text: string): string {
  const noAccents = text.normalize('NFKD').replace(/\p{M}/gu, '');
  const joinOrSpace = r() < 0.5 ? '' : ' ';
  return noAccents
    .toLowerCase()
    .replace(/['’`]/g, '')
    .replace(/[-·.‐/]/g, joinOrSpace)
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Up to `n` queries of each kind, from items drawn at random (seeded): the item they come from is
 * the one relevant, with any other of exactly the same name.
 */
export function knownItemQueries(docs: readonly KnownItemDoc[], natural: (d: KnownItemDoc) => string, hasYear: boolean, seed: number, n: number): KnownItemQuery[] {
  const byName = new Map<string, number[]>();
  for (const d of docs) byName.set(d.title, [...(byName.get(d.title) ?? []), d.id]);
  const rel = (d: KnownItemDoc) => byName.get(d.title) as number[];
  const out: KnownItemQuery[] = [];
  const kinds: [string, (r: () => number, d: KnownItemDoc, nat: string) => { text: string; note?: string } | null][] = [
    ['exact name', (_r, d) => ({ text: d.title })],
    [hasYear ? 'title without year' : 'name lower case', (_r, _d, nat) => ({ text: hasYear ? nat : nat.toLowerCase() })],
    [
      'first word(s)',
      (r, _d, nat) => {
        const ws = nat.split(' ');
        if (ws.length < 2) return null;
        let k = 1 + Math.floor(r() * Math.min(2, ws.length - 1));
        // At least one word that is not an article or preposition.
        while (k < ws.length && ws.slice(0, k).every((w) => STOP.has(w.toLowerCase()))) k++;
        if (k >= ws.length) return null;
        return { text: ws.slice(0, k).join(' '), note: `${k}/${ws.length} words` };
      },
    ],
    ['one typo', (r, _d, nat) => typo(r, nat)],
    [
      'half-typed last word',
      (_r, _d, nat) => {
        const ws = nat.split(' ');
        const last = ws[ws.length - 1] as string;
        if (!/^\p{L}+$/u.test(last) || last.length < 4) return null;
        const cut = Math.max(2, Math.ceil(last.length / 2));
        return { text: [...ws.slice(0, -1), last.slice(0, cut)].join(' '), note: `${last}->${last.slice(0, cut)}` };
      },
    ],
    [
      'words reordered',
      (r, _d, nat) => {
        const ws = nat.split(' ');
        if (ws.filter((w) => !STOP.has(w.toLowerCase())).length < 2) return null;
        for (let t = 0; t < 20; t++) {
          const s = sample(r, ws, ws.length);
          if (s.join(' ') !== ws.join(' ')) return { text: s.join(' ') };
        }
        return null;
      },
    ],
    [
      'lower case, no punctuation',
      (r, _d, nat) => {
        // Only names with punctuation or accents: otherwise the same as the kind above.
        if (!/[^\p{L}\p{N}\s]|[^\p{ASCII}]/u.test(nat)) return null;
        const p = plain(r, nat);
        if (!p || p === nat.toLowerCase()) return null;
        return { text: p };
      },
    ],
  ];
  kinds.forEach(([kind, make], ki) => {
    const r = seededRandom(seed * 1000 + ki);
    const made: KnownItemQuery[] = [];
    for (const d of sample(r, docs, docs.length)) {
      if (made.length >= n) break;
      const nat = natural(d);
      if (!nat) continue;
      const q = make(r, d, nat);
      if (!q?.text.trim()) continue;
      made.push({ kind, text: q.text, source: d.id, relevant: rel(d), ...(q.note ? { note: q.note } : {}) });
    }
    out.push(...made);
  });
  return out;
}

/** The two catalogs of the data folder, each with how people know an item's name. */
export function knownItemCatalogs(dataDir: string): { name: string; docs: KnownItemDoc[]; natural: (d: KnownItemDoc) => string; hasYear: boolean }[] {
  const { movies } = loadMovieLens(join(dataDir, 'ml-latest-small'));
  const { artists } = loadLastfm(join(dataDir, 'lastfm'));
  return [
    { name: 'MovieLens', docs: movies.map((m) => ({ id: m.id, title: m.title || `Movie ${m.id}`, text: m.genres.join(' ') })), natural: (d) => naturalMovie(d.title), hasYear: true },
    {
      name: 'Last.fm',
      docs: artists.map((a) => {
        const it = artistItem(a);
        return { id: a.id, title: it.name, text: it.description };
      }),
      natural: (d) => d.title.replace(/\s+/g, ' ').trim(),
      hasYear: false,
    },
  ];
}

export const KNOWN_ITEM_SYSTEMS = ['keyword', 'semantic', 'hybrid', 'MiniSearch', 'BM25F'] as const;
export type KnownItemSystem = (typeof KNOWN_ITEM_SYSTEMS)[number];

/** Per query, each system's rank of the first relevant item in its top 10 (0: not there). */
export function rankKnownItems(name: string, docs: KnownItemDoc[], queries: readonly KnownItemQuery[], state: 'built' | 'fresh'): Record<KnownItemSystem, number>[] {
  const c: Collection = { name, docs, queries: [], qrels: new Map() };
  const ours = inProcessRanker(THIS_CHECKOUT, c, state);
  const ms = miniSearch(docs);
  const bm = plainBm25f(docs);
  const run: Record<KnownItemSystem, (q: string) => number[]> = {
    keyword: (q) => ours(q, 'keyword').hits.map((h) => h.doc.id),
    semantic: (q) => ours(q, 'semantic').hits.map((h) => h.doc.id),
    hybrid: (q) => ours(q, 'hybrid').hits.map((h) => h.doc.id),
    ['MiniSearch']: (q) => ms.search(q),
    ['BM25F']: (q) => bm.search(q),
  };
  return queries.map((q) => {
    const rel = new Set(q.relevant);
    const ranks = {} as Record<KnownItemSystem, number>;
    for (const s of KNOWN_ITEM_SYSTEMS)
      ranks[s] =
        run[s](q.text)
          .slice(0, 10)
          .findIndex((id) => rel.has(id)) + 1;
    return ranks;
  });
}

/** MRR@10 and success@1 of some queries' ranks. */
export function mrrAndFirst(ranks: readonly number[]): { mrr10: number; success1: number } {
  const n = Math.max(1, ranks.length);
  return { mrr10: ranks.reduce((a, k) => a + (k ? 1 / k : 0), 0) / n, success1: ranks.filter((k) => k === 1).length / n };
}
