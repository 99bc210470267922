/**
 * Seeds a tenant with the demo shop through the service's own domain layer (the calls the Core
 * and Platform API handlers make, bodies parsed by their schemas): items, events, a trained,
 * approved and promoted model, a search index build, and the shoppers' searches (searches.ts). Progress is recorded in a file
 * (progress.ts), so a restart resumes an interrupted seed and never repeats a finished one.
 */
import type { ExposureStore } from '../control/exposures.ts';
import type { Stores } from '../data/index.ts';
import { ingestEvents } from '../domain/events.ts';
import { createItems, nowSeconds } from '../domain/items.ts';
import type { IdPlan } from '../domain/types.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { ingestEventsBody, MAX_EVENTS_PER_REQUEST } from '../schemas/events.ts';
import { createItemsBody, MAX_ITEMS_PER_REQUEST } from '../schemas/items.ts';
import { requestIndexBuild } from '../search/status.ts';
import type { DemoItem } from './catalog.ts';
import { DEFAULT_DEMO_SEED, generateDemo, type DemoShop, type DemoSize } from './generate.ts';
import { approveAndPromote, DEMO_ENDPOINT, DemoStopped, pause, setUpTraining, train } from './model.ts';
import { newProgress, readProgress, writeProgress, type DemoProgress } from './progress.ts';
import { newSearchProgress, searchAsShoppers, type DemoSearching, type DemoSearchSummary } from './searches.ts';
import { SHOWCASE_USER, type DemoEvent } from './shoppers.ts';

export interface DemoDeps {
  stores: Stores;
  exposures: ExposureStore;
  queue: WorkQueue;
  tenant: string;
  /** Core search and the search log, for the shoppers' searches (searches.ts). */
  searching: DemoSearching;
}

export interface DemoOptions {
  /** The progress record, `$DATA_DIR/demo.json`. */
  file: string;
  /** One line of progress. */
  log: (line: string) => void;
  /** Stops the seed between two steps (the next start resumes it). */
  signal?: AbortSignal;
  /** How long to wait for the items' embeddings before the search index build (default 60 s). */
  embedWaitMs?: number;
}

export interface DemoSummary {
  items: number;
  users: number;
  events: number;
  modelVersion: number;
  /** The shoppers' searches, an interrupted start's included (none when an earlier start made them all). */
  searches: DemoSearchSummary | undefined;
  seconds: number;
}

