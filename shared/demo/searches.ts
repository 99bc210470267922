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
import { randomUUID } from 'node:crypto';
import { ingestEvents } from '../domain/events.ts';
import { ingestEventsBody, MAX_EVENTS_PER_REQUEST } from '../schemas/events.ts';
import { searchBody } from '../schemas/search.ts';
import type { SearchLogStore } from '../search/analytics.ts';
import { serveSearch, type SearchServing } from '../search/core-search.ts';
import { pick, shuffled, weighted, type Random } from './catalog.ts';
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

/**
 * Makes `count` searches as the shoppers would (half of them signed in, so personalised), then
 * sends the views, adds to cart and purchases that followed some of them. Each search gets a new
 * request id: a seed stopped in this step and resumed makes them all again (the first attempt's
 * searches stay counted).
 */
export async function searchAsShoppers(deps: DemoSearching, tenant: string, users: readonly DemoUser[], rand: Random, count: number, clock: () => number): Promise<DemoSearchSummary> {
  const distinct = demoQueries(rand);
  const queries = Array.from({ length: count }, () => zipf(rand, distinct));
  const summary: DemoSearchSummary = { searches: 0, withoutResults: 0, events: { view: 0, add_to_cart: 0, purchase: 0 } };
  const follow: unknown[] = [];
  for (const query of queries) {
    const user = pick(rand, users);
    const requestId = randomUUID();
    const body = searchBody.parse({ query, limit: 10, ...(rand() < 0.5 ? { user_id: user.id } : {}) });
    // Each search at its own time, as served: search analytics folds a minute once it is past,
    // and a row stamped with the step's start once that minute was folded counted nowhere.
    const now = clock();
    const answer = await serveSearch(deps.serving, tenant, body, requestId, now);
    summary.searches++;
    const hits = answer.data;
    if (hits.length === 0) {
      summary.withoutResults++;
      continue;
    }
    if (rand() >= 0.45) continue;
    // The first results are looked at most.
    const hit = zipf(rand, hits);
    const event = (type: 'view' | 'add_to_cart' | 'purchase', payload: object = {}) => {
      summary.events[type]++;
      follow.push({ type, user_id: user.id, item_id: hit.id, request_id: requestId, occurred_at: now, ...payload });
    };
    event('view');
    if (rand() >= 0.3) continue;
    event('add_to_cart', { add_to_cart: { quantity: 1 } });
    // A hit may be an item of the tenant's own (made while the seed ran) without a price or currency.
    const { price, currency } = hit.metadata;
    if (rand() < 0.5) event('purchase', { purchase: { ...(price !== undefined ? { amount: price } : {}), ...(currency !== undefined ? { currency } : {}) } });
  }
  for (let i = 0; i < follow.length; i += MAX_EVENTS_PER_REQUEST) {
    await ingestEvents(
      { events: deps.serving.search.events, exposures: deps.serving.traffic.exposures, searches: deps.log },
      tenant,
      ingestEventsBody.parse(follow.slice(i, i + MAX_EVENTS_PER_REQUEST)),
    );
  }
  return summary;
}
