/** What search offers as the catalog port (shared/domain/catalog.ts): its build and delta as one live catalog. */
import type { Catalog } from '../domain/catalog.ts';
import type { ItemRecord, ItemStore } from '../domain/types.ts';
import { TopK } from '../top-k.ts';
import type { PreparedDelta } from './delta.ts';
import type { SearchIndex } from './engine.ts';
import type { SearchDoc } from './types.ts';
import { addDocVectors, holdsVector, similarityIn } from './vectors.ts';

/**
 * An item's current version in a build and its delta, as one build of the same items would hold
 * it: the delta's when the item changed since the build (with a vector or not), none when it was
 * deleted since, else the build's.
 */
export function currentVersion(index: SearchIndex, delta: PreparedDelta, id: number): SearchDoc | undefined {
  const fresh = delta.get(id);
  if (fresh) return fresh;
  if (delta.masked.has(id)) return undefined;
  const i = index.byId.get(id);
  return i === undefined ? undefined : index.docs[i];
}

/** A tenant's index build and its delta, as one request sees them (`tenantView`). */
export class SearchView implements Catalog {
  readonly similarity: Catalog['similarity'];

  constructor(
    readonly index: SearchIndex,
    readonly delta: PreparedDelta,
    /**
     * Where the items are read from when the view was served before the container's read of the
     * changes since the build ended (a bounded wait, views.ts): then `behind`.
     */
    private readonly table?: { items: Pick<ItemStore, 'getMany'>; tenant: string },
  ) {
    // The delta's view of this build (its masked positions, `hiddenAt`); a no-op when bound to it.
    delta.bind(index);
    this.similarity = similarityIn(index, delta);
  }

  get dims(): number {
    return this.index.dims;
  }

  /**
   * When (ms) the newest vector the view holds was saved (`vectorSavedMs`): a first page's cursor
   * names it (`Cursor.vectorsAsOf`), and its later pages leave out the vectors saved after it.
   * Times the vectors themselves carry, not when the view read: every vector the page had is at
   * or before it, whether the view's read was whole or not, and no two clocks are compared.
   */
  get vectorsAsOf(): number {
    return Math.max(this.index.newestVectorMs, this.delta.latestVectorMs);
  }

  get behind(): boolean {
    return this.table !== undefined;
  }

  current(ids: readonly number[]): Promise<(ItemRecord | undefined)[]> {
    const { table } = this;
    if (!table) return Promise.resolve(ids.map((id) => this.get(id)));
    return table.items.getMany(table.tenant, ids);
  }

  get(id: number): SearchDoc | undefined {
    return currentVersion(this.index, this.delta, id);
  }

  isLive(id: number): boolean {
    return this.get(id) !== undefined;
  }

  /**
   * The k nearest of the build's and the delta's items together, each scored as a build scores it
   * (the int8 kernel: the delta's vectors are quantised as a build quantises them), so an item is
   * found, and scores, the same before and after the next build, and a request costs over a large
   * delta (right after an import) about what it costs over a build.
   */
  nearest(q: Float32Array, k: number, visit: (id: number, cosine: number) => void): void {
    const { index, delta } = this;
    const { hiddenAt } = delta;
    const accept = (i: number) => hiddenAt[i] === 0;
    const both = new TopK(k);
    index.nearest(q, k, accept).forEach((i, s) => both.push(index.ids[i] as number, s));
    if (delta.slotCount > 0) delta.nearest(q, k, () => true).forEach((slot, s) => both.push(delta.docAt(slot).id, s));
    both.forEachBest(visit);
  }

  newest(k: number, accept: (id: number) => boolean): number[] {
    const { index, delta } = this;
    const top = new TopK(k);
    // An id is its own score: `admits` turns most of a large catalog away before `accept` reads the item.
    const consider = (id: number) => {
      if (top.admits(id, -id) && accept(id)) top.push(id, id, -id);
    };
    for (let i = 0; i < index.ids.length; i++) if (delta.hiddenAt[i] === 0) consider(index.ids[i] as number);
    for (let s = 0; s < delta.slotCount; s++) if (delta.live[s] === 1) consider(delta.ids[s] as number);
    return top.bestKeys();
  }

  hasVector(item: SearchDoc): boolean {
    return holdsVector(this.index, this.delta, item);
  }

  addVectors(items: readonly SearchDoc[], weights: readonly number[], into: Float32Array): boolean {
    return addDocVectors(this.index, this.delta, items, weights, into);
  }
}
