import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import { setClock } from '../../shared/clock.ts';
import type { EventStore, ItemStore } from '../../shared/domain/types.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { indexStatus, STATUS_TENANTS } from '../../shared/search/status.ts';
import type { SearchDeps } from '../../shared/search/views.ts';

describe("the index status's tally of the changes since each tenant's build, per container", () => {
  let restore = () => {};
  beforeEach(() => {
    restore = setClock({ nowMs: () => 1_700_000_000_000 });
  });
  afterEach(() => restore());

  it('holds STATUS_TENANTS tenants, the least recently asked for let go: a busy tenant lists only what changed since, a forgotten one from its build again', async () => {
    // Each listing's start (s) by tenant: a first tally lists from its build (0, no build here), then the skew window again.
    const listed = new Map<string, number[]>();
    const deps = {
      items: {
        changeKeysSince: async (tenant: string, since: number) => {
          listed.set(tenant, [...(listed.get(tenant) ?? []), since]);
          return [];
        },
        pendingCount: async () => 0,
      } as unknown as ItemStore,
      events: {} as EventStore,
      // No build: each tenant's index is empty (no pointer).
      blobs: { get: async () => undefined } as unknown as BlobStore,
      embedder: new HashingEmbedding(8),
    } as SearchDeps;
    const fromBuild = (tenant: string) => (listed.get(tenant) ?? []).filter((since) => since === 0).length;
    await indexStatus(deps, 'busy');
    // As many other tenants as are held, the busy tenant's status asked for after each.
    for (let k = 0; k < STATUS_TENANTS; k++) {
      await indexStatus(deps, `one-off-${k}`);
      await indexStatus(deps, 'busy');
    }
    expect(fromBuild('busy')).toBe(1);
    // The bound: the first other tenant's tally was let go (listed from its build again), the latest's is held.
    await indexStatus(deps, `one-off-${STATUS_TENANTS - 1}`);
    await indexStatus(deps, 'one-off-0');
    // Until 2026-12-08 every tenant's tally was kept for the container's life (no bound).
    expect([fromBuild(`one-off-${STATUS_TENANTS - 1}`), fromBuild('one-off-0')]).toEqual([1, 2]);
  });
});
