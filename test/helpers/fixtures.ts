import type { TrainingRun } from '../../shared/domain/training-runs.ts';

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
