import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestStack, type Api, type TestStack } from '../helpers/stack.ts';

/*
 * Idempotency-Key on the Platform API's creates over real HTTP: a retry with the same key and body
 * is answered the first response and stores nothing; another body is 409; a request refused for
 * its input frees its key. (The key's store, and a retry of an attempt that failed after it wrote:
 * test/data/platform-idempotency.test.ts.)
 */
let t: TestStack;
const P = (m: string, p: string, b?: unknown) => t.demo.platform(m, p, b);
const keyed = (path: string, body: unknown, key: string) => request(t.base, 'POST', path, { body, headers: { authorization: `Bearer ${t.demo.creds.api_key}`, 'idempotency-key': key } });
const created = (r: Api, status = 201) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
};
let run = 0;
let epochs = 0;
/** A name no other test run gives (event type names are lower case, digits and _). */
const unique = (what: string) => `${what}_${Date.now()}_${run++}`;

let contextId: number;
let eventTypeId: number;
let templateId: number;

beforeAll(async () => {
  t = await startTestStack();
  contextId = created(await P('POST', '/api/contexts', { name: unique('ctx') })).id;
  eventTypeId = created(await P('POST', '/api/event-types', { name: unique('like'), weight: 1 })).id;
  templateId = created(await P('POST', '/api/events/templates', { name: unique('tpl'), event_types: [{ id: eventTypeId }], thresholds: { per_signal_min: 1, total_min: 10 } })).id;
  expect((await P('PATCH', `/api/events/templates/${templateId}`, { status: 'Published' })).status).toBe(200);
  for (const endpoint_name of ['idem-a', 'idem-b']) created(await P('POST', '/api/model-endpoints', { endpoint_name }));
});
afterAll(() => t?.stop());

/** Every Platform create that honours the key: its path, a body naming a new record, the list it shows in, and the record's name there. */
const creates: { what: string; path: string; status?: number; body: () => Record<string, unknown>; list: string; name: (r: Record<string, unknown>) => unknown }[] = [
  { what: 'context', path: '/api/contexts', body: () => ({ name: unique('ctx') }), list: '/api/contexts?limit=100', name: (r) => r.name },
  { what: 'event type', path: '/api/event-types', body: () => ({ name: unique('view'), weight: 2 }), list: '/api/event-types?limit=100', name: (r) => r.name },
  {
    what: 'template',
    path: '/api/events/templates',
    body: () => ({ name: unique('tpl'), event_types: [{ id: eventTypeId }], thresholds: { per_signal_min: 1, total_min: 10 } }),
    list: '/api/events/templates?limit=100',
    name: (r) => r.name,
  },
  { what: 'endpoint', path: '/api/model-endpoints', body: () => ({ endpoint_name: unique('ep') }), list: '/api/model-endpoints?limit=100', name: (r) => r.endpoint_name },
  {
    what: 'rule',
    path: '/api/rules',
    body: () => ({ name: unique('rule'), context_id: contextId, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Acme' }], boost: 0 }),
    list: `/api/rules?limit=100`,
    name: (r) => r.name,
  },
  {
    what: 'segment',
    path: '/api/segments',
    body: () => ({ name: unique('seg'), definition: { event_type: 'purchase', min_count: 1, within_days: 30 } }),
    list: '/api/segments?limit=100',
    name: (r) => r.name,
  },
  {
    what: 'experiment',
    path: '/api/experiments',
    body: () => ({
      name: unique('exp'),
      context_id: contextId,
      variants: [
        { name: 'a', endpoint_name: 'idem-a', traffic_percent: 50 },
        { name: 'b', endpoint_name: 'idem-b', traffic_percent: 50 },
      ],
      attribution_window_seconds: 3600,
    }),
    list: '/api/experiments?limit=100',
    name: (r) => r.name,
  },
  { what: 'synonym set', path: '/api/synonyms', body: () => ({ synonyms: [unique('sofa'), unique('couch')] }), list: '/api/synonyms?limit=100', name: (r) => (r.synonyms as string[])[0] },
  {
    what: 'training run',
    path: '/api/training-jobs',
    status: 202,
    // Runs of one template differ by their options: the epochs name this one.
    body: () => ({ template_id: templateId, options: { algorithm: 'popularity', epochs: ++epochs } }),
    list: '/api/training-jobs?limit=100',
    name: (r) => (r.options as { epochs: number }).epochs,
  },
];

/** The records of `list` named as `body` names its record. */
async function named(c: (typeof creates)[number], body: Record<string, unknown>): Promise<unknown[]> {
  const page = created(await P('GET', c.list), 200);
  const want = c.name(body);
  return (page.data as Record<string, unknown>[]).filter((r) => JSON.stringify(c.name(r)) === JSON.stringify(want));
}

describe('Idempotency-Key on the Platform API creates', () => {
  for (const c of creates) {
    it(`${c.what}: a retry is answered the first response (Idempotent-Replayed) and stores nothing; another body under the key is 409`, async () => {
      const key = unique('key');
      const body = c.body();
      const first = await keyed(c.path, body, key);
      created(first, c.status);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await keyed(c.path, body, key);
      created(again, c.status);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await named(c, body)).toHaveLength(1);
      const other = await keyed(c.path, c.body(), key);
      expect(other.status).toBe(409);
      expect(other.body.error).toContain('This Idempotency-Key was used with a different request');
    });
  }

  it('a create refused for its input (a context that does not exist) frees its key for the corrected request', async () => {
    const key = unique('key');
    const rule = { name: unique('rule'), context_id: 987654, conditions: [{ field: 'metadata.brand', op: 'eq', value: 'Acme' }], boost: 0 };
    expect((await keyed('/api/rules', rule, key)).status).toBe(404);
    const fixed = await keyed('/api/rules', { ...rule, context_id: contextId }, key);
    created(fixed);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });

  it('API keys and app clients are not kept under a key (their answer holds a secret): each request creates one', async () => {
    const key = unique('key');
    const a = created(await keyed('/api/api-keys', { name: unique('k'), scopes: ['items'] }, key));
    const b = created(await keyed('/api/api-keys', { name: unique('k'), scopes: ['items'] }, key));
    expect(b.id).not.toBe(a.id);
  });

  it('the OpenAPI document offers the header on exactly the creates that honour it', async () => {
    const doc = created(await request(t.base, 'GET', '/openapi.json'), 200);
    const keyedPaths = Object.entries(doc.paths as Record<string, Record<string, { parameters?: { name?: string; $ref?: string }[] }>>)
      .filter(([, ops]) => (ops.post?.parameters ?? []).some((p) => p.name === 'Idempotency-Key' || /Idempotency/i.test(p.$ref ?? '')))
      .map(([path]) => path)
      .sort();
    expect(keyedPaths).toEqual([...creates.map((c) => c.path), '/v1/events', '/v1/items'].sort());
  });
});
