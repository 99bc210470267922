import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadCacm } from './cacm.ts';
import { loadCranfield, type CranDoc } from './cranfield.ts';
import { mean, ndcgAt } from './metrics.ts';
import { miniSearch, plainBm25f, type Peer } from './peers.ts';
import * as embedding from '../shared/search/embedding.ts';
import * as engine from '../shared/search/engine.ts';
import type { SearchDoc, SearchMode } from '../shared/search/engine.ts';
import * as rank from '../shared/search/rank.ts';
import { STOP_WORDS, words } from '../shared/search/text.ts';

/** A test collection as bench:search runs it: documents, judged queries and their relevant documents. */
export interface Collection {
  name: string;
  docs: CranDoc[];
  queries: { n: number; text: string }[];
  qrels: Map<number, Set<number>>;
}

/** The longest query the API takes. */
const MAX_QUERY_CHARS = 1000;

/** A query cut at a word boundary under the API's limit (the peers get the same text). */
export function cutQuery(text: string): string {
  if (text.length <= MAX_QUERY_CHARS) return text;
  const cut = text.slice(0, MAX_QUERY_CHARS + 1);
  const space = cut.lastIndexOf(' ');
  return (space > 0 ? cut.slice(0, space) : cut.slice(0, MAX_QUERY_CHARS)).trim();
}

/** The search collections of ../shared/data that are present (Cranfield, CACM), judged queries only, cut to the limit. */
export function searchCollections(dataDir: string): Collection[] {
  const out: Collection[] = [];
  const add = (name: string, c: { docs: CranDoc[]; queries: { n: number; text: string }[]; qrels: Map<number, Set<number>> }) =>
    out.push({ name, docs: c.docs, queries: c.queries.filter((q) => c.qrels.has(q.n)).map((q) => ({ n: q.n, text: cutQuery(q.text) })), qrels: c.qrels });
  if (existsSync(join(dataDir, 'cranfield', 'cran.all.1400'))) add('Cranfield', loadCranfield(join(dataDir, 'cranfield')));
  if (existsSync(join(dataDir, 'cacm', 'cacm.all'))) add('CACM', loadCacm(join(dataDir, 'cacm')));
  return out;
}

/** A query as a title-style one: its first `n` words that are not stop words (the service's tokens). */
export const firstContentWords = (text: string, n: number): string =>
  words(text)
    .filter((w) => !STOP_WORDS.has(w))
    .slice(0, n)
    .join(' ');

/**
 * The same collection in other shapes, for seeing whether a ranking change holds beyond the
 * shape it was measured on (a collection kept for evaluation may have short queries or untitled
 * documents): queries cut to their first 5 or 3 content words, documents without titles, titles
 * moved into the text. Nothing is chosen on them (`--in-process --shapes`).
 */
export const SHAPES: Readonly<Record<string, (c: Collection) => Collection>> = {
  'queries of 5 words': (c) => ({ ...c, queries: c.queries.map((q) => ({ ...q, text: firstContentWords(q.text, 5) })) }),
  'queries of 3 words': (c) => ({ ...c, queries: c.queries.map((q) => ({ ...q, text: firstContentWords(q.text, 3) })) }),
  'documents without titles': (c) => ({ ...c, docs: c.docs.map((d) => ({ ...d, title: '' })) }),
  'titles in the text': (c) => ({ ...c, docs: c.docs.map((d) => ({ ...d, title: '', text: d.title ? `${d.title} ${d.text}` : d.text })) }),
};

/** A collection's document as an item: name the title (or "Document n"), description the text. */
export const asItem = (d: CranDoc) => ({ name: d.title || `Document ${d.id}`, description: d.text });

/** The peers' nDCG@10 on a collection, each over the same queries. */
export function peerScores(c: Collection): { name: string; ndcg10: number }[] {
  const peerDocs = c.docs.map((d) => ({ id: d.id, title: d.title, text: d.text }));
  return [miniSearch(peerDocs), plainBm25f(peerDocs)].map((p: Peer) => ({
    name: p.name,
    ndcg10: mean(c.queries.map((q) => ndcgAt(p.search(q.text), c.qrels.get(q.n) as Set<number>))),
  }));
}

