/**
 * The demo shop's searches: a few hundred Core searches made through Core search's own serving
 * (`serveSearch`, recorded as traffic: search analytics counts them), by the demo's shoppers,
 * as the seed's last step, some followed by a view of a result and fewer by an add to cart and a
 * purchase, each event carrying its search's `request_id`; so that the console's search analytics
 * (`GET /api/analytics/searches`) has top queries, queries without results and click-through to
 * show on a fresh start. They are made now, not spread over the events' past days: a search is
 * counted in the minute it is served, and the analytics' fold never goes back over a minute it
 * has passed.
 */
import { createHash } from 'node:crypto';
import { ingestEvents } from '../domain/events.ts';
import type { IdPlan } from '../domain/types.ts';
import { seededRandom } from '../random.ts';
import { ingestEventsBody } from '../schemas/events.ts';
import { searchBody } from '../schemas/search.ts';
import type { SearchLogStore } from '../search/analytics.ts';
import { serveSearch, type SearchServing } from '../search/core-search.ts';
import { pick, shuffled, weighted, type Random } from './catalog.ts';
import { DemoStopped } from './model.ts';
import type { DemoUser } from './shoppers.ts';
import { CATEGORIES } from './vocabulary.ts';

/** Searched for and not sold by the demo shop: its queries without results. */
export const NOT_SOLD = ['snowboard', 'wetsuit', 'ski goggles', 'ukulele'];

/** One word of `q` with two adjacent letters swapped (a typo search tolerates). */
function typo(rand: Random, q: string): string {
  const words = q.split(' ');
  const i = Math.floor(rand() * words.length);
  const w = words[i] as string;
  if (w.length < 5) return q;
  const at = 1 + Math.floor(rand() * (w.length - 3));
  words[i] = w.slice(0, at) + (w[at + 1] as string) + (w[at] as string) + w.slice(at + 2);
  return words.join(' ');
}

/**
 * The distinct queries the shoppers type, most searched first: product kinds ("trail running
 * shoe"), their last word ("tent"), categories, brands, a few typed with a typo or half typed,
 * and a few things the shop does not sell.
 */
export function demoQueries(rand: Random): string[] {
  const kinds = CATEGORIES.flatMap((c) => c.products.map((p) => p.name.toLowerCase()));
  const lastWords = [...new Set(kinds.map((k) => k.split(' ').pop() as string))];
  const brands = [...new Set(CATEGORIES.flatMap((c) => c.brands))];
  const typed = shuffled(rand, kinds)
    .slice(0, 8)
    .flatMap((k) => [typo(rand, k), k.slice(0, Math.max(4, k.length - 3))]);
  const queries = [...shuffled(rand, [...kinds, ...lastWords.slice(0, 12)]), ...CATEGORIES.map((c) => c.category), ...brands.map((b) => b.toLowerCase()), ...typed];
  // Things not sold come up now and then, not at the top.
  const out = [...new Set(queries)];
  NOT_SOLD.forEach((q, k) => out.splice(6 + 9 * k, 0, q));
  return out;
}

/** The k-th of a list in proportion to 1 / (k + 1) (Zipf): searched, or looked at among results. */
const zipf = <T>(rand: Random, list: readonly T[]): T => weighted(rand, list, (_, k) => 1 / (k + 1));

export interface DemoSearching {
  /** Core search as its handler serves it, recorded as traffic (`traffic` set). */
  serving: SearchServing & { traffic: NonNullable<SearchServing['traffic']> };
  /** Where the follow-up events are attributed to their searches (as the events route does). */
  log: SearchLogStore;
}

export interface DemoSearchSummary {
  searches: number;
  withoutResults: number;
  /** Follow-up events sent with a search's `request_id`, by type. */
  events: Record<'view' | 'add_to_cart' | 'purchase', number>;
}

/** How far the searches got, kept in the seed's record (progress.ts) after each chunk of them. */
export interface DemoSearchProgress {
  /** Searches made (0 to `count`), with their follow-up events in `follow` or stored. */
  made: number;
  without_results: number;
  events: Record<'view' | 'add_to_cart' | 'purchase', number>;
  /**
   * The last chunk's follow-up events while they may not all be stored: their bodies, and the
   * first id their ingest reserved (null: none yet). Stored again under those ids, only the
   * missing rows are written, each attributed to its search once.
   */
  follow: { events: Record<string, unknown>[]; first: number | null } | null;
}

export const newSearchProgress = (): DemoSearchProgress => ({ made: 0, without_results: 0, events: { view: 0, add_to_cart: 0, purchase: 0 }, follow: null });

/** Searches made between two saves of the record: a start stopped in this step makes at most this many again. */
export const SEARCH_CHUNK = 25;

