import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import type { Endpoint, Job, ModelVersion, Template } from '../../shared/domain/console.ts';
import { allocateIds } from '../../shared/data/counters.ts';
import type { NewEvent } from '../../shared/domain/types.ts';
import { historyOf, unpackModel } from '../../shared/recs/artifact.ts';
import { recommend } from '../../shared/recs/serve.ts';
import { runTraining } from '../../shared/recs/trainer.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { tenantView } from '../../shared/search/service.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
let dir: string;
beforeAll(async () => {
  db = await testTable();
  dir = mkdtempSync(join(tmpdir(), 'training-test-'));
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const T = 'trn';
const ev = (user: string, type: string, item: number): NewEvent => ({
  type, user_id: user, item_id: String(item), context_id: null, session_id: null, request_id: null, placement: null, extra: {},
});

describe('training histories and what serving reads', () => {
  it('the artifact holds every event up to an id, other types weighed as serving weighs them; serving reads only the events after it', async () => {
    const { items, events, console: c } = db.stores;
    const blobs = new FolderBlobStore(dir);
    const now = Math.floor(Date.now() / 1000);
    await items.create(T, Array.from({ length: 7 }, (_, i) => ({ name: `item ${i + 1}` })), now - 2000);
    // Long before training: ids 1-5 (id 3 a view, a type the template does not train on).
    await events.append(T, [ev('u1', 'rating', 1), ev('u1', 'rating', 2), ev('u1', 'view', 3), ev('u2', 'rating', 6), ev('u2', 'rating', 7)], now - 1000);
    // Id 6: handed out to an ingest request still storing it (created within the last 90 s),
    // so training cannot know every event through 7 and 8: serving reads the events after 5.
    await allocateIds(db.table, T, 'event', 1);
    await events.append(T, [ev('u1', 'rating', 4)], now - 70);
    await events.append(T, [ev('u1', 'view', 5)], now);

    await c.put(T, 'event_type', { id: 1, name: 'rating', weight: 1, created: now });
    await c.put(T, 'event_type', { id: 2, name: 'view', weight: 5, created: now });
    const template: Template = { id: 1, name: 'ratings', event_types: [{ id: 1, weight: 2 }], thresholds: { per_signal_min: 0, total_min: 0 }, status: 'Published', created: now, updated_at: now };
    await c.put(T, 'template', template);
    const job: Job = {
      id: 1, job_name: 'train-1', template_id: 1, options: { epochs: 1, batch_size: 64, learning_rate: 0.001, algorithm: 'popularity' }, status: 'Queued', progress: 0,
      created: now, started_at: null, finished_at: null, error: null, model_version: null, metrics: null,
    };
    await c.put(T, 'job', job);
    await runTraining({ console: c, events, items, blobs }, T, 'train-1');
    expect((await c.get<Job>(T, 'job', 1))?.status).toBe('Completed');

    const version = (await c.get<ModelVersion>(T, 'model', 1)) as ModelVersion;
    const artifact = unpackModel((await blobs.get(version.artifact)) as Uint8Array);
    const h = artifact.histories as NonNullable<typeof artifact.histories>;
    expect(h.eventsThrough).toBe(5);
    expect(h.trainedTypes).toEqual(['rating']);
    const row = historyOf(h, 'u1');
    const u1 = new Map(Array.from(row?.items ?? [], (i, k) => [artifact.items[i], row?.weights[k]]));
    // Ratings with the template's weight (2), the old view with its event type's weight (5); the
    // newest view is not in it: serving reads it.
    expect(u1).toEqual(new Map([[1, 2], [2, 2], [3, 5], [4, 2]]));

    const afterIds: (number | undefined)[] = [];
    const deps = {
      console: c,
      blobs,
      events: { ...events, recentByUser: (t: string, u: string, limit: number, after?: number) => (afterIds.push(after), events.recentByUser(t, u, limit, after)) },
      catalog: (t: string) => tenantView({ items, events, blobs, embedder: new HashingEmbedding() }, t),
    };
    const endpoint: Endpoint = { id: 1, endpoint_name: 'main', is_default: true, model_version: 1, created: now, updated_at: now };
    await c.put(T, 'endpoint', endpoint);
    const ids = async () => (await recommend(deps, T, { user_id: 'u1', limit: 5, include_seen: false }, 'req')).data.map((d) => Number(d.item_id));
    // Everything u1 did is seen, from the artifact (1-4) or from the events after it (item 5).
    for (let n = 0; n < 2; n++) {
      const got = await ids();
      expect(got.filter((id) => id <= 5), `request ${n}`).toEqual([]);
      expect(got).toContain(6);
    }
    // The first request read every event and kept those after 5; the next read only those.
    expect(afterIds).toEqual([0, 5]);
    // Without a model the next read starts after 5 again, then is made again from the start.
    await c.update(T, 'endpoint', 1, { model_version: null });
    expect((await ids()).filter((id) => id <= 5)).toEqual([]);
    expect(afterIds).toEqual([0, 5, 5, 0]);
  });
});
