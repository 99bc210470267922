import type { BlobStore } from '../../shared/blob.ts';
import type { TrainingRun } from '../../shared/domain/training-runs.ts';
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
