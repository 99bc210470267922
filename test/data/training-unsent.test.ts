/**
 * A training run stored and sent (`queueRun`, `sendRun`): what a review of the unsent mark found
 * (2026-12-05), each failing before its fix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTraining, type TrainingRun } from '../../shared/domain/training-runs.ts';
import { createTemplate } from '../../shared/domain/templates.ts';
import { createEventType } from '../../shared/domain/event-types.ts';
import { startDueRuns } from '../../shared/domain/automation.ts';
import { sweepTaskRuns } from '../../shared/recs/launcher.ts';
import { templateBody } from '../../shared/schemas/console.ts';
import type { WorkQueue } from '../../shared/queue/messages.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import { nowSeconds } from '../../shared/clock.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

const options = { algorithm: 'popularity' as const, epochs: 5, batch_size: 256 as const, learning_rate: 0.001 };

async function published(c: ConsoleStore, T: string) {
  const type = await createEventType(c, T, { name: 'like', weight: 1 });
  const template = await createTemplate(c, T, templateBody.parse({ name: 't', event_types: [{ id: type.id }], thresholds: { per_signal_min: 1, total_min: 1 } }));
  await c.update(T, 'template', template.id, { status: 'Published' });
  return template;
}

describe("a training run's unsent mark", () => {
  it('a clear of the mark that fails after the message was sent fails neither the run nor the request', async () => {
    const T = 'scratch-clear-throws';
    const real = db.stores.console;
    const template = await published(real, T);
    const sent: unknown[] = [];
    const queue = { send: async (_n: string, m: unknown[]) => void sent.push(...m) } as unknown as WorkQueue;
    // A console whose update of the unsent mark fails once (a throttled UpdateItem).
    let failed = false;
    const c = new Proxy(real, {
      get(target, p, r) {
        if (p === 'update')
          return async (...args: Parameters<ConsoleStore['update']>) => {
            if (!failed && '_unsent_since' in args[3]) {
              failed = true;
              throw new Error('ProvisionedThroughputExceededException');
            }
            return target.update(...args);
          };
        return Reflect.get(target, p, r);
      },
    }) as ConsoleStore;
    // The message went: the run stays Queued for the worker (it was ended Failed, the request a 500).
    expect(await startTraining(c, queue, T, { template_id: template.id, options })).toMatchObject({ status: 'Queued' });
    expect(sent).toHaveLength(1);
    const [run] = await real.list<TrainingRun>(T, 'job');
    expect(run?.status).toBe('Queued');
  });

  it('a scheduled run re-delivered after a crash between storing and sending is sent once, not twice', async () => {
    const T = 'scratch-sched';
    const c = db.stores.console;
    const template = await published(c, T);
    const now = nowSeconds();
    // A pass that claimed the due time and stored the run 200 s ago, then stopped before sending it.
    const id = await c.nextId(T, 'job');
    await c.update(T, 'template', template.id, {
      schedule: { every: 'day', options },
      next_run_at: now + 86_400,
      last_scheduled_run: { job_name: `train-${id}`, due_at: now - 200 },
      _unsent_job: id,
      _unsent_since: now - 200,
    });
    await c.put(T, 'job', {
      id,
      job_name: `train-${id}`,
      template_id: template.id,
      options,
      status: 'Queued',
      progress: 0,
      created: now - 200,
      started_at: null,
      finished_at: null,
      error: null,
      model_version: null,
      metrics: null,
      scheduled_at: now - 200,
      _unsent_since: now - 200,
    });
    const sent: unknown[] = [];
    const queue = { send: async (_n: string, m: unknown[]) => void sent.push(...m) } as unknown as WorkQueue;
    // One maintenance pass: due runs, then the sweep of runs.
    await startDueRuns({ console: c, queue }, T, now);
    await sweepTaskRuns({ console: c, decide: async () => undefined, queue }, T, { runner: 'none', inspect: async () => ({ state: 'running' }) } as never, now);
    expect((await c.get<TrainingRun>(T, 'job', id))?._unsent_since ?? null).toBeNull();
    expect(sent).toHaveLength(1);
  });
});
