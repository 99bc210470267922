import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowSeconds } from '../../shared/clock.ts';
import { stores } from '../../shared/data/index.ts';
import { taskToken, trainingRunId, type TrainingRun } from '../../shared/domain/training-runs.ts';
import { childProcessLauncher, TASK_ENTRY } from '../../shared/recs/launcher.ts';
import { startTestStack, type TestStack, until } from '../helpers/stack.ts';

/**
 * A run above TRAINING_TASK_MIN_EVENTS (tiny here) goes through the container-task path: locally
 * a child process of the same entry point (functions/workers/train-task.ts), which writes the run's
 * status, logs and version as the worker does; the version then serves.
 */
let t: TestStack;
const P = (m: string, p: string, b?: unknown) => t.demo.platform(m, p, b);
const groups = ['camping', 'baking', 'cycling'] as const;
const byGroup: Record<string, string[]> = {};

beforeAll(async () => {
  t = await startTestStack({ LOCAL_RETRY_DELAY_MS: '50', TRAINING_TASK_MIN_EVENTS: '50' });
  for (const g of groups) {
    const r = await t.demo.core(
      'POST',
      '/v1/items',
      Array.from({ length: 10 }, (_, i) => ({ name: `${g} gear ${i}`, description: `${g} equipment`, metadata: { category: g } })),
    );
    byGroup[g] = r.body.data.map((x: { id: string }) => x.id);
  }
  const events: object[] = [];
  for (let u = 0; u < 30; u++) {
    const mine = byGroup[groups[u % 3] as string] as string[];
    for (let k = 0; k < 6; k++) events.push({ type: 'view', user_id: `u${u}`, item_id: mine[(u + k) % 10] });
  }
  // And an item deleted after its events: every run then looks up the ids taken before its catalog
  // read that the read did not hold (BatchGetItem, under the task's role: a review of 2026-12-06
  // found it not granted, and such a run Failed with AccessDeniedException).
  const gone = (await t.demo.core('POST', '/v1/items', [{ name: 'discontinued gear', description: 'camping equipment', metadata: { category: 'camping' } }])).body.data[0].id;
  events.push({ type: 'view', user_id: 'u0', item_id: gone }, { type: 'view', user_id: 'u3', item_id: gone });
  expect((await t.demo.core('POST', '/v1/events', events)).status).toBe(201);
  expect((await t.demo.core('DELETE', `/v1/items/${gone}`)).status).toBe(200);
}, 60_000);
afterAll(() => t.stop());

