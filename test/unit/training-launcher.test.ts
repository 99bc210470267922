import { describe, expect, it } from 'vitest';
import { readConfig } from '../../shared/config.ts';
import { trainingRunId, type TrainingRun } from '../../shared/domain/training-runs.ts';
import { placeRun, runsAsTask, taskToken, UNCONFIRMED_CLAIM_SECONDS, type TaskLauncher } from '../../shared/recs/launcher.ts';
import { queuedRun } from '../helpers/fixtures.ts';

/** One job in memory, with the conditional update of the table (an undefined expectation: absent). */
function fakeConsole(job: TrainingRun) {
  const rec: Record<string, unknown> = { ...job };
  const logs: string[] = [];
  return {
    rec,
    logs,
    async get<T>() {
      return structuredClone(rec) as T;
    },
    async update(_t: string, _k: string, _id: number, set: Record<string, unknown>, expect: Record<string, unknown> = {}) {
      for (const [k, v] of Object.entries(expect)) if (v === undefined ? k in rec : JSON.stringify(rec[k]) !== JSON.stringify(v)) return false;
      Object.assign(rec, set);
      return true;
    },
    async appendLog(_t: string, _id: number, lines: { message: string }[]) {
      logs.push(...lines.map((l) => l.message));
    },
  };
}

const queued = (): TrainingRun => queuedRun(trainingRunId('job-7'), { epochs: 5, batch_size: 256, algorithm: 'auto' }, { job_name: 'job-7', created: 0 });
const events = (latestId: number) => ({ latest: async () => (latestId ? [{ id: latestId, item_id: '1', type: 'view', created: 0, user_id: 'u' }] : []) }) as never;
const launcher = (fail?: string) => {
  const calls: { tenant: string; jobName: string; token: string }[] = [];
  const l: TaskLauncher = {
    runner: 'test',
    async launch(run) {
      calls.push(run);
      if (fail) throw new Error(fail);
      return `task-${calls.length}`;
    },
  };
  return { l, calls };
};

describe('where a training run runs', () => {
  it('decides by the event count: at or above the threshold, a task', () => {
    expect(runsAsTask(0, 500_000)).toBe(false);
    expect(runsAsTask(499_999, 500_000)).toBe(false);
    expect(runsAsTask(500_000, 500_000)).toBe(true);
    expect(runsAsTask(2_000_000, 500_000)).toBe(true);
  });

  it('keeps a small tenant in the worker, untouched', async () => {
    const c = fakeConsole(queued());
    const { l, calls } = launcher();
    expect(await placeRun({ console: c, events: events(99) }, 'acme', 'job-7', { minEvents: 100, launcher: l })).toBe('worker');
    expect(calls).toEqual([]);
    expect(c.rec.task).toBeUndefined();
  });

  it('hands a large tenant to one task, however often the message comes', async () => {
    const c = fakeConsole(queued());
    const { l, calls } = launcher();
    const deps = { console: c, events: events(100) };
    expect(await placeRun(deps, 'acme', 'job-7', { minEvents: 100, launcher: l })).toBe('task');
    expect(await placeRun(deps, 'acme', 'job-7', { minEvents: 100, launcher: l })).toBe('task');
    expect(calls).toEqual([{ tenant: 'acme', jobName: 'job-7', token: taskToken('acme', 'job-7') }]);
    expect(c.rec.task).toMatchObject({ runner: 'test', ref: 'task-1' });
    expect(c.rec.status).toBe('Queued');
    expect(c.logs.join('\n')).toMatch(/Runs as a container task \(test\): about 100 events/);
    // Once the task runs the run (InProgress, then finished), a late message still starts nothing.
    c.rec.status = 'Completed';
    expect(await placeRun(deps, 'acme', 'job-7', { minEvents: 100, launcher: l })).toBe('task');
    expect(calls.length).toBe(1);
  });

  it('starts the task again, with the same token, only when its start was never confirmed', async () => {
    const c = fakeConsole({ ...queued(), task: { runner: 'test', claimed_at: Math.floor(Date.now() / 1000) - UNCONFIRMED_CLAIM_SECONDS - 1 } });
    const { l, calls } = launcher();
    expect(await placeRun({ console: c, events: events(100) }, 'acme', 'job-7', { minEvents: 100, launcher: l })).toBe('task');
    expect(calls.map((x) => x.token)).toEqual([taskToken('acme', 'job-7')]);
    expect(c.rec.task).toMatchObject({ ref: 'task-1' });
    const fresh = fakeConsole({ ...queued(), task: { runner: 'test', claimed_at: Math.floor(Date.now() / 1000) } });
    expect(await placeRun({ console: fresh, events: events(100) }, 'acme', 'job-7', { minEvents: 100, launcher: l })).toBe('task');
    expect(calls.length).toBe(1);
  });

  it('fails the run with the reason when its task cannot start', async () => {
    const c = fakeConsole(queued());
    const { l } = launcher('no capacity');
    expect(await placeRun({ console: c, events: events(100) }, 'acme', 'job-7', { minEvents: 100, launcher: l })).toBe('task');
    expect(c.rec.status).toBe('Failed');
    expect(c.rec.error).toMatch(/could not be started: no capacity/);
  });

  it('leaves a run that is not Queued to the worker (runTraining ends or skips it as before)', async () => {
    const c = fakeConsole({ ...queued(), status: 'Stopping' });
    const { l, calls } = launcher();
    expect(await placeRun({ console: c, events: events(1e9) }, 'acme', 'job-7', { minEvents: 100, launcher: l })).toBe('worker');
    expect(calls).toEqual([]);
  });
});

describe('training settings', () => {
  const base = { TABLE_NAME: 't' };
  it('reads the threshold, validated, with the variable named in the error', () => {
    expect(readConfig(base).training).toEqual({ taskMinEvents: 500_000, task: undefined });
    expect(readConfig({ ...base, TRAINING_TASK_MIN_EVENTS: '50' }).training.taskMinEvents).toBe(50);
    expect(() => readConfig({ ...base, TRAINING_TASK_MIN_EVENTS: 'many' })).toThrow(/TRAINING_TASK_MIN_EVENTS/);
    expect(() => readConfig({ ...base, TRAINING_TASK_MIN_EVENTS: '0' })).toThrow(/TRAINING_TASK_MIN_EVENTS/);
  });

  it('reads the ECS task all or nothing', () => {
    const task = {
      TRAINING_TASK_DEFINITION: 'arn:td',
      TRAINING_TASK_CLUSTER: 'arn:c',
      TRAINING_TASK_CONTAINER: 'train',
      TRAINING_TASK_SUBNETS: 'subnet-1,subnet-2',
      TRAINING_TASK_SECURITY_GROUPS: 'sg-1',
    };
    expect(readConfig({ ...base, ...task }).training.task).toEqual({
      clusterArn: 'arn:c',
      taskDefinitionArn: 'arn:td',
      containerName: 'train',
      subnets: ['subnet-1', 'subnet-2'],
      securityGroups: ['sg-1'],
    });
    expect(() => readConfig({ ...base, ...task, TRAINING_TASK_SUBNETS: '' })).toThrow(/TRAINING_TASK_SUBNETS/);
    expect(() => readConfig({ ...base, ...task, TRAINING_TASK_SUBNETS: 'a,,b' })).toThrow(/TRAINING_TASK_SUBNETS/);
    expect(() => readConfig({ ...base, TRAINING_TASK_DEFINITION: 'arn:td' })).toThrow(/TRAINING_TASK_CLUSTER/);
  });
});
