import type { TableRef } from '../data/client.ts';
import { blobs } from '../blob.ts';
import { controlDepsOf } from '../control/deps.ts';
import { dynamoExposureStore } from '../data/experiments.ts';
import { storesFor } from '../data/index.ts';
import { dynamoSearchLogStore } from '../data/search-analytics.ts';
import { synonymSetsOf } from '../data/synonyms.ts';
import { embeddingProvider } from '../search/providers.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { demoStatus, planDemo, seedDemo, type DemoSummary } from './seed.ts';
import { errorMessage } from '../domain/errors.ts';

export interface DemoRun {
  /** The seed's summary once it finished; undefined when it was stopped or failed (and said so). */
  done: Promise<DemoSummary | undefined>;
  /**
   * Stops the seed and waits for it (the next start resumes it): between two steps, and, when its
   * table was made with the stop's signal (`startDemo`'s `table` as a function), its database
   * calls in flight are cut and none sent after.
   */
  stop(): Promise<void>;
}

/** The stack plans the demo (seed.ts) before it writes the tenant's credentials. */
export { planDemo };

/**
 * The local stack's demo shop: seeded in the background now if planned (`planDemo`, when the
 * tenant was created) and not finished (a start that stopped half way is resumed), else nothing.
 * Failures are reported through `log`, not thrown: the stack runs on.
 */
export function startDemo(opts: {
  /**
   * The table the seed writes, or (the local stack) one made with the seed's stop signal
   * (`makeTable`'s `signal`): stopped, its calls in flight end then, and it sends none after. Until
   * 2026-12-07 the seed stopped only between steps, and one held in a call the stack's close
   * stopped waiting for (30 s) went on after the data folder's lock was released.
   */
  table: TableRef | ((signal: AbortSignal) => TableRef);
  queue: WorkQueue;
  tenant: string;
  file: string;
  log: (line: string) => void;
}): DemoRun | undefined {
  const { log, file } = opts;
  let status: ReturnType<typeof demoStatus>;
  try {
    status = demoStatus(file);
  } catch (e) {
    // Reported, not thrown (until 2026-12-05 a demo.json cut short stopped `npm start`): the
    // stack runs on without the demo.
    const message = errorMessage(e);
    setImmediate(() => log(`demo: not seeded: ${message}`));
    return undefined;
  }
  if (status !== 'seeding') {
    // After the stack's start is reported.
    if (status === 'done') setImmediate(() => log(`demo: the demo shop was seeded on an earlier start (${file})`));
    return undefined;
  }
  const abort = new AbortController();
  const table = typeof opts.table === 'function' ? opts.table(abort.signal) : opts.table;
  const stores = storesFor(table);
  const exposures = dynamoExposureStore(table);
  const searchLog = dynamoSearchLogStore(table);
  const serving = {
    search: { items: stores.items, events: stores.events, blobs: blobs(), embedder: embeddingProvider() },
    control: controlDepsOf(stores),
    synonymSets: (tenant: string) => synonymSetsOf(table, tenant),
    traffic: { exposures, recorder: searchLog, authorized: Promise.resolve() },
  };
  const deps = { stores, exposures, queue: opts.queue, tenant: opts.tenant, searching: { serving, log: searchLog } };
  // From the next turn of the event loop: the stack's start is reported first.
  const done = new Promise((r) => setImmediate(r))
    .then(() => seedDemo(deps, { file, log: (line) => log(`demo: ${line}`), signal: abort.signal }))
    .catch((e: unknown) => {
      log(`demo: seeding failed: ${errorMessage(e)}. The next start resumes it (or remove the data directory to start afresh).`);
      return undefined;
    });
  return {
    done,
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}
