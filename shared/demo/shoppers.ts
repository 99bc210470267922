import { pick, weighted, type CatalogEntry, type Random } from './catalog.ts';
import { CATEGORIES } from './vocabulary.ts';

export const DEMO_EVENT_TYPES = ['view', 'add_to_cart', 'purchase'] as const;
export type DemoEventType = (typeof DEMO_EVENT_TYPES)[number];

/** A shopper's tastes: 1 to 3 categories (strongest first), and in some of them a favourite brand. */
export interface DemoUser {
  id: string;
  categories: string[];
  brands: string[];
}

export interface DemoEvent {
  type: DemoEventType;
  user: string;
  /** Index into the catalog. */
  item: number;
  occurred_at: number;
}

/**
 * The walkthrough's shopper: a coffee lover who also runs (README.md sends it camping). Its taste
 * is fixed, not drawn, and its history is a few sessions in these categories (a short history,
 * so that a few new events show in its recommendations).
 */
export const SHOWCASE_USER: DemoUser = { id: 'u-1', categories: ['coffee', 'running'], brands: ['Roastwright'] };
const SHOWCASE_SESSIONS = ['coffee', 'running', 'coffee', 'coffee'];

/** How a session's category is chosen among a shopper's preferred ones (strongest first). */
const PREFERENCE_WEIGHTS = [0.6, 0.3, 0.1];
/** Share of sessions spent browsing outside the shopper's preferred categories. */
const EXPLORE = 0.08;
/** A favourite brand's items are this much likelier to be looked at. */
const BRAND_BOOST = 5;
const DAY = 86_400;
/** Events span this many days before `now`. */
const SPAN_DAYS = 60;

function drawUser(rand: Random, id: string): DemoUser {
  const count = rand() < 0.4 ? 1 : rand() < 0.67 ? 2 : 3;
  const first = weighted(rand, CATEGORIES, (c) => c.appeal);
  const categories = [first.category];
  while (categories.length < count) {
    // Mostly a related category (runners cycle, coffee lovers cook), sometimes any other.
    const related = first.related.filter((c) => !categories.includes(c));
    const next = related.length && rand() < 0.6 ? pick(rand, related) : weighted(rand, CATEGORIES, (c) => (categories.includes(c.category) ? 0 : c.appeal)).category;
    categories.push(next);
  }
  const brands = categories.flatMap((c) => {
    const spec = CATEGORIES.find((s) => s.category === c);
    return spec && rand() < 0.5 ? [pick(rand, spec.brands)] : [];
  });
  return { id, categories, brands };
}

/** `count` shoppers `u-1` ... `u-<count>`; u-1 is the showcase shopper. */
export function generateUsers(rand: Random, count: number): DemoUser[] {
  const users = [SHOWCASE_USER];
  for (let i = 2; i <= count; i++) users.push(drawUser(rand, `u-${i}`));
  return users.slice(0, count);
}

/**
 * One visit: a category (mostly a preferred one), a few items looked at in it (popular ones and
 * the favourite brand's more often), some put in the cart, some of those bought.
 */
function session(rand: Random, user: DemoUser, byCategory: Map<string, CatalogEntry[]>, start: number, out: DemoEvent[], only?: string): void {
  const explore = only === undefined && rand() < EXPLORE;
  const category = only ?? (explore ? pick(rand, CATEGORIES).category : weighted(rand, user.categories, (c) => PREFERENCE_WEIGHTS[user.categories.indexOf(c)] ?? 0.1));
  const pool = byCategory.get(category) ?? [];
  if (!pool.length) return;
  const views = Math.min(pool.length, 1 + Math.floor(-Math.log(1 - rand()) * 2.2));
  const weight = (e: CatalogEntry) => e.popularity * (user.brands.includes(e.brand) ? BRAND_BOOST : 1);
  const seen = new Set<CatalogEntry>();
  let at = start;
  for (let v = 0; v < views; v++) {
    const item = weighted(rand, pool, (e) => (seen.has(e) ? 0 : weight(e)));
    seen.add(item);
    out.push({ type: 'view', user: user.id, item: item.index, occurred_at: at });
    at += 20 + Math.floor(rand() * 160);
    if (rand() < (explore ? 0.05 : 0.2)) {
      out.push({ type: 'add_to_cart', user: user.id, item: item.index, occurred_at: at });
      at += 10 + Math.floor(rand() * 60);
      if (rand() < 0.45) {
        out.push({ type: 'purchase', user: user.id, item: item.index, occurred_at: at });
        at += 30 + Math.floor(rand() * 120);
      }
    }
  }
}

/**
 * `total` events over the last SPAN_DAYS days before `now`, in time order: the showcase
 * shopper's sessions, one session of every other shopper, then sessions of shoppers chosen by
 * how active they are (a few very active, many occasional). The last session is cut to make the
 * count exact.
 */
export function generateEvents(rand: Random, users: DemoUser[], entries: CatalogEntry[], total: number, now: number): DemoEvent[] {
  const byCategory = new Map<string, CatalogEntry[]>();
  for (const e of entries) {
    let l = byCategory.get(e.category);
    if (!l) byCategory.set(e.category, (l = []));
    l.push(e);
  }
  // Activity: log-normal (some shoppers come back often, most rarely), at most 10 times the median.
  const activity = users.map(() => Math.min(10, Math.exp(0.9 * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()))));
  const cumulative: number[] = [];
  let sum = 0;
  for (const a of activity) cumulative.push((sum += a));
  const drawUser = (): DemoUser => {
    const r = rand() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) > r) hi = mid;
      else lo = mid + 1;
    }
    return users[lo] as DemoUser;
  };
  const start = now - SPAN_DAYS * DAY;
  // Sessions end at least an hour before `now`.
  const sessionStart = () => start + Math.floor(rand() * (SPAN_DAYS * DAY - 3600));
  const events: DemoEvent[] = [];
  const showcase = users.find((u) => u.id === SHOWCASE_USER.id);
  if (showcase) for (const category of SHOWCASE_SESSIONS) session(rand, showcase, byCategory, sessionStart(), events, category);
  // Every shopper visits at least once (while the events last), then the active ones come back.
  for (const u of users) if (u !== showcase && events.length < total) session(rand, u, byCategory, sessionStart(), events);
  while (events.length < total) session(rand, drawUser(), byCategory, sessionStart(), events);
  events.length = Math.min(events.length, total);
  return events.sort((a, b) => a.occurred_at - b.occurred_at || a.user.localeCompare(b.user));
}
