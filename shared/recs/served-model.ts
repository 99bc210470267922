/** What a recommendation request reads of the serving side: the endpoint's model (loaded once) and the tenant's serving config. */
import type { BlobStore } from '../blob.ts';
import type { ConsoleStore, ErasedUser } from '../domain/console-records.ts';
import type { Endpoint } from '../domain/endpoints.ts';
import type { EventType } from '../domain/event-types.ts';
import type { ModelVersion } from '../domain/model-versions.ts';
import type { EventStore } from '../domain/types.ts';
import { SharedCalls } from '../concurrency.ts';
import { config } from '../config.ts';
import { freshReads } from '../fresh-read.ts';
import { Lru } from '../lru.ts';
import { logger } from '../observability.ts';
import { topIndexes } from '../top-k.ts';
import { unpackModelInTurns, type ModelArtifact } from './artifact.ts';
import { trendingScores, type PopularitySnapshots } from './trending.ts';

/** A loaded model with what every request derives from it, computed once. */
export type ServedModel = ModelArtifact & { itemIndex: Map<number, number>; popular: Map<number, number> };

/**
 * Cache: loaded models by tenant and version, the least recently served let go first. Bound:
 * MODELS_KEPT models, and what `MODEL_SETTINGS.memoryBytes` holds by each one's estimate
 * (`bytes`); the model being served always stays. (It was emptied when full: each model past
 * the 21st let the busiest go too, and each of them was loaded again at its next request.)
 */
const models = new Map<string, { model: ServedModel; bytes: number }>();
export const MODELS_KEPT = 21;
/** The estimated memory of the models in `models`. */
let modelBytes = 0;
/** A model being loaded (`readModel`), per tenant and version: requests asking for it meanwhile share it. Bound: one per model loading, removed once settled. */
const loadingModels = new SharedCalls<string, { model: ServedModel; bytes: number } | undefined>();

export const MODEL_SETTINGS = {
  /**
   * The most memory, as estimated, a container keeps loaded models in (MODEL_MEMORY_MB; default
   * a quarter of the Lambda function's memory, elsewhere of V8's heap limit). A model is
   * estimated at twice its artifact: its arrays are copies of the artifact's sections, and its item
   * and user lists and the maps made from them come besides.
   */
  memoryBytes: config().recs.modelMemoryBytes,
};

/** The endpoint's artifact, loaded once per container and version (again only once let go). */
export async function loadModel(console: ConsoleStore, blobs: BlobStore, tenant: string, version: number): Promise<ServedModel | undefined> {
  const key = `${tenant}/${version}`;
  if (unreadableModels.get(key)) return undefined;
  let m = models.get(key);
  if (m) {
    // The most recently served last: a Map keeps insertion order.
    models.delete(key);
  } else {
    // Requests that ask for it while it loads share that load: it is made in turns, other
    // requests served meanwhile, and each of those that asked for it made a copy of its own.
    const loaded = await loadingModels.run(key, () => readModel(console, blobs, tenant, version));
    if (!loaded) return undefined;
    // Kept already by a request that shared this load (the first to go on keeps it).
    m = models.get(key);
    if (m) models.delete(key);
    else {
      m = loaded;
      modelBytes += m.bytes;
      for (const [oldest, o] of models) {
        if (models.size < MODELS_KEPT && modelBytes <= MODEL_SETTINGS.memoryBytes) break;
        models.delete(oldest);
        modelBytes -= o.bytes;
      }
    }
  }
  models.set(key, m);
  return m.model;
}

/**
 * Cache: versions (tenant and version) whose artifact this code cannot read, served as without a
 * model and not read again. Bound: UNREADABLE_MODELS_KEPT versions, the least recently asked for
 * let go (until 2026-12-07 emptied whole when full: every such version, asked for on each of its
 * endpoint's requests, downloaded again).
 */
export const UNREADABLE_MODELS_KEPT = 1001;
const unreadableModels = new Lru<string, true>(UNREADABLE_MODELS_KEPT);

