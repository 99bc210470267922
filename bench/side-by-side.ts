/**
 * Ranking's CPU time in this checkout and in another, side by side in one process: each ranks the
 * same queries over the same documents (a collection, built or all in the delta) in alternation,
 * round after round, and each band's figure is the median of the rounds' CPU time per query. On
 * these shared machines the wall time of separate runs of the same code differed by up to 2 x
 * within minutes; alternating in one process cancels that drift, so a change of a few per cent
 * shows (docs/benchmarks.md, 2026-11-29). Also tells whether both rank alike: every query's hits,
 * scores and total compared.
 *
 * The other checkout needs its dependencies installed; it is read through the modules both have
 * had since the delta was made (shared/search: engine, rank, embedding, bm25f).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Collection, inProcessRanker, type SearchModules, THIS_CHECKOUT } from './collections.ts';

async function modulesOf(root: string): Promise<SearchModules> {
  const load = (path: string) => import(pathToFileURL(join(root, 'shared/search', path)).href);
  const [engine, rank, embedding] = await Promise.all([load('engine.ts'), load('rank.ts'), load('embedding.ts')]);
  return { engine, rank, embedding };
}

/** One query ranked (hybrid, a page of 10): its result as text, to compare between checkouts. */
type Ranker = (query: string) => string;

function rankerOf(m: SearchModules, c: Collection, state: 'fresh' | 'built'): Ranker {
  const ranked = inProcessRanker(m, c, state);
  return (q) => {
    const r = ranked(q, 'hybrid');
    return `${r.total}:${r.hits.map((h) => `${h.doc.id}/${h.score}`).join(',')}`;
  };
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

/**
 * Table rows (markdown) of each collection, state and band: ranking's CPU ms per query here and in
 * `otherRoot`, their ratio, and whether every query ranked alike.
 */
export async function rankingSideBySide(collections: readonly Collection[], otherRoot: string, bands: (c: Collection) => [label: string, queries: string[]][], rounds: number): Promise<string[]> {
  const here = THIS_CHECKOUT;
  const there = await modulesOf(otherRoot);
  const rows = [`| collection | state | queries | ms per query, ${otherRoot} | ms per query, this checkout | this ÷ that | the same hits, scores and totals |`, '|---|---|---|---:|---:|---:|---|'];
  for (const c of collections) {
    for (const state of ['fresh', 'built'] as const) {
      const a = rankerOf(there, c, state);
      const b = rankerOf(here, c, state);
      for (const [label, queries] of bands(c)) {
        // Once each, unmeasured: the compiler's warm-up, and the comparison of their results.
        const same = queries.every((q) => a(q) === b(q));
        const ta: number[] = [];
        const tb: number[] = [];
        for (let r = 0; r < rounds; r++) {
          // Which goes first alternates.
          const order: [Ranker, number[]][] =
            r % 2
              ? [
                  [a, ta],
                  [b, tb],
                ]
              : [
                  [b, tb],
                  [a, ta],
                ];
          for (const [rank, times] of order) {
            const t0 = process.cpuUsage();
            for (const q of queries) rank(q);
            times.push(cpuMs(t0) / queries.length);
          }
        }
        const [ma, mb] = [median(ta), median(tb)];
        rows.push(`| ${c.name} | ${state} | ${label} | ${ma.toFixed(3)} | ${mb.toFixed(3)} | ${(mb / ma).toFixed(3)} | ${same ? 'yes' : '**no**'} |`);
      }
    }
  }
  return rows;
}
