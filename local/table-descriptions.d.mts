type Callback<T> = (err: Error | null | undefined, value?: T) => void;

/** The callback side of dynalite's table store (a LevelDB sublevel) that the cache wraps. */
export interface TableDb {
  get(name: string, callback: Callback<unknown>): void;
  put(name: string, value: unknown, callback?: (err?: Error | null) => void): void;
  del(name: string, callback?: (err?: Error | null) => void): void;
  batch(operations: { type: string; key: string; value?: unknown }[], callback?: (err?: Error | null) => void): void;
}

export function cacheTableDescriptions<T extends TableDb>(tableDb: T): T;
