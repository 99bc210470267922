import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderBlobStore } from '../../shared/blob.ts';
import type { Endpoint } from '../../shared/domain/endpoints.ts';
import type { TrainingRun } from '../../shared/domain/training-runs.ts';
import type { ModelVersion } from '../../shared/domain/model-versions.ts';
import type { Template } from '../../shared/domain/templates.ts';
import type { NewEvent, RecentEvent } from '../../shared/domain/types.ts';
import { unpackModel } from '../../shared/recs/artifact.ts';
import { recommend, type RecsDeps } from '../../shared/recs/serve.ts';
import { runTraining } from '../../shared/recs/trainer.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { tenantView } from '../../shared/search/views.ts';
import { testTable, type TestTable } from '../helpers/table.ts';
import { queuedRun } from '../helpers/fixtures.ts';

/*
 * Serving and erasure markers: an erased user is personalised neither from a model artifact
 * trained before the erasure ended nor from events created up to it (which an eventually
 * consistent index read may still return), but from later events, and from artifacts trained
 * after it.
 */

let db: TestTable;
let dir: string;
let deps: RecsDeps;
/** Events the user index still returns although they were deleted (an index read lagging behind). */
const stale = new Map<string, RecentEvent[]>();
let trainedBefore: number;
const T = 'ers';
const now = Math.floor(Date.now() / 1000);
const ev = (user: string, item: number): NewEvent => ({ type: 'view', user_id: user, item_id: String(item), context_id: null, session_id: null, request_id: null, placement: null, extra: {} });

beforeAll(async () => {
  db = await testTable();
  dir = mkdtempSync(join(tmpdir(), 'erasure-serving-'));
  const { items, events, console: c } = db.stores;
  const blobs = new FolderBlobStore(dir);
  await items.create(
    T,
    Array.from({ length: 6 }, (_, i) => ({ name: `${i < 3 ? 'tent' : 'oven'} ${i + 1}`, description: i < 3 ? 'camping tent' : 'baking oven' })),
    now - 2000,
  );
  await events.append(T, [ev('u1', 1), ev('u1', 2), ev('u2', 4), ev('u2', 5), ev('u3', 1), ev('u3', 3)], now - 1000);
  await c.put(T, 'event_type', { id: 1, name: 'view', weight: 1, created: now });
  const template: Template = { id: 1, name: 'views', event_types: [{ id: 1, weight: 1 }], thresholds: { per_signal_min: 0, total_min: 0 }, status: 'Published', created: now, updated_at: now };
  await c.put(T, 'template', template);
  const job: TrainingRun = queuedRun(1, { algorithm: 'item_knn' }, { created: now });
  await c.put(T, 'job', job);
  await runTraining({ console: c, events, items, blobs }, T, 'train-1');
  const version = (await c.get<ModelVersion>(T, 'model', 1)) as ModelVersion;
  trainedBefore = (unpackModel((await blobs.get(version.artifact)) as Uint8Array).histories as { trainedBefore: number }).trainedBefore;
  const endpoint: Endpoint = { id: 1, endpoint_name: 'main', is_default: true, model_version: 1, created: now, updated_at: now };
  await c.put(T, 'endpoint', endpoint);
  deps = {
    console: c,
    blobs,
    events: { ...events, recentByUser: async (t: string, u: string, limit: number, after?: number) => [...(stale.get(u) ?? []), ...(await events.recentByUser(t, u, limit, after))] },
    catalog: (t: string) => tenantView({ items, events, blobs, embedder: new HashingEmbedding() }, t),
  };
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const strategy = async (user: string) => (await recommend(deps, T, { user_id: user, limit: 3, include_seen: false, explain: false }, 'req')).strategy;

describe('serving an erased user', () => {
  it('a trained user is personalised from the artifact until an erasure starts, and not while it runs or after it', async () => {
    const other = await strategy('u2');
    expect(await strategy('u1')).toBe('personalized');
    await db.stores.console.putErasure(T, { user_id: 'u1', requested_at: now, completed_at: null });
    expect(await strategy('u1')).toBe('popular');
    await db.stores.console.putErasure(T, { user_id: 'u1', requested_at: now, completed_at: now + 1 });
    expect(await strategy('u1')).toBe('popular');
    // Other users as before.
    expect(await strategy('u2')).toBe(other);
  });

  it('an artifact trained after the erasure ended personalises again (it holds only what came after)', async () => {
    await db.stores.console.putErasure(T, { user_id: 'u3', requested_at: trainedBefore - 10, completed_at: trainedBefore - 5 });
    expect(await strategy('u3')).toBe('personalized');
  });

  it('events created up to the erasure do not personalise, even when an index read still returns them; later ones do', async () => {
    const at = now + 100;
    stale.set('lag', [{ id: 900, item_id: '4', type: 'view', created: at - 1 }]);
    expect(await strategy('lag')).toBe('personalized');
    await db.stores.console.putErasure(T, { user_id: 'lag', requested_at: at - 1, completed_at: at });
    expect(await strategy('lag')).toBe('popular');
    stale.set('lag', [
      { id: 901, item_id: '5', type: 'view', created: at + 1 },
      { id: 900, item_id: '4', type: 'view', created: at - 1 },
    ]);
    expect(await strategy('lag')).toBe('personalized');
  });
});
