import { deadlineSignal, outsideDeadline } from '../deadline.ts';

/**
 * Group commit: items added while a write is under way wait for it to end and are then written
 * together (one call of `write` with all of them), and each caller's promise settles when its
 * own group is stored. Nothing is held back: a group starts as soon as the write before it ends,
 * and a lone item is written at once. Used by experiment exposures (shared/data/experiments.ts)
 * and search analytics (shared/data/search-analytics.ts): concurrent requests of a container
 * share their writes. A `write` that answers an outcome per item fails only the callers of the
 * items it names rejected (the others' promises resolve); one that throws fails the whole group
 * (but the items it answered stored already). The next group starts once `write` ends.
 */
export class GroupCommit<T> {
  private waiting: { item: T; signal: AbortSignal | undefined; done: () => void; fail: (e: unknown) => void }[] = [];
  private running = false;

  constructor(
    /**
     * Writes the group; it may answer each item's outcome (in the order given), and may answer an
     * item stored before it ends (`stored(k)`: its caller resolves then, whatever it answers after).
     */
    private readonly write: (items: T[], stored: (k: number) => void) => Promise<void | readonly PromiseSettledResult<unknown>[]>,
    /** Items written in one group at most. */
    private readonly max = 100,
  ) {}

  /**
   * Its promise settles when the item's group is stored. The writes run outside any request's
   * deadline (they are every waiting request's): until 2026-12-05 they ran within the deadline of
   * the request whose item started them, and once it passed every group after failed, the searches
   * and exposures of requests answered 200 with them. An item whose own request's deadline passed
   * before its group starts is not written (`DeadlinePassed`, as any call of it then).
   */
  add(item: T): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.waiting.push({ item, signal: deadlineSignal(), done, fail });
      if (!this.running) void outsideDeadline(() => this.drain());
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiting.length > 0) {
      const group: typeof this.waiting = [];
      for (const w of this.waiting.splice(0, this.max)) {
        if (w.signal?.aborted) w.fail(w.signal.reason);
        else group.push(w);
      }
      if (group.length === 0) continue;
      // Items answered early (`stored`) are not answered again.
      const answered = new Set<number>();
      const stored = (k: number) => {
        if (answered.has(k) || !group[k]) return;
        answered.add(k);
        group[k].done();
      };
      try {
        const outcomes = await this.write(
          group.map((g) => g.item),
          stored,
        );
        group.forEach((g, k) => {
          if (answered.has(k)) return;
          const o = outcomes?.[k];
          if (o?.status === 'rejected') g.fail(o.reason);
          else g.done();
        });
      } catch (e) {
        group.forEach((g, k) => {
          if (!answered.has(k)) g.fail(e);
        });
      }
    }
    this.running = false;
  }
}
