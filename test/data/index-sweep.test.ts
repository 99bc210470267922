import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { WorkMessage, WorkQueue } from '../../shared/queue/messages.ts';
import { sweep } from '../../shared/search/indexer.ts';
import { SEARCH_SETTINGS } from '../../shared/search/settings.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

// The maintenance sweep asks for an index build once the changes since the last one age past
// INDEX_MAX_AGE_SECONDS. Changes made in the build's own second were never counted (it counted from
// the second after), so they stayed beside the index for good: searches scored them as the delta
// and the index status showed them, never folded in (a review, reproducing).

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

describe('the index sweep', () => {
  it("asks for a build once changes age, those of the last build's own second too", async () => {
    // Times in the future (a write is never stamped again for committing early).
    const builtAt = Math.floor(Date.now() / 1000) + 40_000;
    const tenant = 'sweep';
    await db.stores.items.create(tenant, [{ name: 'changed as the build ran' }], builtAt);
    const pointer = new TextEncoder().encode(JSON.stringify({ builtAt, key: 'unused' }));
    const blobs: BlobStore = { get: async () => pointer, put: async () => undefined, delete: async () => undefined };
    const sent: WorkMessage[] = [];
    const queue: WorkQueue = { send: async (_q, messages) => void sent.push(...messages), backlog: async () => 1 };
    const deps = { items: db.stores.items, credentials: { listTenants: async () => [tenant] }, blobs, queue } as unknown as Parameters<typeof sweep>[0];
    const at = builtAt + SEARCH_SETTINGS.maxIndexAgeSeconds;
    expect((await sweep(deps, 60, at - 1)).rebuilds).toEqual([]);
    expect((await sweep(deps, 60, at)).rebuilds).toEqual([tenant]);
    expect(sent).toEqual([{ type: 'build-index', tenant, requested_at: at }]);
  });
});
