/** What search offers as the catalog port (shared/domain/catalog.ts): its build and delta as one live catalog. */
import type { Catalog } from '../domain/catalog.ts';
import type { PreparedDelta } from './delta.ts';
import { cosine } from './embedding.ts';
import type { SearchIndex } from './engine.ts';
import type { SearchDoc } from './types.ts';
import { addDocVectors, similarityIn } from './vectors.ts';

/** A tenant's index build and its delta, as one request sees them (`tenantView`). */
export class SearchView implements Catalog {
  readonly similarity: Catalog['similarity'];

  constructor(
    readonly index: SearchIndex,
    readonly delta: PreparedDelta,
  ) {
    this.similarity = similarityIn(index, delta);
  }

  get dims(): number {
    return this.index.dims;
  }

  get(id: number): SearchDoc | undefined {
    const fresh = this.delta.get(id);
    if (fresh) return fresh;
    if (this.delta.masked.has(id)) return undefined;
    const i = this.index.byId.get(id);
    return i === undefined ? undefined : this.index.docs[i];
  }

  isLive(id: number): boolean {
    return this.get(id) !== undefined;
  }

  nearest(q: Float32Array, k: number, visit: (id: number, cosine: number) => void): void {
    const { index, delta } = this;
    const accept = delta.masked.size === 0 ? () => true : (i: number) => !delta.masked.has(index.ids[i] as number);
    index.nearest(q, k, accept).forEach((i, s) => visit(index.ids[i] as number, s));
    for (const d of delta.docs) visit(d.id, cosine(d.vector, q));
  }

  addVectors(items: readonly SearchDoc[], weights: readonly number[], into: Float32Array): boolean {
    return addDocVectors(this.index, items, weights, into);
  }
}
