import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningExperiment, startTestStack, type TestStack } from '../helpers/stack.ts';

/*
 * Event types named like an object's inherited members (`constructor`, `toString`, ...), which the
 * spec's pattern allows: counted by type like any other.
 */
let t: TestStack;
const P = (m: string, p: string, b?: unknown) => t.demo.platform(m, p, b);
let item: string;

beforeAll(async () => {
  t = await startTestStack({ CONTROL_CACHE_MS: '0', CONSOLE_BUILD: 'off' });
  item = (await t.demo.core('POST', '/v1/items', { name: 'Storm lantern', metadata: { category: 'lamps' } })).body.id as string;
});
afterAll(() => t.stop());

// An event type is any `^[a-z][a-z0-9_]{0,63}$`, `constructor` too: the counts keyed by event
// type read Object.prototype's `constructor` (Object) as a count, so one such event made
// experiment results a 500 and search analytics count "function Object() { [native code] }1".
describe('an event of type constructor, attributed by request_id', () => {
  it('counts in experiment results like any other type', async () => {
    for (const name of ['main', 'next']) expect((await P('POST', '/api/model-endpoints', { endpoint_name: name, is_default: name === 'main' })).status).toBe(201);
    const ctx = (await P('POST', '/api/contexts', { name: 'proto' })).body.id as number;
    const exp = await runningExperiment(t.demo, 'proto', ctx, ['main', 'next']);
    const served = await t.demo.core('GET', `/v1/recommendations?user_id=proto-user&context_id=${ctx}`);
    expect(served.status).toBe(200);
    const ev = await t.demo.core('POST', '/v1/events', [{ type: 'constructor', user_id: 'proto-user', item_id: item, request_id: served.body.request_id }]);
    expect(ev.status, JSON.stringify(ev.body)).toBe(201);

    const res = await P('GET', `/api/experiments/${exp}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const variants = res.body.results.variants as { name: string; events: Record<string, { events: number; users_with_event: number }> }[];
    for (const v of variants) {
      const mine = v.name === served.body.experiment.variant;
      expect(v.events.constructor, v.name).toMatchObject({ events: mine ? 1 : 0, users_with_event: mine ? 1 : 0 });
    }
    expect((await P('GET', `/api/experiments?contextId=${ctx}`)).status).toBe(200);
  });

  it('counts in search analytics as a number, also as click_type', async () => {
    const s = await t.demo.core('POST', '/v1/search', { query: 'lantern', mode: 'keyword' });
    expect(s.status).toBe(200);
    expect((await t.demo.core('POST', '/v1/events', [{ type: 'constructor', user_id: 'proto-user', item_id: item, request_id: s.body.request_id }])).status).toBe(201);
    const report = await P('GET', '/api/analytics/searches?click_type=constructor');
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body.totals).toMatchObject({ searches: 1, clicks: 1, click_through_rate: 1, events: { constructor: 1 }, searches_with: { constructor: 1 } });
    expect(report.body.top_queries[0]).toMatchObject({ query: 'lantern', clicks: 1, click_through_rate: 1, events: { constructor: 1 } });
    // Days without it count 0 of it (not Object.prototype's member of that name, left out of the JSON).
    const none = await P('GET', '/api/analytics/searches?from=2020-01-01&to=2020-01-31&click_type=constructor&conversion_type=constructor');
    expect(none.body.totals).toMatchObject({ searches: 0, clicks: 0, conversions: 0, click_through_rate: 0, conversion_rate: 0 });
  });
});