/** Event batches stored at once. */
const CONCURRENCY = 3;
/** Shoppers per search the seed makes (3,000 shoppers: 375 searches). */
const SHOPPERS_PER_SEARCH = 8;

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Records that the tenant just created is to be seeded with a shop of this size (call it before
 * the tenant's credentials are handed out, so that a start that stops half way resumes).
 */
export function planDemo(file: string, size: DemoSize, seed = DEFAULT_DEMO_SEED): void {
  writeProgress(file, newProgress(size, seed, nowSeconds()));
}

/** `seeding`: planned and not finished; `done`; `none`: this data directory has no demo seed. */
export function demoStatus(file: string): 'seeding' | 'done' | 'none' {
  return readProgress(file)?.status ?? 'none';
}

function eventBody(e: DemoEvent, item: DemoItem, id: number) {
  const payload = e.type === 'purchase' ? { purchase: { amount: item.metadata.price, currency: item.metadata.currency } } : e.type === 'add_to_cart' ? { add_to_cart: { quantity: 1 } } : {};
  return { type: e.type, user_id: e.user, item_id: String(id), occurred_at: e.occurred_at, ...payload };
}

/**
 * Runs `store` on each batch not done yet, `concurrency` at a time: under the ids an earlier
 * start reserved for it when it has some (only its missing rows are written), else fresh ones,
 * recorded before any row is written.
 */
async function inBatches(
  record: Record<string, { first: number; done: boolean }>,
  batches: number,
  concurrency: number,
  save: () => void,
  store: (b: number, ids: IdPlan) => Promise<unknown>,
  signal: AbortSignal | undefined,
  onDone: () => void,
): Promise<void> {
  let next = 0;
  // Once a batch failed, the other workers take up no new one.
  let failed = false;
  const worker = async () => {
    for (let b = next++; b < batches && !failed; b = next++) {
      if (signal?.aborted) throw new DemoStopped('stopped');
      const key = String(b);
      const had = record[key];
      if (had?.done) continue;
      const ids: IdPlan = had
        ? { reuse: had.first }
        : {
            reserved: async (first) => {
              record[key] = { first, done: false };
              save();
            },
          };
      await store(b, ids).catch((e: unknown) => {
        failed = true;
        throw e;
      });
      (record[key] as { done: boolean }).done = true;
      save();
      onDone();
    }
  };
  // Every worker ended before this answers: one stopped or failed while the others still write,
  // and the stack closes the database once the seed has answered. Until 2026-12-05 the first
  // failure answered at once (Promise.all), under the batches still being written.
  const ended = await Promise.allSettled(Array.from({ length: concurrency }, worker));
  const first = ended.find((r) => r.status === 'rejected');
  if (first) throw first.reason;
}

async function storeItems(deps: DemoDeps, shop: DemoShop, p: DemoProgress, save: () => void, signal?: AbortSignal): Promise<number[]> {
  const batches = Math.ceil(shop.items.length / MAX_ITEMS_PER_REQUEST);
  // One at a time: the ids then follow the catalog's order.
  await inBatches(
    p.items,
    batches,
    1,
    save,
    (b, ids) => {
      const body = createItemsBody.parse(shop.items.slice(b * MAX_ITEMS_PER_REQUEST, (b + 1) * MAX_ITEMS_PER_REQUEST));
      return createItems(deps.stores.items, deps.queue, deps.tenant, body, ids);
    },
    signal,
    () => {},
  );
  return shop.items.map((_, i) => (p.items[String(Math.floor(i / MAX_ITEMS_PER_REQUEST))] as { first: number }).first + (i % MAX_ITEMS_PER_REQUEST));
}

async function storeEvents(deps: DemoDeps, shop: DemoShop, itemIds: number[], p: DemoProgress, save: () => void, log: (line: string) => void, signal?: AbortSignal): Promise<void> {
  const batches = Math.ceil(shop.events.length / MAX_EVENTS_PER_REQUEST);
  const step = Math.max(1, Math.round(batches / 4));
  let stored = Object.values(p.events).filter((b) => b.done).length;
  await inBatches(
    p.events,
    batches,
    CONCURRENCY,
    save,
    (b, ids) => {
      const slice = shop.events.slice(b * MAX_EVENTS_PER_REQUEST, (b + 1) * MAX_EVENTS_PER_REQUEST);
      const body = ingestEventsBody.parse(slice.map((e) => eventBody(e, shop.items[e.item] as DemoItem, itemIds[e.item] as number)));
      return ingestEvents({ events: deps.stores.events, exposures: deps.exposures }, deps.tenant, body, ids);
    },
    signal,
    () => {
      stored++;
      if (stored % step === 0 && stored < batches) log(`${count(Math.min(stored * MAX_EVENTS_PER_REQUEST, shop.events.length))} of ${count(shop.events.length)} events stored`);
    },
  );
}

/** Waits (at most `ms`) for every item to be embedded; answers how many are still waiting. */
async function embedded(deps: DemoDeps, ms: number, signal?: AbortSignal): Promise<number> {
  const end = Date.now() + ms;
  for (;;) {
    const pending = await deps.stores.items.pendingCount(deps.tenant);
    if (pending === 0 || Date.now() > end) return pending;
    await pause(250, signal);
  }
}

/**
 * Seeds (or finishes seeding) the demo shop the progress file describes. Answers its summary,
 * or undefined when stopped by `signal`; throws when a step fails (the next start resumes).
 */
export async function seedDemo(deps: DemoDeps, opts: DemoOptions): Promise<DemoSummary | undefined> {
  const { log, signal } = opts;
  const p = readProgress(opts.file);
  if (!p) throw new Error(`No demo seed is planned (${opts.file} is missing).`);
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const save = () => writeProgress(opts.file, p);
  const shop = generateDemo(p.size, { now: p.now, seed: p.seed });
  const c = deps.stores.console;
  try {
    const resuming = Object.keys(p.items).length > 0;
    log(
      `${resuming ? 'resuming the seed of' : 'seeding'} the demo shop: ${count(shop.items.length)} items, ${count(shop.users.length)} shoppers, ${count(shop.events.length)} events (DEMO=0 starts empty)`,
    );
    const itemIds = await storeItems(deps, shop, p, save, signal);
    log(`${count(shop.items.length)} items stored, embedding in the background (${elapsed()})`);
    await storeEvents(deps, shop, itemIds, p, save, log, signal);
    log(`${count(shop.events.length)} events stored (${elapsed()})`);
    const templateId = await setUpTraining(c, deps.tenant);
    const job = await train(
      c,
      deps.queue,
      deps.tenant,
      templateId,
      p.job_name,
      (name) => {
        p.job_name = name;
        save();
        log(`training ${name} (EASE on view, add_to_cart and purchase events)`);
      },
      signal,
    );
    const version = job.model_version as number;
    log(`${job.job_name} Completed: version ${version}, holdout ndcg@10 ${job.metrics?.ndcg_at_10?.toFixed(3) ?? '?'} (${elapsed()})`);
    await approveAndPromote(c, deps.tenant, version);
    p.model_version = version;
    save();
    log(`version ${version} approved and promoted to endpoint "${DEMO_ENDPOINT}"`);
    const waiting = await embedded(deps, opts.embedWaitMs ?? 60_000, signal);
    await requestIndexBuild(deps.queue, deps.tenant);
    log(waiting ? `${count(waiting)} items still waiting for their embedding; search index build requested` : `every item embedded; search index build requested`);
    let searches: DemoSearchSummary | undefined;
    if (!p.searched) {
      if (signal?.aborted) throw new DemoStopped('stopped');
      const n = Math.max(20, Math.round(shop.users.length / SHOPPERS_PER_SEARCH));
      p.searches ??= newSearchProgress();
      searches = await searchAsShoppers(deps.searching, deps.tenant, shop.users, { seed: p.seed + 1, count: n, clock: nowSeconds, progress: p.searches, save, signal });
      p.searched = true;
      save();
      const e = searches.events;
      log(
        `${count(searches.searches)} searches made as the shoppers would (${count(searches.withoutResults)} without results), ${count(e.view)} followed by a view, ${count(e.add_to_cart)} by an add to cart, ${count(e.purchase)} by a purchase: GET /api/analytics/searches?click_type=view counts them (${elapsed()})`,
      );
    }
    p.status = 'done';
    p.seconds = Math.round((performance.now() - started) / 100) / 10;
    save();
    log(`ready in ${elapsed()}: try GET /v1/recommendations?user_id=${SHOWCASE_USER.id} (README.md walks through it)`);
    return { items: shop.items.length, users: shop.users.length, events: shop.events.length, modelVersion: version, searches, seconds: p.seconds };
  } catch (e) {
    if (e instanceof DemoStopped || signal?.aborted) return undefined;
    throw e;
  }
}
