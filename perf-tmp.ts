import { syntheticCatalog } from './bench/synthetic.ts';
import { HashingEmbedding, itemText } from './shared/search/embedding.ts';
import { SearchIndex, type SearchDoc } from './shared/search/engine.ts';
import { PreparedDelta, rank } from './shared/search/rank.ts';
const N = Number(process.argv[2] ?? 100000);
const emb = new HashingEmbedding(512);
let t = performance.now();
const cat = syntheticCatalog(N);
const docs: SearchDoc[] = cat.map((c, i) => ({ id: i + 1, name: c.name, description: c.description, metadata: c.metadata, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: emb.embedOne(itemText(c)) }));
console.log('embed', (performance.now() - t).toFixed(0), 'ms');
t = performance.now();
const index = SearchIndex.build(docs, 512);
console.log('build', (performance.now() - t).toFixed(0), 'ms', 'heap', (process.memoryUsage().heapUsed / 2 ** 20).toFixed(0), 'MB', 'rss', (process.memoryUsage().rss / 2 ** 20).toFixed(0));
const delta = new PreparedDelta({ docs: [], masked: new Set() });
const words = ['waterproof jacket', 'red shoe', 'compact camera', 'vintage lamp', 'smart watch', 'foldable chair', 'premium kettle', 'light tent', 'ergonomic drill', 'wireless guitar'];
for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
  const lat: number[] = [];
  for (let r = 0; r < 3; r++) for (const q of words) {
    const t0 = performance.now();
    const qv = emb.embedOne(q, (x) => (index.has(x) ? index.idf(x) : 5));
    const res = rank(index, delta, { query: q, mode, filter: () => true, queryVector: qv, profile: null }, { limit: 20 });
    lat.push(performance.now() - t0);
    if (r === 0 && q === words[0]) console.log(mode, 'total', res.total);
  }
  lat.sort((a, b) => a - b);
  console.log(mode, 'p50', lat[Math.floor(lat.length / 2)]!.toFixed(1), 'max', lat[lat.length - 1]!.toFixed(1));
}
