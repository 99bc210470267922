import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import { dynamoItemStore } from '../../shared/data/items.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { NO_FILTER } from '../../shared/search/engine.ts';
import { buildIndex } from '../../shared/search/indexer.ts';
import { runSearch } from '../../shared/search/service.ts';
import { SEARCH_SETTINGS } from '../../shared/search/settings.ts';
import { tenantView } from '../../shared/search/views.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

/*
 * A DELETE of an item writes its tombstone, then removes the row. When the removal is slow, an
 * index build (which reads the rows) or a change to the row (an update, an embedding) can come
 * between the two: once the DELETE has answered, search must not find the item.
 */

let db: TestTable;
let dir: string;
beforeAll(async () => {
  db = await testTable();
  dir = mkdtempSync(join(tmpdir(), 'delete-race-'));
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const until = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms - Date.now())));

/** The search deps of the test table, and an item store whose row removals (DeleteCommand) wait for `release()`. */
function heldRemovals() {
  const blobs = new FolderBlobStore(dir);
  const embedder = new HashingEmbedding();
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  const { doc } = db.table;
  const send = ((cmd: unknown) => (cmd instanceof DeleteCommand ? held : Promise.resolve()).then(() => doc.send(cmd as DeleteCommand))) as typeof doc.send;
  const store = dynamoItemStore({ ...db.table, doc: Object.assign(Object.create(doc) as typeof doc, { send }) });
  const deps = { items: db.stores.items, events: db.stores.events, blobs, embedder };
  const found = async (tenant: string) => (await runSearch(deps, tenant, { query: 'storm lantern', mode: 'keyword', filter: NO_FILTER, limit: 10 })).data.map((i) => i.name);
  return { deps, store, release, found };
}

describe('an item whose row removal commits long after its tombstone', () => {
  it('is not found once its DELETE answered, though an index build read its row in between', async () => {
    const T = 'held-delete';
    const { deps, store, release, found } = heldRemovals();
    const [lantern] = await deps.items.create(T, [{ name: 'Storm lantern' }], Math.floor(Date.now() / 1000));
    await buildIndex(deps.items, deps.blobs, deps.embedder.dimensions, T);
    const stamp = Math.floor(Date.now() / 1000);
    const deleting = store.delete(T, lantern?.id as number, stamp);
    await until((stamp + SEARCH_SETTINGS.skewSeconds + 1) * 1000 + 100);
    // A build starts while the row is still there (its tombstone stamped and committed on time).
    expect((await buildIndex(deps.items, deps.blobs, deps.embedder.dimensions, T)).items).toBe(1);
    release();
    expect(await deleting).toBe(true);
    expect(await found(T)).toEqual([]);
  }, 20_000);

  it('is not found once its DELETE answered, though an update of the row landed in between and a reader applied it', async () => {
    const T = 'held-delete-update';
    const { deps, store, release, found } = heldRemovals();
    await until(Math.ceil(Date.now() / 1000) * 1000 + 50);
    const c = Math.floor(Date.now() / 1000);
    const [lantern] = await deps.items.create(T, [{ name: 'Storm lantern' }], c);
    await until((c + 2) * 1000 + 50);
    const deleting = store.delete(T, lantern?.id as number, c + 2);
    await until((c + 3) * 1000 + 50);
    expect(await deps.items.update(T, lantern?.id as number, { name: 'Storm lantern XL' }, c + 3)).toBeDefined();
    // A container's first read runs now.
    await tenantView(deps, T);
    release();
    expect(await deleting).toBe(true);
    expect(await found(T)).toEqual([]);
  }, 20_000);
});
