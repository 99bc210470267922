import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupItems, startTestStack, type TestStack, until } from '../helpers/stack.ts';

/*
 * Training that runs itself (schedules, auto-promotion), version comparison and erasure, over
 * HTTP against the local stack.
 */

let t: TestStack;
const P = (m: string, p: string, b?: unknown, key?: string) => t.demo.platform(m, p, b, key);
const recs = (q: string) => t.demo.core('GET', `/v1/recommendations?${q}`);
const finished = (job: string) =>
  until(
    () => P('GET', `/api/training-jobs/${job}`),
    (r) => ['Completed', 'Failed', 'Stopped'].includes(r.body.status),
    30_000,
  );
const now = () => Math.floor(Date.now() / 1000);

const groups = ['camping', 'baking', 'cycling'] as const;
let byGroup: Record<string, string[]> = {};
let eventTypes: { id: number }[];
let endpoint: string;

/** A Published template of the tenant's event types, with the fields given. */
async function publishedTemplate(name: string, extra: object = {}): Promise<number> {
  const r = await P('POST', '/api/events/templates', { name, event_types: eventTypes, thresholds: { per_signal_min: 1, total_min: 10 }, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect((await P('PATCH', `/api/events/templates/${r.body.id}`, { status: 'Published' })).body.status).toBe('Published');
  return r.body.id;
}
/** The version once its template's policy decided on it (the decision follows the run's Completed). */
const decided = (version: number) =>
  until(
    () => P('GET', `/api/models/${version}`),
    (r) => r.body.promotion !== null,
    30_000,
  ).then((r) => r.body);
async function run(template: number, algorithm: string) {
  const job = await P('POST', '/api/training-jobs', { template_id: template, options: { algorithm } });
  expect(job.status).toBe(202);
  const done = await finished(job.body.job_name);
  expect(done.body.status, JSON.stringify(done.body)).toBe('Completed');
  return done.body.model_version as number;
}

beforeAll(async () => {
  // The stack's own maintenance timer stays out of the way: the tests run the passes.
  t = await startTestStack({ LOCAL_RETRY_DELAY_MS: '50', MAINTENANCE_SECONDS: '3600' });
  byGroup = await createGroupItems(t.demo, groups);
  // 45 users, 15 per taste; each interacts with 6 of the 10 items of their group.
  const events: object[] = [];
  for (let u = 0; u < 45; u++) {
    const mine = byGroup[groups[u % 3] as string] as string[];
    for (let k = 0; k < 6; k++) events.push({ type: k === 0 ? 'purchase' : 'view', user_id: `u${u}`, item_id: mine[(u + k) % 10] });
  }
  expect((await t.demo.core('POST', '/v1/events', events)).status).toBe(201);
  eventTypes = [(await P('POST', '/api/event-types', { name: 'view', weight: 1 })).body, (await P('POST', '/api/event-types', { name: 'purchase', weight: 5 })).body].map((e: { id: number }) => ({
    id: e.id,
  }));
  endpoint = (await P('POST', '/api/model-endpoints', { endpoint_name: 'main', is_default: true })).body.endpoint_name;
}, 60_000);
afterAll(() => t.stop());

describe('template changes', () => {
  it('a PATCH that sends each field as the template holds it changes nothing: 200 with the template as it is, updated_at as it was (Draft and Published)', async () => {
    const made = await P('POST', '/api/events/templates', { name: 'as is', event_types: eventTypes, thresholds: { per_signal_min: 1, total_min: 10 } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.id as number;
    // A second on, so that a write would show in updated_at.
    await new Promise((r) => setTimeout(r, (made.body.updated_at + 1) * 1000 - Date.now() + 50));
    const same = [
      { name: 'as is' },
      { status: 'Draft' },
      { thresholds: { total_min: 10, per_signal_min: 1 } },
      { event_types: eventTypes.map((e) => ({ ...e, weight: 1 })), name: 'as is' },
      { schedule: null, auto_promote: null },
    ];
    for (const body of same) {
      const r = await P('PATCH', `/api/events/templates/${id}`, body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body, JSON.stringify(body)).toEqual(made.body);
    }
    expect((await P('GET', `/api/events/templates/${id}`)).body).toEqual(made.body);
    // A change is one: updated_at moves.
    const published = await P('PATCH', `/api/events/templates/${id}`, { status: 'Published' });
    expect(published.body).toMatchObject({ status: 'Published', updated_at: expect.any(Number) });
    expect(published.body.updated_at).toBeGreaterThan(made.body.updated_at);
    await new Promise((r) => setTimeout(r, (published.body.updated_at + 1) * 1000 - Date.now() + 50));
    for (const body of [{ status: 'Published' }, { status: 'Published', schedule: null }, { auto_promote: null }]) {
      const r = await P('PATCH', `/api/events/templates/${id}`, body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body, JSON.stringify(body)).toEqual(published.body);
    }
  });
});

describe('schedules', () => {
  it('a template takes a schedule (also once Published) and shows its next run; a due run starts once, however many passes overlap', async () => {
    const id = await publishedTemplate('nightly');
    expect((await P('PATCH', `/api/events/templates/${id}`, { schedule: { every: 'fortnightly' } })).status).toBe(400);
    expect((await P('PATCH', `/api/events/templates/${id}`, { schedule: { every: 'daily', every_hours: 3 } })).status).toBe(400);
    const start = now() + 1;
    const set = await P('PATCH', `/api/events/templates/${id}`, { schedule: { every: 'daily', start_at: start, options: { algorithm: 'popularity' } } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ status: 'Published', schedule: { every: 'daily', start_at: start, options: { algorithm: 'popularity' } }, next_run_at: start, last_scheduled_run: null });
    expect((await P('GET', `/api/events/templates/${id}`)).body.next_run_at).toBe(start);
    const before = (await P('GET', '/api/training-jobs')).body.data.length;
    await new Promise((r) => setTimeout(r, Math.max(0, (start + 1) * 1000 - Date.now())));
    await Promise.all([t.stack.maintain(), t.stack.maintain(), t.stack.maintain()]);
    const jobs = (await P('GET', '/api/training-jobs')).body.data.filter((j: { template_id: number }) => j.template_id === id);
    expect(jobs).toHaveLength(1);
    expect((await P('GET', '/api/training-jobs')).body.data.length).toBe(before + 1);
    expect(jobs[0]).toMatchObject({ scheduled_at: start, options: { algorithm: 'popularity' } });
    expect((await P('GET', `/api/events/templates/${id}`)).body).toMatchObject({ next_run_at: start + 86_400, last_scheduled_run: { job_name: jobs[0].job_name, due_at: start } });
    expect((await finished(jobs[0].job_name)).body.status).toBe('Completed');
    // Not due again before tomorrow.
    await t.stack.maintain();
    expect((await P('GET', '/api/training-jobs')).body.data.length).toBe(before + 1);
    expect((await P('PATCH', `/api/events/templates/${id}`, { schedule: null })).body).toMatchObject({ schedule: null, next_run_at: null });
  }, 60_000);
});

let better: number;
let worse: number;

describe('auto-promotion', () => {
  it("is admin's to set, as promotion is: an events key may write templates, not point one at an endpoint", async () => {
    const eventsKey = (await P('POST', '/api/api-keys', { name: 'templates only', scopes: ['events'] })).body.key;
    const policy = { auto_promote: { endpoint_name: 'main', min_factor: 0.001 } };
    const refused = await P('POST', '/api/events/templates', { name: 'sneaky', event_types: eventTypes, ...policy }, eventsKey);
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error).toMatch(/auto_promote .*admin scope/);
    const made = await P('POST', '/api/events/templates', { name: 'plain', event_types: eventTypes }, eventsKey);
    expect(made.status).toBe(201);
    expect((await P('PATCH', `/api/events/templates/${made.body.id}`, policy, eventsKey)).status).toBe(403);
    // Clearing it, or any other change, stays open to the key; admin sets it.
    expect((await P('PATCH', `/api/events/templates/${made.body.id}`, { auto_promote: null }, eventsKey)).status).toBe(200);
    expect((await P('PATCH', `/api/events/templates/${made.body.id}`, policy)).status).toBe(200);
  });

  it('refuses a policy naming an unknown endpoint', async () => {
    const r = await P('POST', '/api/events/templates', { name: 'x', event_types: eventTypes, auto_promote: { endpoint_name: 'nope' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: expect.stringMatching(/nope/) });
  });

  it('promotes a better version at once (approved, automatically), and leaves a worse one Trained with its reason', async () => {
    const id = await publishedTemplate('auto', { auto_promote: { endpoint_name: endpoint, min_factor: 1 } });
    expect((await P('GET', `/api/events/templates/${id}`)).body.auto_promote).toEqual({ endpoint_name: 'main', min_factor: 1 });
    const first = await run(id, 'popularity');
    expect(await decided(first)).toMatchObject({ status: 'Approved', endpoints: ['main'], promotion: { automatic: true, promoted: true, compared_with: null } });
    better = await run(id, 'ease');
    const b = await decided(better);
    expect(b).toMatchObject({ status: 'Approved', endpoints: ['main'], promotion: { automatic: true, promoted: true, endpoint_name: 'main', compared_with: first } });
    expect(b.promotion.reason).toMatch(new RegExp(`^(validation|holdout) nDCG@10 [0-9.]+ >= [0-9.]+ x 1\\.0 of version ${first} serving main$`));
    // It serves from the next request.
    expect((await recs('user_id=u0&limit=5')).body.model).toEqual({ endpoint: 'main', version: better });
    worse = await run(id, 'popularity');
    const w = await decided(worse);
    expect(w).toMatchObject({ status: 'Trained', endpoints: [], promotion: { automatic: true, promoted: false, endpoint_name: 'main', compared_with: better } });
    expect(w.promotion.reason).toMatch(new RegExp(`^(validation|holdout) nDCG@10 [0-9.]+ < [0-9.]+ x 1\\.0 of version ${better} serving main$`));
    expect((await recs('user_id=u0&limit=5')).body.model).toEqual({ endpoint: 'main', version: better });
    // The log line is written just after the decision.
    const line = `Auto-promotion to main: not promoted (${w.promotion.reason})`;
    const messages = (r: { body: { lines: { message: string }[] } }) => r.body.lines.map((l) => l.message);
    const logs = await until(
      () => P('GET', `/api/training-jobs/logs/${w.job_name}`),
      (r) => messages(r).includes(line),
      10_000,
    );
    expect(messages(logs)).toContain(line);
    // A version no policy decided on shows no decision.
    const plain = await run(await publishedTemplate('manual'), 'popularity');
    // ...and a run that chose nothing on a validation split says so (the key was missing until 2026-12-05).
    expect((await P('GET', `/api/models/${plain}`)).body).toMatchObject({ status: 'Trained', promotion: null, validation: null });
  }, 90_000);
});

describe('version comparison', () => {
  it('answers both versions with metrics side by side and the best per metric', async () => {
    const r = await P('GET', `/api/models/compare?versions=${worse},${better}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.versions).toEqual([worse, better]);
    expect(r.body.models.map((m: { version: number }) => m.version)).toEqual([worse, better]);
    expect(r.body.models[1]).toMatchObject({ version: better, algorithm: 'ease', endpoints: ['main'], metrics: { ndcg_at_10: expect.any(Number) } });
    const ndcg = r.body.metrics.find((m: { name: string }) => m.name === 'ndcg_at_10');
    expect(ndcg).toMatchObject({ higher_is_better: true, best: [better] });
    expect(Object.keys(ndcg.values).sort()).toEqual([String(worse), String(better)].sort());
    expect(Array.isArray(r.body.validation)).toBe(true);
    // Reading versions is open to events keys, as listing them is.
    const eventsKey = (await P('POST', '/api/api-keys', { name: 'ev', scopes: ['events'] })).body.key;
    expect((await P('GET', `/api/models/compare?versions=${worse},${better}`, undefined, eventsKey)).status).toBe(200);
  });

  it('404 for versions the tenant does not have, 400 for fewer than 2, more than 10, repeats or junk', async () => {
    const missing = await P('GET', `/api/models/compare?versions=${better},99999`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'No model version 99999.' });
    // Past the largest exact integer: well formed and absent (as /api/models/{version} answers it),
    // each named as sent, never rounded to another version.
    const beyond = await P('GET', `/api/models/compare?versions=${better},99999,99999999999999999999,9007199254740993`);
    expect(beyond.status, JSON.stringify(beyond.body)).toBe(404);
    expect(beyond.body).toEqual({ error: 'No model version 99999, 99999999999999999999, 9007199254740993.' });
    for (const q of [`versions=${better}`, 'versions=1,2,3,4,5,6,7,8,9,10,11', `versions=${better},${better}`, 'versions=a,b', '', `versions=${better},${worse}&x=1`]) {
      expect((await P('GET', `/api/models/compare?${q}`)).status, q).toBe(400);
    }
  });
});

describe('promotion audit trail', () => {
  it("writes each promotion, by hand or automatic, to its endpoint's audit trail (model-endpoints/<id>)", async () => {
    const main = (await P('GET', '/api/model-endpoints')).body.data.find((e: { endpoint_name: string }) => e.endpoint_name === 'main');
    expect((await P('POST', `/api/models/${worse}/approve`)).status).toBe(200);
    expect((await P('POST', `/api/models/${worse}/promote`, { endpoint_name: 'main' })).status).toBe(200);
    // Rolled back by hand to the version the policy promoted.
    expect((await P('POST', `/api/models/${better}/promote`, { endpoint_name: 'main' })).status).toBe(200);
    const trail = await P('GET', `/api/audit?resource=model-endpoints/${main.id}`);
    expect(trail.status, JSON.stringify(trail.body)).toBe(200);
    const served = (x: { model_version: number | null } | null) => x?.model_version ?? null;
    const steps = trail.body.data.map((e: { action: string; before: { model_version: number | null }; after: { model_version: number | null } }) => [e.action, served(e.before), served(e.after)]);
    expect(steps.slice(0, 2)).toEqual([
      ['update', worse, better],
      ['update', better, worse],
    ]);
    // The policy's two promotions (none served, then the first version) come before them.
    expect(steps.slice(2).map((s: unknown[]) => s[2])).toEqual([better, expect.any(Number)]);
    expect(trail.body.data[0]).toMatchObject({ resource: `model-endpoints/${main.id}`, actor: expect.any(String) });
    expect(trail.body.data[2].actor).toMatch(/^auto_promote:templates\/[0-9]+$/);
  });
});

describe('erasure', () => {
  it("deletes the user's events and stops personalising from them at once; again, it deletes nothing; later events personalise", async () => {
    // u0 (camping) is in the serving model's histories.
    const before = await recs('user_id=u0&limit=5');
    expect(before.body).toMatchObject({ model: { version: better }, strategy: 'personalized' });
    expect((await t.demo.core('GET', '/v1/events?user_id=u0&limit=100')).body.data).toHaveLength(6);
    const eventsKey = (await P('POST', '/api/api-keys', { name: 'ev2', scopes: ['events'] })).body.key;
    expect((await P('DELETE', '/api/users/u0', undefined, eventsKey)).status).toBe(403);

    const versions = (await P('GET', '/api/models')).body.data.length;
    expect(versions).toBeGreaterThan(1);
    const erased = await P('DELETE', '/api/users/u0');
    expect(erased.status).toBe(200);
    // Every version was trained on u0's events: each artifact is written again without them.
    expect(erased.body).toEqual({ user_id: 'u0', deleted_events: 6, model_versions_rewritten: versions });
    expect((await t.demo.core('GET', '/v1/events?user_id=u0&limit=100')).body.data).toEqual([]);
    expect((await t.demo.core('GET', '/v1/events?limit=100')).body.data.some((e: { user_id: string }) => e.user_id === 'u0')).toBe(false);
    // The served model (as a warm container loaded it, with u0's history) no longer personalises from it.
    const after = await recs('user_id=u0&limit=5');
    expect(after.body).toMatchObject({ model: { version: better }, strategy: 'popular' });
    // Other users are as they were.
    expect((await recs('user_id=u3&limit=5')).body.strategy).toBe('personalized');
    expect(await P('DELETE', '/api/users/u0')).toMatchObject({ status: 200, body: { user_id: 'u0', deleted_events: 0, model_versions_rewritten: 0 } });
    expect(await P('DELETE', '/api/users/nobody')).toMatchObject({ status: 200, body: { user_id: 'nobody', deleted_events: 0 } });

    // Events sent after the erasure personalise as usual, at once (also within the second it ended in).
    expect((await t.demo.core('POST', '/v1/events', [{ type: 'purchase', user_id: 'u0', item_id: (byGroup.baking as string[])[0] }])).status).toBe(201);
    const again = await recs('user_id=u0&limit=5');
    expect(again.body.strategy).toBe('personalized');
    expect(again.body.data.filter((x: { item: { metadata: { category: string } } }) => x.item.metadata.category === 'baking').length).toBeGreaterThanOrEqual(3);
  });
});