/**
 * A version's model read from its artifact, made in turns; undefined when there is no such version
 * or artifact, or when this code cannot read it: a format a newer version of the service wrote
 * (promoted while a deploy replaces this one's containers) or a damaged artifact. Such a version
 * is logged and remembered (`unreadableModels`): its requests are served as without a model
 * (`model: null`), where each of them failed and downloaded it again.
 */
async function readModel(console: ConsoleStore, blobs: BlobStore, tenant: string, version: number): Promise<{ model: ServedModel; bytes: number } | undefined> {
  const rec = await console.get<ModelVersion>(tenant, 'model', version);
  const bytes = rec ? await blobs.get(rec.artifact) : undefined;
  if (!bytes) return undefined;
  let a: ModelArtifact;
  try {
    a = await unpackModelInTurns(bytes);
  } catch (e) {
    logger.error('a model version this code cannot read (made by a newer version of the service, or damaged); its endpoint serves as without a model', { tenant, version, error: String(e) });
    unreadableModels.set(`${tenant}/${version}`, true);
    return undefined;
  }
  return { model: { ...a, itemIndex: new Map(a.items.map((id, i) => [id, i])), popular: modelPopularity(a) }, bytes: 2 * bytes.byteLength };
}

/** The model's 1,000 most popular items in training, scaled to 0-1. */
function modelPopularity(a: ModelArtifact): Map<number, number> {
  const out = new Map<number, number>();
  let max = 1e-9;
  for (const v of a.popularity) if (v > max) max = v;
  for (const i of topIndexes(a.popularity, 1000)) out.set(a.items[i] as number, (a.popularity[i] as number) / max);
  return out;
}

/** Popular items: the model's training popularity, else the tenant's latest events (`trendingEvents` of them; their stored count first, when `snapshots`). */
export async function popularity(events: EventStore, tenant: string, model: ServedModel | undefined, trendingEvents?: number, snapshots?: PopularitySnapshots): Promise<Map<number, number>> {
  return model ? model.popular : trendingScores(events, tenant, trendingEvents, snapshots);
}

export interface ServingConfig {
  endpoints: Endpoint[];
  eventTypes: EventType[];
}

/**
 * Cache: per console store, the shared reader of tenants' serving configs. Bound: one per store
 * (a container has one); the reader keeps no results, only reads in flight.
 */
const servingReads = new WeakMap<ConsoleStore, (tenant: string) => Promise<ServingConfig>>();

/**
 * The tenant's endpoints and event types, read for every request (a promotion serves at once)
 * but shared by concurrent requests: each gets a read that began after it arrived.
 */
export function servingConfig(c: ConsoleStore, tenant: string): Promise<ServingConfig> {
  let read = servingReads.get(c);
  if (!read) {
    read = freshReads(async (t) => {
      const cfg = await c.servingRecords(t);
      return { endpoints: cfg.endpoint as Endpoint[], eventTypes: cfg.event_type as EventType[] };
    });
    servingReads.set(c, read);
  }
  return read(tenant);
}

/** Cache: per console store, the shared reader of users' erasure markers. Bound: as `servingReads` (reads in flight only). */
const markerReads = new WeakMap<ConsoleStore, (key: string) => Promise<ErasedUser | undefined>>();

/**
 * A user's erasure marker (shared/domain/erasure.ts), or undefined when the user was never
 * erased: read by its key for every request that personalises (an erased user stops being
 * personalised at once), shared as `servingConfig` is. Until 2026-12-03 every request read every
 * marker of the tenant with the endpoints, a read that grew by a unit for every ~25 users erased.
 */
export function erasedUser(c: ConsoleStore, tenant: string, userId: string): Promise<ErasedUser | undefined> {
  let read = markerReads.get(c);
  if (!read) {
    read = freshReads((key) => {
      const at = key.indexOf('\u0000');
      return c.erasedUser(key.slice(0, at), key.slice(at + 1));
    });
    markerReads.set(c, read);
  }
  return read(`${tenant}\u0000${userId}`);
}
