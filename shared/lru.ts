/**
 * A bounded cache that, full, lets go of the entry least recently used: the one cache of the
 * per-tenant (and per-key) caches a container keeps. A Map keeps its keys in the order they were
 * set, so a hit moves its key last (delete, then set) and the first key is the least recently
 * used. Until 2026-12-07 several of those caches were emptied whole when full: past the bound,
 * every tenant's entry, busy ones too, was read again and again as one-off tenants came and went.
 *
 * A hit costs two Map operations besides the lookup. Expiry is the caller's: an entry it finds
 * stale it replaces (`set`) or removes (`delete`). Values are never undefined or null (a lookup's
 * undefined is a miss).
 */
export class Lru<K, V extends NonNullable<unknown>> {
  readonly #entries = new Map<K, V>();

  /** `max`: the entries held at most (at least 1). */
  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`an LRU holds at least one entry (asked for ${max})`);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The key's value, the key now the most recently used; undefined when it is not held. */
  get(key: K): V | undefined {
    const v = this.#entries.get(key);
    if (v !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, v);
    }
    return v;
  }

  /** The key's value without using it (its place is kept): for checks that are not a use. */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  /** Whether the key is held, without using it. */
  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Holds the value under the key, the most recently used; past `max`, the least recently used are let go. */
  set(key: K, value: V): this {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) {
      for (const oldest of this.#entries.keys()) {
        if (this.#entries.size <= this.max) break;
        this.#entries.delete(oldest);
      }
    }
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  /** The keys, least recently used first. */
  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }

  /** The keys and values, least recently used first (not a use). */
  entries(): IterableIterator<[K, V]> {
    return this.#entries.entries();
  }
}
