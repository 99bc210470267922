import type { BlobStore } from '../../shared/blob.ts';
import type { TrainingRun } from '../../shared/domain/training-runs.ts';
import type { EventRecord } from '../../shared/domain/types.ts';
import { itemText } from '../../shared/search/embedding.ts';
import type { SearchDoc } from '../../shared/search/types.ts';

/**
 * A training run as the Platform API queues it: run `id`, named `train-<id>`, of template 1, one
 * epoch of `ease` unless `options` says otherwise; `over` sets any other field.
 */
export function queuedRun(id: number, options: Partial<TrainingRun['options']> = {}, over: Partial<TrainingRun> = {}): TrainingRun {
  return {
    id,
    job_name: `train-${id}`,
    template_id: 1,
    options: { epochs: 1, batch_size: 64, learning_rate: 0.001, algorithm: 'ease', ...options },
    status: 'Queued',
    progress: 0,
    created: 1,
    started_at: null,
    finished_at: null,
    error: null,
    model_version: null,
    metrics: null,
    ...over,
  };
}

/**
 * An active search document without metadata, every time 1, its vector `embed`ded from its text
 * as an item's is (`itemText`); `over` sets any other field.
 */
export function searchDoc(embed: (text: string) => Float32Array, id: number, name: string, description = '', over: Partial<SearchDoc> = {}): SearchDoc {
  return { id, name, description, metadata: {}, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: embed(itemText({ name, description, metadata: {} })), ...over };
}

/** A blob store that answers as `base` except for the calls `over` replaces (to count reads, fail one, hold one). */
export function blobsOver(base: BlobStore, over: Partial<BlobStore>): BlobStore {
  return Object.assign(Object.create(base) as BlobStore, over);
}

/**
 * Runs `fn`, and meanwhile, at every turn of the event loop the thread gives other work, calls
 * `onTurn` (a callback that sets itself again with setImmediate until `fn` ends); how many turns.
 */
export async function turnsDuring<T>(fn: () => Promise<T>, onTurn: () => void = () => {}): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const turn = () => {
    if (!running) return;
    turns += 1;
    onTurn();
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { value: await fn(), turns };
  } finally {
    running = false;
  }
}

/**
 * An event as ingest stores it: a click of user u1 on item 1 naming the search or recommendation
 * `requestId`, which happened and was ingested at `created`; `over` sets any other field.
 */
export function storedEvent(id: number, requestId: string, created: number, over: Partial<EventRecord> = {}): EventRecord {
  return { id, type: 'click', user_id: 'u1', item_id: '1', context_id: null, session_id: null, request_id: requestId, placement: null, occurred_at: created, created, extra: {}, ...over };
}

/**
 * A gate a test opens: what awaits `opened` waits until `open()`. `notWaitedFor(p)` is `p`, which
 * must settle while the gate is still closed (else it rejects after 5 s, saying so): it shows that
 * `p` did not wait for what the gate holds back, without a bound on elapsed time that a loaded
 * machine can overrun.
 */
export function gate(): { opened: Promise<void>; open: () => void; notWaitedFor: <T>(p: Promise<T>) => Promise<T> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const notWaitedFor = <T>(p: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('it waited for what the gate holds back (not settled within 5 s, the gate closed)')), 5000);
    });
    return Promise.race([p, late]).finally(() => clearTimeout(timer));
  };
  return { opened, open, notWaitedFor };
}
