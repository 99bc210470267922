import { createRequire } from 'node:module';
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { STOP_WORDS, words } from '../shared/search/text.ts';

/** A collection's document as the peers index it: title and text. */
export interface PeerDoc {
  id: number;
  title: string;
  text: string;
}

/** A peer engine: top-10 document ids for a query, in-process. */
export interface Peer {
  name: string;
  search(query: string): number[];
}

/** The peers' analysis: our words, English stop words out, Porter stemming. */
const analyse = (text: string): string[] =>
  words(text)
    .filter((w) => !STOP_WORDS.has(w))
    .map((w) => stemmer(w));

/** MiniSearch 7.2 with English stop words, Porter stemming and title boost 2. */
export function miniSearch(docs: readonly PeerDoc[]): Peer {
  const ms = new MiniSearch<PeerDoc>({
    fields: ['title', 'text'],
    processTerm: (t) => {
      const l = t.toLowerCase();
      return STOP_WORDS.has(l) ? null : stemmer(l);
    },
    searchOptions: { boost: { title: 2 } },
  });
  ms.addAll(docs as PeerDoc[]);
  return {
    name: 'MiniSearch 7.2',
    search: (q) =>
      ms
        .search(q)
        .slice(0, 10)
        .map((h) => h.id as number),
  };
}

interface WinkBm25 {
  defineConfig(cfg: { fldWeights: Record<string, number>; bm25Params: { k1: number; b: number } }): boolean;
  definePrepTasks(tasks: ((s: string) => string[])[]): number;
  addDoc(doc: Record<string, string>, id: number): number;
  consolidate(): boolean;
  search(text: string, limit?: number): [string, number][];
}

/** Plain BM25F: `wink-bm25-text-search` 3.1 with k1 1.2, b 0.75, title weight 2, the same stop words and stemming. */
export function plainBm25f(docs: readonly PeerDoc[]): Peer {
  const make = createRequire(import.meta.url)('wink-bm25-text-search') as () => WinkBm25;
  const engine = make();
  engine.defineConfig({ fldWeights: { title: 2, text: 1 }, bm25Params: { k1: 1.2, b: 0.75 } });
  engine.definePrepTasks([analyse]);
  for (const d of docs) engine.addDoc({ title: d.title, text: d.text }, d.id);
  engine.consolidate();
  return { name: 'BM25F (wink-bm25-text-search 3.1)', search: (q) => engine.search(q, 10).map(([id]) => Number(id)) };
}
