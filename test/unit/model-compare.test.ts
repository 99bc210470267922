import { describe, expect, it } from 'vitest';
import { betterWhen } from '../../shared/domain/model-versions.ts';

describe('which way a compared measure is better (GET /api/models/compare)', () => {
  it('higher for every ranking measure and coverage that docs/api.md lists, lower for losses and errors, none for the rest', () => {
    // docs/api.md names each of these: a measure left out of the pattern would answer
    // `higher_is_better` and `best` null, or the worst version as the best.
    for (const name of ['ndcg_at_10', 'precision_at_5', 'recall_at_20', 'map_at_10', 'mrr', 'hit_rate', 'auc', 'coverage', 'ndcg', 'recall'])
      expect([name, betterWhen(name)]).toEqual([name, 'higher']);
    for (const name of ['loss', 'val_loss', 'error', 'mean_error', 'rmse', 'train_rmse', 'mae', 'mae_at_10']) expect([name, betterWhen(name)]).toEqual([name, 'lower']);
    for (const name of ['holdout_users', 'interactions', 'factors', 'lambda', 'glossy', 'errors_seen', 'ndcg_mean', 'coverage_at_10']) expect([name, betterWhen(name)]).toEqual([name, null]);
  });
});
