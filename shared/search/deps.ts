import { blobs } from '../blob.ts';
import { eventStore, itemStore, popularitySnapshots } from '../data/index.ts';
import { embeddingProvider } from './providers.ts';
import type { SearchDeps } from './views.ts';

/** The container's search dependencies. */
export function searchDeps(): SearchDeps {
  return { items: itemStore(), events: eventStore(), blobs: blobs(), embedder: embeddingProvider(), popularSnapshots: popularitySnapshots() };
}
