import { blobs } from '../blob.ts';
import { stores } from '../data/index.ts';
import { embeddingProvider } from './providers.ts';
import type { SearchDeps } from './service.ts';

/** The container's search dependencies. */
export function searchDeps(): SearchDeps {
  const s = stores();
  return { items: s.items, events: s.events, blobs: blobs(), embedder: embeddingProvider() };
}
