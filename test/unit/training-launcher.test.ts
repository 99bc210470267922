import { describe, expect, it, vi } from 'vitest';
import { readConfig } from '../../shared/config.ts';
import { BUSY_RETRIES, trainingRunId, UNSENT_RUN_GRACE_SECONDS, type TrainingRun } from '../../shared/domain/training-runs.ts';
import {
  childProcessLauncher,
  ecsLauncher,
  ownTaskRef,
  placeRun,
  recoverLocalRuns,
  runsAsTask,
  sweepTaskRuns,
  TASK_SWEEP_GRACE_SECONDS,
  taskToken,
  UNCONFIRMED_CLAIM_SECONDS,
  type TaskLauncher,
  type TaskState,
} from '../../shared/recs/launcher.ts';
import { AwsClient } from '../../shared/aws/signed-fetch.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { queuedRun } from '../helpers/fixtures.ts';

/** One job in memory, with the conditional update of the table (an undefined expectation: absent). */
function fakeConsole(job: TrainingRun, models: Record<number, object> = {}) {
  const rec: Record<string, unknown> = { ...job };
  const logs: string[] = [];
  return {
    rec,
    logs,
    async get<T>(_t: string, kind: string, id: number) {
      return (kind === 'model' ? models[id] : structuredClone(rec)) as T;
    },
    async page<T>() {
      return { rows: [structuredClone(rec)] as T[], hasMore: false };
    },
    // As the table's index of runs waiting or running.
    async activeRuns<T>() {
      return (['Queued', 'InProgress', 'Stopping'].includes(String(rec.status)) ? [structuredClone(rec)] : []) as T[];
    },
    async update(_t: string, _k: string, _id: number, set: Record<string, unknown>, expect: Record<string, unknown> = {}) {
      // As the table's conditions: scalars only, `a.b` naming field b of map a.
      for (const [k, v] of Object.entries(expect)) {
        if (v !== null && typeof v === 'object') throw new Error(`a condition on the whole of ${k}`);
        const [head, field] = k.split('.') as [string, string | undefined];
        const held = field === undefined ? rec[head] : (rec[head] as Record<string, unknown> | undefined)?.[field];
        if (v === undefined ? held !== undefined : held !== v) return false;
      }
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
    async inspect() {
      return { state: 'running' };
    },
  };
  return { l, calls };
};

/** The runs a sweep or a restart handed to the auto-promotion decision (ended Completed). */
const decided: string[] = [];
const decide = async (tenant: string, jobName: string) => void decided.push(`${tenant}/${jobName}`);

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

  it("logs 'Training task started' only when the run names the task: not when its claim moved on as it launched", async () => {
    // The task gives the run up at once (a busy service: its claim dropped) before the worker records its id.
    const c = fakeConsole(queued());
    const dropping: TaskLauncher = {
      runner: 'test',
      async launch() {
        Object.assign(c.rec, { task: undefined, _busy_retries: 1, _unsent_since: 1 });
        return 'task-1';
      },
      inspect: async () => ({ state: 'running' }),
    };
    expect(await placeRun({ console: c, events: events(100) }, 'acme', 'job-7', { minEvents: 100, launcher: dropping })).toBe('task');
    expect(c.rec.task).toBeUndefined();
    // Until 2026-12-07 it said so all the same.
    expect(c.logs.filter((l) => l.startsWith('Training task started'))).toEqual([]);
    // The task confirmed its claim with its own id first: the run names it, and the line is written.
    const first = fakeConsole(queued());
    const confirming: TaskLauncher = {
      runner: 'test',
      async launch() {
        Object.assign(first.rec, { task: { ...(first.rec.task as object), ref: 'task-1' } });
        return 'task-1';
      },
      inspect: async () => ({ state: 'running' }),
    };
    expect(await placeRun({ console: first, events: events(100) }, 'acme', 'job-7', { minEvents: 100, launcher: confirming })).toBe('task');
    expect(first.logs.filter((l) => l.startsWith('Training task started'))).toEqual(['Training task started: task-1']);
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

/** A training queue that takes nothing: the sweeps of runs handed to tasks send no message. */
const noQueue = {
  send: async () => {
    throw new Error('no message is sent');
  },
} as never;

describe('the sweep of runs whose container task stopped', () => {
  const now = 1_000_000;
  const claimedAt = now - 30;
  const running = (status: TrainingRun['status'], extra: Partial<TrainingRun> = {}): TrainingRun => ({
    ...queued(),
    status,
    started_at: claimedAt + 5,
    task: { runner: 'test', claimed_at: claimedAt, ref: 'task-1' },
    ...extra,
  });
  const inspecting = (state: TaskState) => {
    const asked: string[] = [];
    const l: TaskLauncher = {
      runner: 'test',
      launch: async () => 'task-1',
      async inspect(ref) {
        asked.push(ref);
        return state;
      },
    };
    return { l, asked };
  };

  it('fails a run whose task stopped, saying what stopped it, and leaves a running one alone', async () => {
    const c = fakeConsole(running('InProgress'));
    const oom = inspecting({ state: 'stopped', reason: 'ECS: OutOfMemoryError: Container killed due to memory usage; exit code 137' });
    expect((await sweepTaskRuns({ console: c, decide, queue: noQueue }, 'acme', oom.l, now)).ended).toEqual(['job-7']);
    expect(c.rec.status).toBe('Failed');
    expect(c.rec.error).toBe(
      'The run was interrupted before it stored a version (its training task stopped: ECS: OutOfMemoryError: Container killed due to memory usage; exit code 137); nothing was stored. Start a new run.',
    );
    expect(c.rec.finished_at).toBeTypeOf('number');
    expect(c.logs).toEqual([`Failed: ${c.rec.error}`]);
    // Ended once: the next pass finds nothing to do.
    expect((await sweepTaskRuns({ console: c, decide, queue: noQueue }, 'acme', oom.l, now + 60)).ended).toEqual([]);

    const alive = fakeConsole(running('InProgress'));
    const ok = inspecting({ state: 'running' });
    expect((await sweepTaskRuns({ console: alive, decide, queue: noQueue }, 'acme', ok.l, now)).ended).toEqual([]);
    expect(ok.asked).toEqual(['task-1']);
    expect(alive.rec.status).toBe('InProgress');
  });

  it('ends a run as far as it got: Completed when its version was stored, Stopped when a stop was asked, Failed when it never started', async () => {
    decided.length = 0;
    const stored = fakeConsole(running('InProgress', { storing_version: 4 }), { 4: { id: 4, version: 4, metrics: { ndcg_at_10: 0.3 } } });
    const gone = inspecting({ state: 'stopped', reason: 'the process exited with code 1' });
    await sweepTaskRuns({ console: stored, decide, queue: noQueue }, 'acme', gone.l, now);
    expect(stored.rec).toMatchObject({ status: 'Completed', model_version: 4, progress: 1, metrics: { ndcg_at_10: 0.3 } });
    expect(stored.logs).toEqual(['Completed: version 4']);
    // Its template's auto-promotion is decided (nothing else would: until 2026-12-04 it never was).
    expect(decided).toEqual(['acme/job-7']);

    const stopping = fakeConsole(running('Stopping'));
    await sweepTaskRuns({ console: stopping, decide, queue: noQueue }, 'acme', gone.l, now);
    expect(stopping.rec.status).toBe('Stopped');
    expect(stopping.logs).toEqual(['Stopped (its training task stopped: the process exited with code 1)']);

    // Claimed and started, but the task died before it took the run up.
    const queuedRun = fakeConsole(running('Queued', { started_at: null }));
    await sweepTaskRuns({ console: queuedRun, decide, queue: noQueue }, 'acme', gone.l, now);
    expect(queuedRun.rec.status).toBe('Failed');
    expect(queuedRun.rec.error).toMatch(/its training task stopped: the process exited with code 1/);
    // Only the Completed one is decided.
    expect(decided).toEqual(['acme/job-7']);
  });

  it('trusts a task its runner no longer knows only once the task had time to start', async () => {
    const missing = inspecting({ state: 'gone', reason: 'ECS no longer knows the task' });
    const young = fakeConsole(running('InProgress'));
    expect((await sweepTaskRuns({ console: young, decide, queue: noQueue }, 'acme', missing.l, claimedAt + TASK_SWEEP_GRACE_SECONDS - 1)).ended).toEqual([]);
    expect(young.rec.status).toBe('InProgress');
    expect((await sweepTaskRuns({ console: young, decide, queue: noQueue }, 'acme', missing.l, claimedAt + TASK_SWEEP_GRACE_SECONDS)).ended).toEqual(['job-7']);
    expect(young.rec.error).toMatch(/ECS no longer knows the task/);
  });

  it("leaves runs without a started task, ended runs, and other runners' tasks alone", async () => {
    const stopped = inspecting({ state: 'stopped', reason: 'x' });
    for (const job of [
      running('InProgress', { task: undefined }),
      running('Queued', { task: { runner: 'test', claimed_at: claimedAt } }),
      running('Completed'),
      running('Failed'),
      running('InProgress', { task: { runner: 'ecs', claimed_at: claimedAt, ref: 'arn:task' } }),
    ]) {
      const c = fakeConsole(job);
      expect((await sweepTaskRuns({ console: c, decide, queue: noQueue }, 'acme', stopped.l, now)).ended).toEqual([]);
      expect(c.rec.status).toBe(job.status);
    }
    expect(stopped.asked).toEqual([]);
  });

  it('sends a run stored Queued whose request stopped before it sent it, once that request had time to, and clears its mark', async () => {
    // Found by a review (2026-12-05): a request stopped between storing the run and sending its
    // message (a timeout, a crash) left it Queued for good: nothing sent it again.
    const sent: { queue: string; body: unknown }[] = [];
    const queue = { send: async (q: string, bodies: unknown[]) => void sent.push(...bodies.map((body) => ({ queue: q, body }))) } as never;
    const stored = now - 60;
    const c = fakeConsole({ ...queued(), _unsent_since: stored });
    const idle = inspecting({ state: 'running' });
    expect(await sweepTaskRuns({ console: c, decide, queue }, 'acme', idle.l, stored + UNSENT_RUN_GRACE_SECONDS - 1)).toEqual({ ended: [], sent: [] });
    expect(sent).toEqual([]);
    expect(await sweepTaskRuns({ console: c, decide, queue }, 'acme', idle.l, stored + UNSENT_RUN_GRACE_SECONDS)).toEqual({ ended: [], sent: ['job-7'] });
    expect(sent).toEqual([{ queue: 'training', body: { type: 'train', tenant: 'acme', job_name: 'job-7' } }]);
    expect(c.rec._unsent_since).toBeNull();
    // Sent once: the next pass leaves it to the worker.
    expect((await sweepTaskRuns({ console: c, decide, queue }, 'acme', idle.l, stored + 600)).sent).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(c.rec.status).toBe('Queued');
  });

  it('keeps the ending the task wrote just before it stopped', async () => {
    const c = fakeConsole(running('InProgress'));
    const l: TaskLauncher = {
      runner: 'test',
      launch: async () => 'task-1',
      async inspect() {
        // The task completes the run, then exits, between the pass's list and its check.
        Object.assign(c.rec, { status: 'Completed', model_version: 9 });
        return { state: 'stopped', reason: 'the process exited with code 0' };
      },
    };
    expect((await sweepTaskRuns({ console: c, decide, queue: noQueue }, 'acme', l, now)).ended).toEqual([]);
    expect(c.rec).toMatchObject({ status: 'Completed', model_version: 9 });
    expect(c.logs).toEqual([]);
  });
});

describe('asking after a task', () => {
  const settings = { clusterArn: 'arn:aws:ecs:eu-west-1:1:cluster/c', taskDefinitionArn: 'arn:td', containerName: 'train', subnets: ['s'], securityGroups: ['g'] };
  const answering = (answer: object) => {
    const sent: { headers: Record<string, string>; body: string }[] = [];
    const client = {
      async send(_m: string, _p: string, init: { headers: Record<string, string>; body: string }) {
        sent.push(init);
        return new Response(JSON.stringify(answer));
      },
    } as unknown as AwsClient;
    return { client, sent };
  };

  it('on ECS: DescribeTasks of the task in the cluster; STOPPED with its reasons, MISSING as gone, else running', async () => {
    const stopped = answering({
      tasks: [
        {
          lastStatus: 'STOPPED',
          stopCode: 'EssentialContainerExited',
          stoppedReason: 'Essential container in task exited',
          containers: [{ exitCode: 137, reason: 'OutOfMemoryError: Container killed due to memory usage' }],
        },
      ],
      failures: [],
    });
    expect(await ecsLauncher(settings, 'eu-west-1', stopped.client).inspect('arn:task/1')).toEqual({
      state: 'stopped',
      reason: 'ECS: Essential container in task exited; exit code 137; OutOfMemoryError: Container killed due to memory usage',
    });
    expect(stopped.sent[0]?.headers['x-amz-target']).toBe('AmazonEC2ContainerServiceV20141113.DescribeTasks');
    expect(JSON.parse(stopped.sent[0]?.body as string)).toEqual({ cluster: settings.clusterArn, tasks: ['arn:task/1'] });
    for (const lastStatus of ['PROVISIONING', 'PENDING', 'RUNNING', 'DEPROVISIONING']) {
      expect(await ecsLauncher(settings, 'eu-west-1', answering({ tasks: [{ lastStatus }] }).client).inspect('arn:task/1')).toEqual({ state: 'running' });
    }
    expect(await ecsLauncher(settings, 'eu-west-1', answering({ tasks: [], failures: [{ arn: 'arn:task/1', reason: 'MISSING' }] }).client).inspect('arn:task/1')).toEqual({
      state: 'gone',
      reason: 'ECS no longer knows the task',
    });
    await expect(ecsLauncher(settings, 'eu-west-1', answering({ tasks: [], failures: [{ reason: 'ACCESS_DENIED' }] }).client).inspect('arn:task/1')).rejects.toThrow(/ACCESS_DENIED/);
  });

  it("on ECS: RunTask hands the task its run and its token (the task starts its run only under that token's claim)", async () => {
    const started = answering({ tasks: [{ taskArn: 'arn:task/9' }] });
    const token = taskToken('acme', 'train-7', 1);
    expect(await ecsLauncher(settings, 'eu-west-1', started.client).launch({ tenant: 'acme', jobName: 'train-7', token })).toBe('arn:task/9');
    const body = JSON.parse(started.sent[0]?.body as string);
    expect(body.clientToken).toBe(token);
    expect(body.overrides.containerOverrides[0].environment).toEqual([
      { name: 'TRAINING_TENANT', value: 'acme' },
      { name: 'TRAINING_JOB_NAME', value: 'train-7' },
      { name: 'TRAINING_TASK_TOKEN', value: token },
    ]);
  });

  it('locally: a process that is there is running, one that is not has stopped', async () => {
    const l = childProcessLauncher();
    expect(await l.inspect(`pid ${process.pid}`)).toEqual({ state: 'running' });
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    expect(await l.inspect(`pid ${child.pid}`)).toEqual({ state: 'running' });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(await l.inspect(`pid ${child.pid}`)).toEqual({ state: 'stopped', reason: 'the process is gone' });
    expect(await l.inspect('task-1')).toEqual({ state: 'gone', reason: 'task-1 names no process' });
  });

  it('locally: a task started by a thread since ended (the training worker at its time limit) has stopped once it exits, though nothing reaped it', async () => {
    // Only the thread that spawned a process reaps it: one whose thread was terminated stays a
    // zombie, which signal 0 still reaches. Until 2026-12-07 it was taken for running for good.
    const thread = new Worker(
      `const { spawn } = require('node:child_process'); const { parentPort } = require('node:worker_threads');
       const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
       c.once('spawn', () => parentPort.postMessage(c.pid)); setInterval(() => {}, 1000);`,
      { eval: true },
    );
    const pid = await new Promise<number>((resolve) => thread.once('message', resolve));
    await thread.terminate();
    const l = childProcessLauncher();
    expect(await l.inspect(`pid ${pid}`)).toEqual({ state: 'running' });
    process.kill(pid, 'SIGKILL');
    let state = await l.inspect(`pid ${pid}`);
    for (let i = 0; i < 50 && state.state === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = await l.inspect(`pid ${pid}`);
    }
    expect(state).toEqual({ state: 'stopped', reason: 'the process is gone (exited)' });
  });
});

describe('training settings', () => {
  const base = { TABLE_NAME: 't', USER_REF_KEY: 'k' };
  it('reads the threshold, validated, with the variable named in the error', () => {
    expect(readConfig(base).training).toEqual({ taskMinEvents: 200_000, task: undefined });
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

describe('a local restart', () => {
  const sent: unknown[] = [];
  const queue = { send: async (_q: string, bodies: unknown[]) => void sent.push(...bodies) } as never;
  it('queues a Queued run again (its message died with the process) and ends a running one as far as it got', async () => {
    decided.length = 0;
    const waiting = fakeConsole(queued());
    expect(await recoverLocalRuns({ console: waiting, queue, decide }, 'acme')).toEqual(['job-7 queued again']);
    expect(sent).toEqual([{ type: 'train', tenant: 'acme', job_name: 'job-7' }]);
    expect(waiting.rec.status).toBe('Queued');

    const running = fakeConsole({ ...queued(), status: 'InProgress', started_at: 1 });
    expect(await recoverLocalRuns({ console: running, queue, decide }, 'acme')).toEqual(['job-7 Failed']);
    expect(running.rec.error).toBe('The run was interrupted before it stored a version (the local server stopped while it ran); nothing was stored. Start a new run.');

    const storing = fakeConsole({ ...queued(), status: 'InProgress', started_at: 1, storing_version: 3 }, { 3: { id: 3, version: 3, metrics: { ndcg_at_10: 0.2 } } });
    expect(await recoverLocalRuns({ console: storing, queue, decide }, 'acme')).toEqual(['job-7 Completed']);
    expect(storing.rec).toMatchObject({ status: 'Completed', model_version: 3 });

    const stopping = fakeConsole({ ...queued(), status: 'Stopping', started_at: 1 });
    expect(await recoverLocalRuns({ console: stopping, queue, decide }, 'acme')).toEqual(['job-7 Stopped']);
    expect(stopping.rec.status).toBe('Stopped');
    // Only the one ended Completed has its template's auto-promotion decided.
    expect(decided).toEqual(['acme/job-7']);
  });

  it('leaves ended runs, and runs held by a container task (the task sweep judges those), alone', async () => {
    sent.length = 0;
    for (const job of [
      { ...queued(), status: 'Completed' as const, model_version: 2 },
      { ...queued(), status: 'InProgress' as const, started_at: 1, task: { runner: 'local-process', claimed_at: 1, ref: '4242' } },
    ]) {
      const c = fakeConsole(job);
      expect(await recoverLocalRuns({ console: c, queue, decide }, 'acme')).toEqual([]);
      expect(c.rec.status).toBe(job.status);
    }
    expect(sent).toEqual([]);
  });
});

describe('an ECS RunTask refused for load', () => {
  const settings = { clusterArn: 'arn:aws:ecs:eu-west-1:1:cluster/c', taskDefinitionArn: 'arn:td', containerName: 'train', subnets: ['s'], securityGroups: ['g'] };
  /** ECS on a local port, answering each RunTask with the next of `answers` (status and body), the last one from then on. */
  async function ecs(answers: [number, object][]) {
    let calls = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const [status, body] = answers[Math.min(calls++, answers.length - 1)] as [number, object];
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new AwsClient(
      { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, region: 'eu-west-1', service: 'ecs' },
      { credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' } },
    );
    return { launcher: ecsLauncher(settings, 'eu-west-1', client), calls: () => calls, close: () => new Promise((r) => server.close(r)) };
  }
  const throttled: [number, object] = [400, { __type: 'ThrottlingException', message: 'Rate exceeded' }];
  const unavailable: [number, object] = [503, { __type: 'ServiceUnavailableException', message: 'Service unavailable' }];

  it('throttled on every attempt: no task started, so the run is sent again for a new task (a busy start), not ended Failed', async () => {
    const e = await ecs([throttled]);
    try {
      const c = fakeConsole(queued());
      expect(await placeRun({ console: c, events: events(100) }, 'acme', 'job-7', { minEvents: 100, launcher: e.launcher })).toBe('task');
      expect(e.calls()).toBe(3);
      // Until 2026-12-07: Failed, "The training task could not be started".
      expect(c.rec).toMatchObject({ status: 'Queued', _busy_retries: 1, _unsent_since: expect.any(Number), error: null });
      expect(c.rec.task).toBeUndefined();
      expect(c.logs.at(-1)).toMatch(
        /^A service the run needs was busy before it started \(ThrottlingException \(HTTP 400\): Rate exceeded\): its start is tried again in a few minutes \(retry 1 of 3\)$/,
      );
      // Past its retries, a throttled start ends it Failed, saying so.
      const spent = fakeConsole({ ...queued(), _busy_retries: BUSY_RETRIES });
      expect(await placeRun({ console: spent, events: events(100) }, 'acme', 'job-7', { minEvents: 100, launcher: e.launcher })).toBe('task');
      expect(spent.rec).toMatchObject({ status: 'Failed', error: expect.stringMatching(/stayed busy \(throttled\)/) });
    } finally {
      await e.close();
    }
  });

  it('unavailable, or throttled only after an attempt that may have started a task: ended Failed as before (a deferral would start a second task)', async () => {
    for (const answers of [[unavailable], [unavailable, throttled]]) {
      const e = await ecs(answers);
      try {
        const c = fakeConsole(queued());
        expect(await placeRun({ console: c, events: events(100) }, 'acme', 'job-7', { minEvents: 100, launcher: e.launcher })).toBe('task');
        expect(e.calls()).toBe(3);
        expect(c.rec).toMatchObject({ status: 'Failed', error: expect.stringMatching(/^The training task could not be started: /) });
      } finally {
        await e.close();
      }
    }
  });
});

describe("a container task's own id (ownTaskRef)", () => {
  const ARN = 'arn:aws:ecs:eu-west-1:123456789012:task/recsearch/0123456789abcdef';
  /** A metadata endpoint answering `answers` in turn (a Response, or a thrown error), counting the asks and noting when each came. */
  const endpoint = (answers: (Response | Error)[]) => {
    const asked: string[] = [];
    const at: number[] = [];
    const fetchTask = (async (url: string | URL | Request) => {
      asked.push(String(url));
      at.push(Date.now());
      const next = answers[asked.length - 1] ?? new Error('no more answers');
      if (next instanceof Error) throw next;
      return next;
    }) as typeof fetch;
    return { asked, at, fetchTask };
  };
  const env = { ECS_CONTAINER_METADATA_URI_V4: 'http://169.254.170.2/v4/abc' };
  /** ownTaskRef's answer, its waits between asks (a second, then two) run on fake timers. */
  const ownTaskRefOnFakeTimers = async (...args: Parameters<typeof ownTaskRef>) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    try {
      let answer: { ref: string | undefined } | undefined;
      void ownTaskRef(...args).then((ref) => {
        answer = { ref };
      });
      for (let waited = 0; answer === undefined && waited < 10_000; waited += 50) await vi.advanceTimersByTimeAsync(50);
      if (!answer) throw new Error('ownTaskRef did not answer within 10 s');
      return answer.ref;
    } finally {
      vi.useRealTimers();
    }
  };

  it('asks the task metadata endpoint again when it fails or answers an error status (the task would hand its run back otherwise)', async () => {
    const { asked, fetchTask } = endpoint([new TypeError('fetch failed'), new Response('busy', { status: 500 }), Response.json({ TaskARN: ARN, Family: 'training' })]);
    // Until 2026-12-08 the first failure answered undefined.
    expect(await ownTaskRefOnFakeTimers(env, fetchTask)).toBe(ARN);
    expect(asked).toEqual(Array(3).fill('http://169.254.170.2/v4/abc/task'));
  });

  it('asks again a second, then two seconds, after a failed ask: a blip at the container start is waited out, not asked through at once', async () => {
    // A draw near 0, as full jitter may draw: the asks then came within milliseconds (until a review on 2026-12-08).
    const random = vi.spyOn(Math, 'random').mockReturnValue(0);
    try {
      const { at, fetchTask } = endpoint([new TypeError('fetch failed'), new TypeError('fetch failed'), Response.json({ TaskARN: ARN })]);
      expect(await ownTaskRefOnFakeTimers(env, fetchTask)).toBe(ARN);
      expect(at).toHaveLength(3);
      const [first, second, third] = at as [number, number, number];
      expect(second - first).toBeGreaterThanOrEqual(1000);
      expect(third - second).toBeGreaterThanOrEqual(2000);
      // Nor longer: a task waits about 3 s at most before it hands its run back.
      expect(third - first).toBeLessThan(3200);
    } finally {
      random.mockRestore();
    }
  });

  it('answers undefined when every ask fails, or the answer names no task; locally, its pid', async () => {
    expect(await ownTaskRefOnFakeTimers(env, endpoint([new TypeError('fetch failed'), new TypeError('fetch failed'), new TypeError('fetch failed')]).fetchTask)).toBeUndefined();
    const noArn = endpoint([Response.json({ Family: 'training' })]);
    expect(await ownTaskRef(env, noArn.fetchTask)).toBeUndefined();
    expect(noArn.asked).toHaveLength(1);
    expect(await ownTaskRef({}, endpoint([]).fetchTask)).toBe(`pid ${process.pid}`);
  });
});
