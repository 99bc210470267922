import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { buildIndex, embedItem } from '../../shared/search/indexer.ts';
import { tenantView } from '../../shared/search/service.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
let dir: string;
beforeAll(async () => {
  db = await testTable();
  dir = mkdtempSync(join(tmpdir(), 'search-delta-test-'));
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the changes search scores beside the index', () => {
  it('leave out what the build already holds (read again inside its clock-skew margin) and keep every later change', async () => {
    const T = 'delta';
    const { items, events } = db.stores;
    const blobs = new FolderBlobStore(dir);
    const embedder = new HashingEmbedding();
    const now = Math.floor(Date.now() / 1000);
    const created = await items.create(T, [{ name: 'Trail shoe' }, { name: 'Camp stove' }, { name: 'Rain jacket' }], now);
    for (const i of created) await embedItem(items, embedder, T, i.id);
    await buildIndex(items, blobs, embedder.dimensions, T);
    const deps = { items, events, blobs, embedder };
    // Every item changed within the margin, and the build holds each of them as it is now.
    let { index, delta } = await tenantView(deps, T);
    expect(index.docs).toHaveLength(3);
    expect(delta.docs).toEqual([]);
    expect(delta.masked.size).toBe(0);
    // A later change is in the delta, hiding the index's copy.
    const [first, second] = created as [(typeof created)[0], (typeof created)[0]];
    await items.update(T, first.id, { name: 'Trail running shoe' }, now + 1);
    await items.delete(T, second.id, now + 1);
    ({ delta } = await tenantView(deps, T));
    expect(delta.docs.map((d) => [d.id, d.name])).toEqual([[first.id, 'Trail running shoe']]);
    expect([...delta.masked].sort()).toEqual([first.id, second.id].sort());
  });
});
