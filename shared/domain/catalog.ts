/**
 * The catalog port: the tenant's live catalog as serving reads it. Search offers it (its index
 * build and the changes since, shared/search/catalog.ts); recommendations use it for existence,
 * activity and content vectors, without knowing how search stores them.
 */
import type { ItemRecord, ItemWithVector } from './types.ts';

export interface Catalog {
  /** Dimensions of the item vectors. */
  readonly dims: number;
  /**
   * Served before its container read every change since the index build (a large change not built
   * yet, read for longer than a request waits: shared/search/views.ts): it may still hold items
   * deleted, deactivated or changed since, and lack items created or changed since. `current`
   * then reads the items' versions from the table.
   */
  readonly behind: boolean;
  /**
   * These items' current versions (undefined: deleted or unknown): read from the table when the
   * catalog is `behind`, else its own (no read).
   */
  current(ids: readonly number[]): Promise<(ItemRecord | undefined)[]>;
  /** An item's current version (active or not); undefined when it is deleted or unknown. */
  get(id: number): ItemWithVector | undefined;
  /** Whether the item exists now (active or not). */
  isLive(id: number): boolean;
  /**
   * Items by content similarity to the unit vector `q`: the `k` nearest of the live catalog, each
   * with its cosine to `q`, nearest first, whether an item is in the index build or changed since
   * (deleted items and superseded versions left out, inactive ones not).
   */
  nearest(q: Float32Array, k: number, visit: (id: number, cosine: number) => void): void;
  /** The ids of the `k` newest live items (highest ids: ids grow with creation) that `accept` takes, newest first. */
  newest(k: number, accept: (id: number) => boolean): number[];
  /** Whether the catalog holds a vector of its size for an item of it (as `get` gives it), wherever it keeps the item. */
  hasVector(item: ItemWithVector): boolean;
  /** into += Σ weights[j] × the vector of items[j] (items of this catalog); false when none has a vector of its size. */
  addVectors(items: readonly ItemWithVector[], weights: readonly number[], into: Float32Array): boolean;
  /** Cosine similarity to one item, for any number of others (0 without vectors): the shape the serving pipeline's diversity asks for. */
  similarity(a: { doc: ItemWithVector }): (b: { doc: ItemWithVector }) => number;
}