describe('a training run above the task threshold', () => {
  it('runs in a child process, completes, serves, and a redelivered message starts no second task', async () => {
    const view = (await P('POST', '/api/event-types', { name: 'view', weight: 1 })).body.id;
    const tpl = await P('POST', '/api/events/templates', { name: 'big', event_types: [{ id: view, weight: 1 }], thresholds: { per_signal_min: 1, total_min: 10 } });
    await P('PATCH', `/api/events/templates/${tpl.body.id}`, { status: 'Published' });
    await P('POST', '/api/model-endpoints', { endpoint_name: 'main', is_default: true });
    const run = await P('POST', '/api/training-jobs', { template_id: tpl.body.id, options: { algorithm: 'ease' } });
    expect(run.status).toBe(202);
    const name = run.body.job_name as string;
    const done = await until(
      () => P('GET', `/api/training-jobs/${name}`),
      (r) => ['Completed', 'Failed', 'Stopped'].includes(r.body.status),
      90_000,
    );
    expect(done.body.status, JSON.stringify(done.body)).toBe('Completed');
    expect(done.body).not.toHaveProperty('task');
    const logs = async () => ((await P('GET', `/api/training-jobs/logs/${name}`)).body.lines as { message: string }[]).map((l) => l.message);
    const lines = await logs();
    expect(lines.join('\n')).toMatch(/Runs as a container task \(child-process\): about 182 events, at least 50/);
    expect(lines.filter((l) => l.startsWith('Training task started: pid ')).length).toBe(1);
    expect(lines.join('\n')).toMatch(/Holdout metrics/);
    expect(lines.join('\n')).toMatch(/Completed: version/);

    // The same message again (SQS delivers at least once): nothing starts, nothing changes.
    await t.stack.workQueue.send('training', [{ type: 'train', tenant: t.stack.credentials.tenant, job_name: name }]);
    await t.stack.workQueue.idle();
    await new Promise((r) => setTimeout(r, 1000));
    expect((await logs()).filter((l) => l.startsWith('Training task started')).length).toBe(1);
    const again = await P('GET', `/api/training-jobs/${name}`);
    expect(again.body.status).toBe('Completed');
    expect(again.body.model_version).toBe(done.body.model_version);

    const version = done.body.model_version as number;
    expect((await P('POST', `/api/models/${version}/approve`)).status).toBe(200);
    expect((await P('POST', `/api/models/${version}/promote`, { endpoint_name: 'main' })).status).toBe(200);
    const recs = await t.demo.core('GET', '/v1/recommendations?user_id=u0&limit=5');
    expect(recs.status).toBe(200);
    expect(recs.body.model?.version).toBe(version);
    // u0 likes camping: the model recommends the camping items u0 has not seen.
    const ids = (recs.body.data as { item_id: string }[]).map((x) => x.item_id);
    expect(ids.filter((id) => (byGroup.camping as string[]).includes(id)).length).toBeGreaterThanOrEqual(3);
  }, 120_000);

  it('a run whose task is killed is ended by the next maintenance pass, saying so, and never completes', async () => {
    const tpl = (await P('GET', '/api/events/templates')).body.data.find((x: { name: string }) => x.name === 'big');
    const run = await P('POST', '/api/training-jobs', { template_id: tpl.id, options: { algorithm: 'ease' } });
    const name = run.body.job_name as string;
    const logs = async () => ((await P('GET', `/api/training-jobs/logs/${name}`)).body.lines as { message: string }[]).map((l) => l.message);
    // Killed as soon as it started (the process is still loading its code; the run cannot have ended).
    const started = await until(logs, (lines) => lines.some((l) => l.startsWith('Training task started: pid ')), 30_000);
    const pid = Number(/^Training task started: pid (\d+)$/.exec(started.find((l) => l.startsWith('Training task started')) ?? '')?.[1]);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(
      async () => alive(),
      (a) => !a,
      10_000,
    );
    expect(alive()).toBe(false);
    await t.stack.maintain();
    const ended = await P('GET', `/api/training-jobs/${name}`);
    expect(ended.body.status).toBe('Failed');
    expect(ended.body.error).toBe('The run was interrupted before it stored a version (its training task stopped: the process is gone); nothing was stored. Start a new run.');
    expect(ended.body.model_version).toBeNull();
    expect((await logs()).at(-1)).toBe(`Failed: ${ended.body.error}`);
    // Another pass changes nothing.
    await t.stack.maintain();
    expect((await P('GET', `/api/training-jobs/${name}`)).body).toEqual(ended.body);
  }, 60_000);

  /**
   * A run Queued under a claim its worker never confirmed (the write of the task's id lost), its
   * message gone: created through the API with the training queue held, then claimed by hand.
   */
  const unconfirmedRun = async () => {
    const tpl = (await P('GET', '/api/events/templates')).body.data.find((x: { name: string }) => x.name === 'big');
    const queue = t.stack.workQueue.queues.get('training');
    queue?.stop();
    try {
      const run = await P('POST', '/api/training-jobs', { template_id: tpl.id, options: { algorithm: 'ease' } });
      expect(run.status).toBe(202);
      queue?.discardPending();
      const name = run.body.job_name as string;
      const claimed = await stores().console.update(
        t.stack.credentials.tenant,
        'job',
        trainingRunId(name),
        { task: { runner: 'child-process', claimed_at: nowSeconds() } },
        { status: 'Queued', task: undefined },
      );
      expect(claimed).toBe(true);
      return name;
    } finally {
      queue?.resume();
    }
  };
  const job = async (name: string) => (await stores().console.get<TrainingRun>(t.stack.credentials.tenant, 'job', trainingRunId(name))) as TrainingRun;

  it('a task started under a claim its worker never confirmed confirms it with its own pid (not an ECS metadata endpoint its stack inherited)', async () => {
    const name = await unconfirmedRun();
    // The stack runs inside an ECS task (a dev or CI container): its task metadata endpoint is in
    // the environment the local task inherits. Until 2026-12-07 the local task asked it (here: refused)
    // and recorded nothing, or that container's ARN, which the local sweep takes for no process.
    process.env.ECS_CONTAINER_METADATA_URI_V4 = 'http://127.0.0.1:9/v4/test';
    let ref: string;
    try {
      // Its claim's token, as placeRun launches it (the task starts only a run its token's attempt claimed).
      ref = await childProcessLauncher().launch({ tenant: t.stack.credentials.tenant, jobName: name, token: taskToken(t.stack.credentials.tenant, name) });
    } finally {
      delete process.env.ECS_CONTAINER_METADATA_URI_V4;
    }
    expect(ref).toMatch(/^pid \d+$/);
    const done = await until(
      () => job(name),
      (j) => ['Completed', 'Failed', 'Stopped'].includes(j.status),
      60_000,
    );
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    // The claim names the task that ran it: the task sweep follows it by that id.
    expect(done.task?.ref).toBe(ref);
  }, 90_000);

  it('a task whose run meets a busy service before it starts queues it again for the pass (deferBusyStart) and exits 0', async () => {
    const name = await unconfirmedRun();
    // The task entry as childProcessLauncher starts it, its start's write throttled.
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const at = (p: string) => fileURLToPath(new URL(p, import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', at('../../local/task-grants.ts'), '--import', at('../helpers/throttle-run-start.ts'), TASK_ENTRY], {
      cwd: root,
      env: { ...process.env, TRAINING_TENANT: t.stack.credentials.tenant, TRAINING_JOB_NAME: name },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stderr).toBe(0);
    const after = await job(name);
    // Still Queued, its claim dropped, marked for the maintenance pass to send again; not left
    // under a claim whose task has exited (the sweep would end it Failed).
    expect(after.status).toBe('Queued');
    expect(after.task).toBeUndefined();
    expect(after._busy_retries).toBe(1);
    expect(after._unsent_since).toEqual(expect.any(Number));
  }, 90_000);
});
