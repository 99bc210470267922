/** The vectors a search ranks with besides the items': the query's, and the user's taste. */
import type { RecentEvent } from '../domain/types.ts';
import type { PreparedDelta } from './delta.ts';
import { HashingEmbedding, normalize } from './embedding.ts';
import type { SearchIndex } from './engine.ts';
import { idfOf } from './bm25f.ts';
import { addDocVectors, builtVectorAsOf, hadVectorBy } from './vectors.ts';
import { currentVersion } from './catalog.ts';
import type { SearchDeps } from './views.ts';
import { catalogItemId } from '../domain/item-ids.ts';
import { vectorSavedMs } from './types.ts';
import { Lru } from '../lru.ts';
import { SharedCalls } from '../concurrency.ts';

/** How many of the user's latest events make their taste. */
export const PROFILE_EVENTS = 50;

/**
 * Cache: query vectors of a remote embedding provider by query text (the local one is computed,
 * not cached). Bound: QUERY_VECTORS_KEPT queries, the least recently searched let go (until
 * 2026-12-07 emptied whole when full: every query, frequent ones too, embedded again, a call to
 * the provider each).
 */
export const QUERY_VECTORS_KEPT = 1001;
const queryVectors = new Lru<string, Float32Array>(QUERY_VECTORS_KEPT);
/** A query's embedding under way: searches of that query meanwhile share it (until 2026-12-08 each called the provider). */
const embedding = new SharedCalls<string, Float32Array | undefined>();

/** The query's vector (null for an empty query). */
export async function queryVector(deps: SearchDeps, index: SearchIndex, query: string, delta?: PreparedDelta): Promise<Float32Array | null> {
  if (!query.trim()) return null;
  // The local embedding weighs query words by their IDF (tf-idf instead of tf), over the build
  // and the delta together: the same vector before and after the next build.
  if (deps.embedder instanceof HashingEmbedding) {
    delta?.bind(index);
    const stats = delta ? delta.stats() : index.stats;
    return deps.embedder.embedOne(query, (t) => idfOf(stats.n, stats.df(t)));
  }
  const cached = queryVectors.get(query);
  if (cached) return cached;
  const v = await embedding.run(query, async () => {
    const [vector] = await deps.embedder.embed([query]);
    if (vector) queryVectors.set(query, vector);
    return vector;
  });
  return v ?? null;
}

/**
 * The user's taste: recency-weighted mean vector of the items of their latest events (newest
 * first, the first PROFILE_EVENTS of them; read by the caller, without those an erasure covers).
 */
export function profileOf(index: SearchIndex, delta: PreparedDelta, events: readonly RecentEvent[], vectorsAsOf?: number): Float32Array | null {
  const recent = events.slice(0, PROFILE_EVENTS);
  if (recent.length === 0) return null;
  const sum = new Float32Array(index.dims);
  // Each item's current version, as one build of the catalog would hold it: one changed since the
  // build without a vector, or deleted since, adds nothing (not the build's earlier copy). On a
  // later page, one whose vector was saved after its first page's (`vectorsAsOf`: until
  // 2026-12-05 such a vector moved the taste, and every score, between pages) adds the build's
  // vector of it when that one was saved by then (re-embedded since: the one the first page's
  // taste held; until 2026-12-07 none), else its own when it had one by then (`hadVectorBy`:
  // created or first embedded since the build, the first page's vector overwritten; until
  // 2026-12-07 none, as ranking scores it since ff98f2f), else nothing.
  const docs = recent.map((e) => {
    const id = catalogItemId(e.item_id);
    const d = id === undefined ? undefined : currentVersion(index, delta, id);
    if (!d || vectorsAsOf === undefined || vectorSavedMs(d) <= vectorsAsOf) return d;
    const row = builtVectorAsOf(index, d.id, vectorsAsOf);
    if (row !== undefined) return index.docs[row];
    return hadVectorBy(d, vectorsAsOf) ? d : undefined;
  });
  return addDocVectors(
    index,
    delta,
    docs,
    recent.map((_, k) => 1 / (1 + k / 10)),
    sum,
  )
    ? normalize(sum)
    : null;
}
