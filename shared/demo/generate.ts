/**
 * The demo shop, generated in code: a catalog, shoppers with coherent tastes and their events,
 * the same every time for the same size, seed and `now` (shared/random.ts).
 */
import { seededRandom } from '../random.ts';
import { generateCatalog, type DemoItem } from './catalog.ts';
import { generateEvents, generateUsers, type DemoEvent, type DemoUser } from './shoppers.ts';

export interface DemoSize {
  items: number;
  users: number;
  events: number;
}

/** `full`: what `npm start` seeds; `small`: the same shop in miniature, for tests. */
export const DEMO_SIZES = {
  full: { items: 420, users: 3000, events: 40_000 },
  small: { items: 96, users: 200, events: 3_000 },
} as const satisfies Record<string, DemoSize>;

export const DEFAULT_DEMO_SEED = 21;

export interface DemoShop {
  items: DemoItem[];
  users: DemoUser[];
  /** In time order; `item` indexes `items`. */
  events: DemoEvent[];
}

export function generateDemo(size: DemoSize, opts: { now: number; seed?: number }): DemoShop {
  const rand = seededRandom(opts.seed ?? DEFAULT_DEMO_SEED);
  const { items, entries } = generateCatalog(rand, size.items);
  const users = generateUsers(rand, size.users);
  const events = generateEvents(rand, users, entries, size.events, opts.now);
  return { items, users, events };
}