/** What in-process ranking reads from a checkout's shared/search: this one's, or another's (bench/side-by-side.ts). */
export interface SearchModules {
  engine: typeof engine;
  rank: typeof rank;
  embedding: typeof embedding;
}
export const THIS_CHECKOUT: SearchModules = { engine, rank, embedding };

/** One query ranked in-process in a mode: a page of 10. */
export type InProcessRanker = (query: string, mode: SearchMode) => ReturnType<typeof rank.rank>;

/**
 * The service's ranking in-process, as the search route ranks (the same index, delta, query
 * vector and `rank`), without HTTP. `fresh` puts every document in the delta over an empty build
 * (right after an import), `built` in a build. `seed`: the local embedding's realization (0, the
 * service's, unless measuring others: `seedSpread`).
 */
export function inProcessRanker(m: SearchModules, c: Collection, state: 'fresh' | 'built', dims = 512, seed = 0): InProcessRanker {
  const emb = new m.embedding.HashingEmbedding(dims, seed);
  const docs: SearchDoc[] = c.docs.map((d) => {
    const item = { ...asItem(d), metadata: {} };
    return { id: d.id, ...item, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: emb.embedOne(m.embedding.itemText(item)) };
  });
  const index = m.engine.SearchIndex.build(state === 'built' ? docs : [], dims, 1);
  const delta = new m.rank.PreparedDelta(state === 'built' ? { docs: [], masked: new Set() } : { docs, masked: new Set() });
  delta.bind(index);
  const stats = delta.stats();
  return (text, mode) => {
    // As the search route: the query without its request words, when long (rankingQuery); its vector IDF-weighted.
    const query = m.rank.rankingQuery(text);
    const queryVector = mode === 'keyword' ? null : emb.embedOne(query, (t) => m.engine.idfOf(stats.n, stats.df(t)));
    return m.rank.rank(index, delta, { query, mode, filter: m.engine.NO_FILTER, queryVector, profile: null }, { limit: 10 });
  };
}

/** nDCG@10 of each mode of the service's ranking in-process (`inProcessRanker`): for choosing constants quickly. */
export function inProcessScores(c: Collection, state: 'fresh' | 'built', dims = 512, seed = 0): Record<SearchMode, number> {
  const ranked = inProcessRanker(THIS_CHECKOUT, c, state, dims, seed);
  const out = {} as Record<SearchMode, number>;
  for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
    out[mode] = mean(
      c.queries.map((q) =>
        ndcgAt(
          ranked(q.text, mode).hits.map((h) => h.doc.id),
          c.qrels.get(q.n) as Set<number>,
        ),
      ),
    );
  }
  return out;
}

/** What a collection's figures are over several realizations of the local embedding (`seedSpread`). */
export interface SeedSpread {
  /** Each seed's nDCG@10 per mode, seed 0 (the service's) first. */
  bySeed: Record<SearchMode, number>[];
  mean: Record<SearchMode, number>;
  min: Record<SearchMode, number>;
  max: Record<SearchMode, number>;
  /** How many of the other seeds rank hybrid below seed 0. */
  belowSeedZero: number;
}

/**
 * The in-process figures (built) for seeds 0 to `seeds` - 1 of the local embedding. The hashing
 * embedding is one random projection of many equally good ones; a collection that nothing was
 * chosen on sees, in effect, another. A figure that only seed 0 reaches is luck, not ranking.
 */
export function seedSpread(c: Collection, seeds: number, dims = 512): SeedSpread {
  const modes = ['keyword', 'semantic', 'hybrid'] as const;
  const bySeed = Array.from({ length: seeds }, (_, seed) => inProcessScores(c, 'built', dims, seed));
  const over = (f: (xs: number[]) => number) => Object.fromEntries(modes.map((m) => [m, f(bySeed.map((r) => r[m]))])) as Record<SearchMode, number>;
  const zero = (bySeed[0] as Record<SearchMode, number>).hybrid;
  return { bySeed, mean: over(mean), min: over((xs) => Math.min(...xs)), max: over((xs) => Math.max(...xs)), belowSeedZero: bySeed.slice(1).filter((r) => r.hybrid < zero).length };
}
