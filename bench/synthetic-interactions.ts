import type { Interaction } from '../shared/recs/dataset.ts';
import { seededRandom } from '../shared/random.ts';

/** What `syntheticInteractions` made, and how. */
export interface SyntheticInteractions {
  /** Item ids 1..items (the catalog, the models' index order). */
  universe: number[];
  interactions: Interaction[];
  users: number;
  clusters: number;
}

/** Index of the first cumulative weight above `x` (binary search over a prefix-sum array). */
function pick(cum: Float64Array, from: number, to: number, x: number): number {
  let lo = from;
  let hi = to - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((cum[mid] as number) > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Bench data for training at scale (not product code): `items` items, `eventsPerItem` × items
 * events (default 40: 50,000 items give 2,000,000) from as many users as items, seeded.
 * - Popularity: Zipf-like with exponent `zipf` (default 1) over a random permutation of the
 *   items (popularity does not follow the id), so a few items take much of the traffic and most
 *   have a handful of events.
 * - Taste: every item belongs to one of `clusters` latent clusters (≈ √items / 2), every user
 *   has a home cluster and a second one; 60 % of a user's events pick an item of the home
 *   cluster, 20 % of the second, 20 % anywhere, each by the items' popularity. So co-occurrence
 *   carries real signal beyond popularity.
 * - Activity: each user's share of the events is log-normal (σ 1, at least 2 events); a user
 *   may come back to an item (its events then sum, as repeated plays would).
 * Users are `s<k>`; `at` is a second of one synthetic year, increasing with the event's order.
 */
export function syntheticInteractions(items: number, opts: { eventsPerItem?: number; zipf?: number; seed?: number; clusters?: number } = {}): SyntheticInteractions {
  const rand = seededRandom(opts.seed ?? 2024);
  const events = Math.round(items * (opts.eventsPerItem ?? 40));
  const users = items;
  const clusters = opts.clusters ?? Math.max(4, Math.round(Math.sqrt(items) / 2));
  const s = opts.zipf ?? 1;
  // Popularity rank of each item (a random permutation), and its Zipf weight.
  const rank = Uint32Array.from({ length: items }, (_, i) => i);
  for (let i = items - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = rank[i] as number;
    rank[i] = rank[j] as number;
    rank[j] = t;
  }
  const weight = (i: number) => 1 / ((rank[i] as number) + 1) ** s;
  // Items grouped by cluster (a contiguous range of `byCluster` per cluster), prefix sums of weight.
  const clusterOf = Uint32Array.from({ length: items }, () => Math.floor(rand() * clusters));
  const start = new Uint32Array(clusters + 1);
  for (let i = 0; i < items; i++) start[(clusterOf[i] as number) + 1] = (start[(clusterOf[i] as number) + 1] as number) + 1;
  for (let c = 0; c < clusters; c++) start[c + 1] = (start[c + 1] as number) + (start[c] as number);
  const byCluster = new Uint32Array(items);
  const fill = Uint32Array.from(start.subarray(0, clusters));
  for (let i = 0; i < items; i++) {
    const c = clusterOf[i] as number;
    byCluster[fill[c] as number] = i;
    fill[c] = (fill[c] as number) + 1;
  }
  const clusterCum = new Float64Array(items);
  for (let c = 0; c < clusters; c++) {
    let acc = 0;
    for (let k = start[c] as number; k < (start[c + 1] as number); k++) clusterCum[k] = acc += weight(byCluster[k] as number);
  }
  const globalCum = new Float64Array(items);
  let acc = 0;
  for (let i = 0; i < items; i++) globalCum[i] = acc += weight(i);
  const fromCluster = (c: number) => {
    const a = start[c] as number;
    const b = start[c + 1] as number;
    if (a === b) return Math.floor(rand() * items);
    // Prefix sums restart per cluster: the cluster's total is its last entry.
    return byCluster[pick(clusterCum, a, b, rand() * (clusterCum[b - 1] as number))] as number;
  };
  const anywhere = () => pick(globalCum, 0, items, rand() * acc);

  // Each user's number of events: log-normal shares of the total, at least 2.
  const gauss = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
  const share = Float64Array.from({ length: users }, () => Math.exp(gauss()));
  const sum = share.reduce((a, b) => a + b, 0);
  const counts = Uint32Array.from(share, (x) => Math.max(2, Math.round((x / sum) * events)));
  const interactions: Interaction[] = [];
  const year = 365 * 86_400;
  const total = counts.reduce((a, b) => a + b, 0);
  for (let u = 0; u < users; u++) {
    const home = Math.floor(rand() * clusters);
    const second = Math.floor(rand() * clusters);
    const user = `s${u}`;
    for (let k = 0; k < (counts[u] as number); k++) {
      const r = rand();
      const i = r < 0.6 ? fromCluster(home) : r < 0.8 ? fromCluster(second) : anywhere();
      interactions.push({ user, item: i + 1, weight: 1, at: 1_700_000_000 + Math.floor((interactions.length / total) * year) });
    }
  }
  return { universe: Array.from({ length: items }, (_, i) => i + 1), interactions, users, clusters };
}
