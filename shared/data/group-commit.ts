/**
 * Group commit: items added while a write is under way wait for it to end and are then written
 * together (one call of `write` with all of them), and each caller's promise settles when its
 * own group is stored. Nothing is held back: a group starts as soon as the write before it ends,
 * and a lone item is written at once. Used by experiment exposures (shared/data/experiments.ts)
 * and search analytics (shared/data/search-analytics.ts): concurrent requests of a container
 * share their writes.
 */
export class GroupCommit<T> {
  private waiting: { item: T; done: () => void; fail: (e: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    /** Items written in one group at most. */
    private readonly max = 100,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.waiting.push({ item, done, fail });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, this.max);
      try {
        await this.write(group.map((g) => g.item));
        for (const g of group) g.done();
      } catch (e) {
        for (const g of group) g.fail(e);
      }
    }
    this.running = false;
  }
}
