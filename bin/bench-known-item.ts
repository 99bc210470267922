/**
 * `npm run bench:known-item [-- ../shared/data] [--queries 300] [--seeds 11,23] [--state built|fresh]`
 *   Known-item search (bench/known-item.ts): per catalog (MovieLens titles, Last.fm artists) and
 *   kind of query (the name as listed, as people know it, its first words, one typo, the last word
 *   half typed, the words reordered, lower case without punctuation), MRR@10 and success@1 of the
 *   service's keyword, semantic and hybrid ranking (in-process) beside both peers of
 *   `bench:search` (MiniSearch, BM25F), `--queries` of each kind per seed, the seeds pooled.
 *   Figures go to bench-results/known-item.json and .md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KNOWN_ITEM_SYSTEMS, knownItemCatalogs, knownItemQueries, mrrAndFirst, rankKnownItems, type KnownItemSystem } from '../bench/known-item.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    queries: { type: 'string', default: '300' },
    seeds: { type: 'string', default: '11,23' },
    state: { type: 'string', default: 'built' },
  },
});
const dataDir = positionals[0] ?? '../shared/data';
const n = Number(values.queries);
const seeds = (values.seeds as string).split(',').map(Number);
const state = values.state === 'fresh' ? 'fresh' : 'built';
if (!Number.isSafeInteger(n) || n < 1 || seeds.some((s) => !Number.isSafeInteger(s))) throw new Error('--queries takes a positive integer, --seeds integers separated by commas');

const fmt = (x: number) => x.toFixed(3);
const lines: string[] = [];
const json: { catalog: string; kind: string; queries: number; systems: Record<KnownItemSystem, { mrr10: number; success1: number }> }[] = [];
for (const catalog of knownItemCatalogs(dataDir)) {
  const rows: { kind: string; ranks: Record<KnownItemSystem, number> }[] = [];
  for (const seed of seeds) {
    const queries = knownItemQueries(catalog.docs, catalog.natural, catalog.hasYear, seed, n);
    const ranks = rankKnownItems(catalog.name, catalog.docs, queries, state);
    queries.forEach((q, i) => rows.push({ kind: q.kind, ranks: ranks[i] as Record<KnownItemSystem, number> }));
  }
  lines.push(`### ${catalog.name} (${catalog.docs.length} items, ${state}, seeds ${seeds.join(', ')})`, '');
  lines.push(`| kind | queries | ${KNOWN_ITEM_SYSTEMS.join(' | ')} | hybrid ÷ stronger peer |`, `|---|---:|${KNOWN_ITEM_SYSTEMS.map(() => '---:').join('|')}|---:|`);
  // The peers run without prefix or typo matching (bench/peers.ts: as configured for the collections),
  // so the two kinds that need them are also left out of a second total.
  const UNMATCHED_BY_PEERS = new Set(['one typo', 'half-typed last word']);
  const NO_TYPO_OR_PREFIX = 'all but one typo and half-typed';
  for (const kind of [...new Set(rows.map((r) => r.kind)), 'all', NO_TYPO_OR_PREFIX]) {
    const of = kind === 'all' ? rows : kind === NO_TYPO_OR_PREFIX ? rows.filter((r) => !UNMATCHED_BY_PEERS.has(r.kind)) : rows.filter((r) => r.kind === kind);
    const systems = Object.fromEntries(KNOWN_ITEM_SYSTEMS.map((s) => [s, mrrAndFirst(of.map((r) => r.ranks[s]))])) as Record<KnownItemSystem, { mrr10: number; success1: number }>;
    json.push({ catalog: catalog.name, kind, queries: of.length, systems });
    const peer = Math.max(systems.MiniSearch.mrr10, systems.BM25F.mrr10);
    const cells = KNOWN_ITEM_SYSTEMS.map((s) => `${fmt(systems[s].mrr10)} / ${fmt(systems[s].success1)}`);
    lines.push(`| ${kind} | ${of.length} | ${cells.join(' | ')} | ${peer > 0 ? (systems.hybrid.mrr10 / peer).toFixed(3) : '-'} |`);
  }
  lines.push('');
}
lines.push(
  'MRR@10 / success@1: the reciprocal rank of the item the query was made from (or one of the same name) in the top 10, and how often it is first. Everything in-process (bench/known-item.ts); the peers run without prefix or typo matching, hence the last row.',
);
const md = lines.join('\n');
mkdirSync('bench-results', { recursive: true });
writeFileSync('bench-results/known-item.json', `${JSON.stringify({ date: new Date().toISOString(), node: process.version, state, seeds, queriesPerKind: n, rows: json }, null, 2)}\n`);
writeFileSync('bench-results/known-item.md', `${md}\n`);
console.log(md);
