import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TenantClient, startTestStack, type TestStack } from '../helpers/stack.ts';

/*
 * A deleted client's token stays valid (up to an hour) but is refused: 401, and not charged to its
 * former tenant's quota (a container that served the client forgets its tenant then).
 */
let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ TENANT_RATE_PER_SECOND: '1', TENANT_BURST: '6', LOCAL_API_THREADS: '1' });
});
afterAll(() => t.stop());

it("a deleted client's still-valid token cannot use up its former tenant's quota (401s are not charged, docs/api.md)", async () => {
  const r = await t.demo.platform('POST', '/api/clients', { name: `c-${randomUUID()}`, scopes: ['service-api/read'] });
  const leaked = new TenantClient(t.base, { ...t.stack.credentials, client_id: r.body.client_id, client_secret: r.body.client_secret });
  expect((await leaked.core('GET', '/v1/items')).status).toBe(200); // this container learns the client's tenant
  expect((await t.demo.platform('DELETE', `/api/clients/${r.body.client_id}`)).status).toBe(200);
  const after = [];
  for (let i = 0; i < 8; i++) after.push((await leaked.core('GET', '/v1/items')).status);
  expect(new Set(after)).toEqual(new Set([401]));
  // The tenant's live client, well under its quota from its own traffic (one request so far; until 2026-12-04 the 401s used it up: 429).
  const own = await t.demo.core('GET', '/v1/items');
  expect(own.status, JSON.stringify(own.body)).toBe(200);
});