/** Search `i`'s request id, the same at every attempt: a UUID (version 8) from the seed and `i`. */
export function demoRequestId(seed: number, i: number): string {
  const h = createHash('sha256').update(`demo-search/${seed}/${i}`).digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x80;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** The seed of random stream `k` of `seed` (murmur3's finaliser: neighbouring seeds of the generator's LCG start alike). */
function streamSeed(seed: number, k: number): number {
  let h = (Math.imul(seed, 0x9e3779b1) + k) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export interface DemoSearchOptions {
  seed: number;
  /** How many searches in all. */
  count: number;
  /** The time each search is served at. */
  clock: () => number;
  /** Where they got (the seed's record): updated, then `save`d, after each chunk of SEARCH_CHUNK searches. */
  progress: DemoSearchProgress;
  save: () => void;
  /** Stops between two searches (DemoStopped): the next start goes on from the last chunk saved. */
  signal?: AbortSignal | undefined;
  /** Random stream 0 picks the queries, stream i + 1 search i's shopper and what follows it (default: from `seed`). */
  random?: (stream: number) => Random;
}

/**
 * Makes `count` searches as the shoppers would (half of them signed in, so personalised), each
 * followed now and then by a view, an add to cart and a purchase, sent after each chunk of
 * searches. Search i is the same at every attempt (its query, shopper, request id and what
 * follows it), and progress is saved after each chunk: a seed stopped in this step and resumed
 * goes on from the last chunk saved, and a search of the chunk it was in whose request id is
 * recorded already is served again as no traffic (for its results), so search analytics counts
 * each search once. Until 2026-12-05 progress was saved only after every search, each with a new
 * request id: a resumed seed made them all again, and analytics counted them twice. Answers the
 * counts of all `count` searches, those of earlier attempts included.
 */
export async function searchAsShoppers(deps: DemoSearching, tenant: string, users: readonly DemoUser[], opts: DemoSearchOptions): Promise<DemoSearchSummary> {
  const { count, progress: st, save, signal } = opts;
  const random = opts.random ?? ((k: number) => seededRandom(streamSeed(opts.seed, k)));
  const pick0 = random(0);
  const distinct = demoQueries(pick0);
  const queries = Array.from({ length: count }, () => zipf(pick0, distinct));
  const { traffic: _, ...untracked } = deps.serving;
  const ingest = async () => {
    const f = st.follow;
    if (!f) return;
    const ids: IdPlan =
      f.first !== null
        ? { reuse: f.first }
        : {
            reserved: async (first) => {
              f.first = first;
              save();
            },
          };
    await ingestEvents({ events: deps.serving.search.events, exposures: deps.serving.traffic.exposures, searches: deps.log }, tenant, ingestEventsBody.parse(f.events), ids);
    st.follow = null;
    save();
  };
  // An earlier start's last chunk: its events were planned, maybe not all stored.
  await ingest();
  // The searches an earlier start may have made after its last save.
  const unsureTo = Math.min(count, st.made + SEARCH_CHUNK);
  while (st.made < count) {
    const end = Math.min(count, st.made + SEARCH_CHUNK);
    const chunk = { without_results: 0, events: { view: 0, add_to_cart: 0, purchase: 0 } };
    const follow: Record<string, unknown>[] = [];
    for (let i = st.made; i < end; i++) {
      if (signal?.aborted) throw new DemoStopped('stopped');
      const rand = random(i + 1);
      const query = queries[i] as string;
      const user = pick(rand, users);
      const requestId = demoRequestId(opts.seed, i);
      const body = searchBody.parse({ query, limit: 10, ...(rand() < 0.5 ? { user_id: user.id } : {}) });
      // Each search at its own time, as served: search analytics folds a minute once it is past,
      // and a row stamped with the step's start once that minute was folded counted nowhere.
      const now = opts.clock();
      const made = i < unsureTo && (await deps.log.search(tenant, requestId));
      const answer = await serveSearch(made ? untracked : deps.serving, tenant, body, requestId, now);
      const hits = answer.data;
      if (hits.length === 0) {
        chunk.without_results++;
        continue;
      }
      if (rand() >= 0.45) continue;
      // The first results are looked at most.
      const hit = zipf(rand, hits);
      const event = (type: 'view' | 'add_to_cart' | 'purchase', payload: object = {}) => {
        chunk.events[type]++;
        follow.push({ type, user_id: user.id, item_id: hit.id, request_id: requestId, occurred_at: now, ...payload });
      };
      event('view');
      if (rand() >= 0.3) continue;
      event('add_to_cart', { add_to_cart: { quantity: 1 } });
      // A hit may be an item of the tenant's own (made while the seed ran) without a price or currency.
      const { price, currency } = hit.metadata;
      if (rand() < 0.5) event('purchase', { purchase: { ...(price !== undefined ? { amount: price } : {}), ...(currency !== undefined ? { currency } : {}) } });
    }
    st.made = end;
    st.without_results += chunk.without_results;
    for (const t of ['view', 'add_to_cart', 'purchase'] as const) st.events[t] += chunk.events[t];
    st.follow = follow.length ? { events: follow, first: null } : null;
    save();
    await ingest();
  }
  return { searches: st.made, withoutResults: st.without_results, events: { ...st.events } };
}
