import { describe, expect, it, vi } from 'vitest';
import type { AccessClaims } from '../../shared/auth/jwt.ts';
import type { HttpRequest } from '../../shared/http/types.ts';

// The token names its client; each client's tenant is read from the credential store (counted);
// the quota admits every request. What is left is coreAuth's own bookkeeping.
vi.mock('../../shared/auth/jwt.ts', () => ({
  verifyAccessToken: async (token: string): Promise<AccessClaims> => ({ clientId: token, scopes: ['service-api/read'] }),
  keysRetryAfter: () => undefined,
}));
vi.mock('../../shared/data/index.ts', () => ({
  credentialStore: () => ({ getClient: async (clientId: string) => ({ client_id: clientId, tenant: `tenant-of-${clientId}` }) }),
}));
vi.mock('../../shared/http/quota.ts', () => ({ admitRequest: async () => undefined }));

const { coreAuth, TENANT_OF_CLIENTS } = await import('../../shared/http/middleware.ts');

/** A request of the client's token through coreAuth on a route that may overlap the client's read; whether its tenant was known (the route ran beside the read). */
async function overlapped(clientId: string): Promise<boolean> {
  const req = { event: { headers: { authorization: `Bearer ${clientId}` }, requestContext: { http: { method: 'GET' } } }, context: { state: {} } } as unknown as HttpRequest;
  const auth = coreAuth('service-api/read', { overlap: true });
  await auth.before?.(req);
  await auth.after?.(req);
  expect(req.context.state.tenant).toBe(`tenant-of-${clientId}`);
  return req.context.state.authConfirmed !== undefined;
}

describe("coreAuth's cache of each client's tenant", () => {
  it('full, lets go of the least recently used client, not every one: a busy client stays known while one-off clients come and go', async () => {
    expect(await overlapped('busy')).toBe(false);
    let forgotten = 0;
    // As many one-off clients as the cache holds, the busy client's request after each two (so that
    // a one-off client's read, not the busy one's, finds the cache full).
    for (let k = 0; k < TENANT_OF_CLIENTS; k++) {
      await overlapped(`one-off-${k}`);
      if (k % 2 === 1 && !(await overlapped('busy'))) forgotten++;
    }
    // Until 2026-12-07 the cache was emptied whole when full: the busy client was forgotten once here.
    expect(forgotten).toBe(0);
    // The bound holds: the latest one-off client is known, the first was let go.
    expect([await overlapped(`one-off-${TENANT_OF_CLIENTS - 1}`), await overlapped('one-off-0')]).toEqual([true, false]);
  });
});
