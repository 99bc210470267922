/**
 * Coalesces concurrent reads of the same thing without ever serving an older answer than a
 * plain read would: every caller gets the result of a read that *started after it called*, so
 * whatever was acknowledged before the call is reflected. However many callers arrive, at most
 * one read runs and one waits to start after it.
 */
export class FreshRead<T> {
  private current: Promise<T> | undefined;
  private next: Promise<T> | undefined;

  constructor(private readonly read: () => Promise<T>) {}

  get(): Promise<T> {
    // A queued read starts after the running one ends, so after this call too.
    if (this.next) return this.next;
    if (this.current) {
      const settled = this.current.then(
        () => undefined,
        () => undefined,
      );
      this.next = settled.then(() => {
        this.next = undefined;
        return this.start();
      });
      return this.next;
    }
    return this.start();
  }

  /** True while nothing is running or queued. */
  get idle(): boolean {
    return !this.current && !this.next;
  }

  private start(): Promise<T> {
    const p = this.read();
    this.current = p;
    const clear = () => {
      if (this.current === p) this.current = undefined;
    };
    p.then(clear, clear);
    return p;
  }
}

/** `FreshRead` per key, for lookups such as a client by id; idle keys are dropped. */
export function freshReads<T>(read: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const byKey = new Map<string, FreshRead<T>>();
  return (key) => {
    let r = byKey.get(key);
    if (!r) {
      r = new FreshRead(() => read(key));
      byKey.set(key, r);
    }
    const reader = r;
    const p = reader.get();
    const drop = () => {
      if (reader.idle && byKey.get(key) === reader) byKey.delete(key);
    };
    p.then(drop, drop);
    return p;
  };
}
